package testenv

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPrivilegeMissing(t *testing.T) {
	assert.Equal(t, "loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000",
		Tracing.missing(1000))
	assert.Equal(t, "creating a network namespace needs root (CAP_SYS_ADMIN); running as euid 65534",
		NetNS.missing(65534))
	assert.Empty(t, PIDNS.missing(0), "root lacks nothing")
}

func TestUntil(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	calls := 0
	err := Until(deadline, time.Millisecond, "the third call", func() (bool, error) {
		calls++
		return calls == 3, nil
	})
	assert.NoError(t, err)
	assert.Equal(t, 3, calls, "polls until the condition holds, then stops")

	broken := errors.New("cannot look")
	err = Until(deadline, time.Millisecond, "a look", func() (bool, error) { return false, broken })
	assert.ErrorIs(t, err, broken)
	assert.EqualError(t, err, "waiting for a look: cannot look")

	calls = 0
	err = Until(time.Now().Add(-time.Second), time.Millisecond, "never", func() (bool, error) { calls++; return false, nil })
	assert.ErrorIs(t, err, ErrTimedOut)
	assert.EqualError(t, err, "timed out waiting for never")
	assert.Equal(t, 1, calls, "a past deadline still looks once")
}
