// Package poll is the bounded wait on a condition, and the periodic
// sampler, that binaries and tests share. It imports neither testing nor testify, so the packages every
// binary links (workload among them) can use it.
package poll

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrTimedOut is wrapped by Until's error when its deadline passed.
var ErrTimedOut = errors.New("timed out")

// Until checks cond every interval until it holds or deadline passes. It
// returns nil once cond holds, else cond's error or one wrapping
// ErrTimedOut, naming what was awaited.
func Until(deadline time.Time, interval time.Duration, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w waiting for %s", ErrTimedOut, what)
		}
		time.Sleep(interval)
	}
}

// Every calls f every interval, from a goroutine of its own, until f
// returns false or stop is called; stop returns once f no longer runs.
func Every(interval time.Duration, f func() bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if !f() {
					return
				}
			}
		}
	})
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}
