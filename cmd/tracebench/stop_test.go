package main

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
)

// idleTracer has no events: ReadEvent waits for its deadline, having
// first said on reading that it waits, if someone listens.
type idleTracer struct {
	closed  atomic.Int32
	reading chan struct{}
}

func (t *idleTracer) ReadEvent(deadline time.Time) (tracers.Event, error) {
	select {
	case t.reading <- struct{}{}:
	default:
	}
	time.Sleep(time.Until(deadline))
	return tracers.Event{}, os.ErrDeadlineExceeded
}
func (t *idleTracer) Stats() (tracers.Stats, error) { return tracers.Stats{}, nil }
func (t *idleTracer) Detach() error                 { return nil }
func (t *idleTracer) Close() error                  { t.closed.Add(1); return nil }

func TestStopCause(t *testing.T) {
	tests := []struct {
		cause error
		want  error
	}{
		{nil, nil},
		{context.DeadlineExceeded, nil},
		{signalStop{syscall.SIGINT}, nil},
		{signalStop{syscall.SIGTERM}, signalStop{syscall.SIGTERM}},
		{signalStop{syscall.SIGHUP}, signalStop{syscall.SIGHUP}},
		{errOutputGone, errOutputGone},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancelCause(context.Background())
		if tt.cause != nil {
			cancel(tt.cause)
		}
		assert.Equal(t, tt.want, stopCause(ctx), "cause %v", tt.cause)
		cancel(nil)
	}
	assert.Equal(t, "SIGHUP received: tracing stopped early, the tracer is closed", signalStop{syscall.SIGHUP}.Error())
}

// TestGuardCloseWhileWaiting: an abort closes the tracer within one
// guardSlice although the run waits for events with a far deadline, and
// the run then parks instead of reporting the closed tracer.
func TestGuardCloseWhileWaiting(t *testing.T) {
	parked := make(chan struct{})
	g := guard{onPark: func() { close(parked) }}
	tr := &idleTracer{reading: make(chan struct{})}
	require.NoError(t, g.start(nil, func() (tracers.Tracer, error) { return tr, nil }))
	read := make(chan error, 1)
	go func() {
		for {
			_, err := g.ReadEvent(time.Now().Add(time.Hour))
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				read <- err
				return
			}
		}
	}()
	select {
	case <-tr.reading: // the reader waits in the tracer, under the guard's lock
	case <-time.After(time.Minute):
		t.Fatal("the reader never called the tracer's ReadEvent")
	}
	closed := make(chan struct{})
	go func() { g.close(); close(closed) }()
	// One slice, and scheduling on a busy machine; the reader asked for an hour.
	select {
	case <-closed:
	case <-time.After(10 * guardSlice):
		t.Fatalf("close still waits for the reader after %v: the guard holds its lock longer than a slice", 10*guardSlice)
	}
	assert.Equal(t, int32(1), tr.closed.Load())
	select {
	case <-parked:
	case err := <-read:
		t.Errorf("the run goes on after an abort: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the reader neither parked nor returned after the abort")
	}
	require.NoError(t, g.Close(), "the run's own Close after an abort")
	assert.Equal(t, int32(1), tr.closed.Load(), "closed once")
	assert.EqualError(t, g.start(nil, func() (tracers.Tracer, error) { return tr, nil }), "aborted",
		"no tracer starts after an abort")
}

// blockedWriter blocks every write until released, as a pipe nobody reads.
type blockedWriter struct{ release chan struct{} }

func (w blockedWriter) Write(p []byte) (int, error) { <-w.release; return len(p), nil }

func TestTryFlushIsBounded(t *testing.T) {
	w := blockedWriter{make(chan struct{})}
	defer close(w.release)
	out := newOutput(w)
	_, err := out.Write([]byte("EVENT\n"))
	require.NoError(t, err)
	started := time.Now()
	out.tryFlush(50 * time.Millisecond)
	assert.Less(t, time.Since(started), time.Second)
	(*output)(nil).tryFlush(time.Second) // no run: nothing to flush
}

func TestOutputErrorsAreOutputErrors(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close()
	defer w.Close()
	out := newOutput(w)
	_, err = out.Write([]byte("EVENT\n"))
	require.NoError(t, err, "buffered")
	err = out.Flush()
	assert.ErrorAs(t, err, new(outputError))
	assert.ErrorIs(t, err, syscall.EPIPE)
	assert.Contains(t, err.Error(), "writing the output failed")
}
