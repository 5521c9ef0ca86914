package bench

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tracebench/tracers"
)

// consumerPoll bounds how long the consumer takes to notice that it
// should stop: it cannot be woken otherwise without closing the tracer
// under it, and closing would race with its next ReadEvent call.
const consumerPoll = 50 * time.Millisecond

// consumer reads events from a tracer until halted.
type consumer struct {
	events atomic.Uint64
	stop   atomic.Bool
	done   chan error // the read error that ended it, or nil
	once   sync.Once
	err    error
}

func consume(tr tracers.Tracer) *consumer {
	c := &consumer{done: make(chan error, 1)}
	go func() {
		for !c.stop.Load() {
			_, err := tr.ReadEvent(time.Now().Add(consumerPoll))
			switch {
			case err == nil:
				c.events.Add(1)
			case !errors.Is(err, os.ErrDeadlineExceeded):
				c.done <- err
				return
			}
		}
		c.done <- nil
	}()
	return c
}

// halt stops the consumer and returns the error that ended it, if any.
// It may be called more than once.
func (c *consumer) halt() error {
	c.once.Do(func() {
		c.stop.Store(true)
		c.err = <-c.done
	})
	return c.err
}

// fakeTracer serves a fixed number of events, then times out, or fails
// with err (closing failed) once they are served.
type fakeTracer struct {
	tracers.Tracer
	left   int
	err    error
	failed chan struct{}
}

func (f *fakeTracer) ReadEvent(deadline time.Time) (tracers.Event, error) {
	if f.left > 0 {
		f.left--
		return tracers.Event{}, nil
	}
	if f.err != nil {
		close(f.failed)
		return tracers.Event{}, f.err
	}
	time.Sleep(time.Until(deadline)) // what a real ring buffer does when empty
	return tracers.Event{}, os.ErrDeadlineExceeded
}

func TestConsumer(t *testing.T) {
	c := consume(&fakeTracer{left: 5})
	for c.events.Load() < 5 {
		runtime.Gosched() // the events are served without delay
	}
	if err := c.halt(); err != nil {
		t.Fatalf("halt: %v", err)
	}
	if n := c.events.Load(); n != 5 {
		t.Errorf("consumed %d events, want 5", n)
	}
	if err := c.halt(); err != nil {
		t.Errorf("second halt: %v", err)
	}

	broken := errors.New("decode event: record is 40 bytes, want 48")
	fake := &fakeTracer{left: 1, err: broken, failed: make(chan struct{})}
	c = consume(fake)
	<-fake.failed
	if err := c.halt(); !errors.Is(err, broken) {
		t.Errorf("halt after a read error = %v, want %v", err, broken)
	}
}
