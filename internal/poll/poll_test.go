package poll

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

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
