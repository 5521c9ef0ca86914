package poll

import (
	"errors"
	"sync/atomic"
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

// Every stops when f says so; stop waits for f's goroutine (the race
// detector sees calls read after it), and may be called twice.
func TestEvery(t *testing.T) {
	calls, third := 0, make(chan struct{})
	stop := Every(time.Millisecond, func() bool {
		calls++
		if calls == 3 {
			close(third)
		}
		return calls < 3
	})
	<-third
	stop()
	assert.Equal(t, 3, calls, "f returned false at its third call")

	var runs atomic.Int64
	stop = Every(time.Millisecond, func() bool { runs.Add(1); return true })
	assert.NoError(t, Until(time.Now().Add(time.Minute), time.Millisecond, "two runs",
		func() (bool, error) { return runs.Load() >= 2, nil }))
	stop()
	stop() // a second stop is a no-op
}
