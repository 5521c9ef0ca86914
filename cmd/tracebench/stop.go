package main

// How a trace run ends other than by its --duration: every way out closes
// the tracer (BPF links and programs, ftrace-graph's tracefs instances and
// tracing_thresh) and flushes the output where it still can.
//
//   - the first SIGINT (Ctrl-C) stops tracing as asked: drain, summary,
//     exit 0; the first signal of any kind is acknowledged on stderr;
//   - the first SIGTERM or SIGHUP stops it the same way but exits 1, with a
//     line naming the signal;
//   - the output's reader gone (EPIPE, SIGPIPE, a pipe with no reader left,
//     a hung-up terminal) or any write error on stdout stops it at once:
//     no drain, exit 1;
//   - SIGQUIT, or any second signal (e.g. a second Ctrl-C while draining or
//     while stdout blocks), aborts: abortRun closes the tracer from the
//     signal goroutine, since the run's own goroutine may be blocked in a
//     write, flushes what it can and exits 1.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"tracebench/histogram"
	"tracebench/tracers"
)

const (
	// outputBuffer is the size of the stdout buffer: ~700 text events.
	outputBuffer = 64 << 10
	// abortFlushTimeout bounds the last flush of an abort: stdout may be a
	// pipe nobody reads.
	abortFlushTimeout = time.Second
)

// signalStop is the cause of a run's context cancelled by a signal.
type signalStop struct{ sig syscall.Signal }

func (s signalStop) Error() string {
	return fmt.Sprintf("%s received: tracing stopped early, the tracer is closed", unix.SignalName(s.sig))
}

// outputError is a failed write or flush of stdout; its reader is gone.
type outputError struct{ err error }

func (e outputError) Error() string {
	return fmt.Sprintf("writing the output failed (%v): tracing stopped, the tracer is closed", e.err)
}

func (e outputError) Unwrap() error { return e.err }

// errOutputGone is the cause of a run whose stdout lost its reader while
// nothing was being written (watchOutput) or that got SIGPIPE.
var errOutputGone = outputError{errors.New("its reader exited")}

// stopCause returns what ended the run early and must be reported, or nil
// for a normal end (--duration, the first Ctrl-C).
func stopCause(ctx context.Context) error {
	cause := context.Cause(ctx)
	var s signalStop
	switch {
	case errors.As(cause, &s) && s.sig == syscall.SIGINT:
		return nil
	case errors.As(cause, &s), errors.As(cause, new(outputError)):
		return cause
	}
	return nil
}

// watchSignals ends the run of ctx (cancel) on the first stop signal and
// aborts it (abortRun) on SIGQUIT or a second one. A SIGHUP ignored when
// the process started (nohup) stays ignored.
func watchSignals(cancel context.CancelCauseFunc, stderr io.Writer) {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGPIPE}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	go func() {
		stopping := false
		for sig := range ch {
			s := sig.(syscall.Signal)
			switch {
			case s == syscall.SIGPIPE: // raised by our own writes again and again
				cancel(errOutputGone)
			case s == syscall.SIGQUIT:
				abortRun(stderr, fmt.Errorf("SIGQUIT received: tracing aborted without the summary, the tracer is closed"))
			case stopping:
				abortRun(stderr, fmt.Errorf("second %s received while finishing: tracing aborted without the summary, "+
					"the tracer is closed", unix.SignalName(s)))
			default:
				stopping = true
				fmt.Fprintf(stderr, "tracebench: %s received: finishing; another signal aborts\n", unix.SignalName(s))
				cancel(signalStop{s})
			}
		}
	}()
}

// watchOutput ends the run of ctx when stdout is a pipe, socket or
// terminal that loses its reader (poll(2) reports POLLERR or POLLHUP), so
// that `| head -1` ends a run that prints nothing more.
func watchOutput(stdout *os.File, cancel context.CancelCauseFunc) {
	raw, err := stdout.SyscallConn()
	if err != nil {
		return
	}
	go raw.Control(func(fd uintptr) {
		// Events 0: poll reports only POLLERR, POLLHUP (and POLLNVAL); a
		// regular file reports none and this blocks until exit.
		fds := []unix.PollFd{{Fd: int32(fd)}}
		for {
			n, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				cancel(errOutputGone)
			}
			return
		}
	})
}

// abortRun closes the running tracer, if any, flushes the output if that
// is quick, says why and exits. It waits for the run's current use of the
// tracer (a Start, or one guardSlice of waiting for an event).
func abortRun(stderr io.Writer, why error) {
	running.close().tryFlush(abortFlushTimeout)
	fmt.Fprintf(stderr, "tracebench: %v\n", why)
	os.Exit(exitError)
}

// running is the process's one trace run, as abortRun finds it.
var running guard

// guardSlice bounds how long the guard holds its lock for one ReadEvent:
// an abort waits at most that long (ReadEvent cannot be woken otherwise
// without Close, which would race with the run's Stats).
const guardSlice = 100 * time.Millisecond

// guard is a tracers.Tracer shared by the run and abortRun: the run uses
// it through the Tracer methods, abortRun closes it between two of them.
// A ReadEvent may return os.ErrDeadlineExceeded before its deadline, every
// guardSlice; DrainRest and stream wait again then.
type guard struct {
	mu     sync.Mutex
	tr     tracers.Tracer // nil before start and after close
	closed bool           // by abortRun: start must not leave a tracer
	out    *output        // what abortRun flushes, nil outside a run
	onPark func()         // tests: called as the run parks after an abort
}

// start runs start (a tracer's Start) under the guard's lock and keeps
// the tracer it returns.
func (g *guard) start(out *output, start func() (tracers.Tracer, error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errors.New("aborted")
	}
	tr, err := start()
	if err != nil {
		return err
	}
	g.tr, g.out = tr, out
	return nil
}

// noWait is a deadline in the past: ReadEvent(noWait) returns what the
// ring buffer holds without waiting, and without reading the clock, which
// costs a system call where the kernel's clocksource has no vDSO path
// (HPET: ~10 µs per call in the TCG guest, as much as a traced read).
var noWait = time.Unix(0, 0)

func (g *guard) ReadEvent(deadline time.Time) (tracers.Event, error) {
	if !deadline.Equal(noWait) {
		if slice := time.Now().Add(guardSlice); deadline.IsZero() || deadline.After(slice) {
			deadline = slice
		}
	}
	g.lock()
	defer g.mu.Unlock()
	if g.tr == nil {
		return tracers.Event{}, os.ErrClosed
	}
	return g.tr.ReadEvent(deadline)
}

func (g *guard) Stats() (tracers.Stats, error) {
	g.lock()
	defer g.mu.Unlock()
	if g.tr == nil {
		return tracers.Stats{}, os.ErrClosed
	}
	return g.tr.Stats()
}

func (g *guard) Detach() error {
	g.lock()
	defer g.mu.Unlock()
	if g.tr == nil {
		return os.ErrClosed
	}
	return g.tr.Detach()
}

// lock takes the guard's lock for the run. After an abort the run's
// goroutine parks here instead: abortRun says why and exits, and the run
// must not report the closed tracer as its own error first.
func (g *guard) lock() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		if g.onPark != nil {
			g.onPark()
		}
		select {}
	}
}

// Close closes the tracer; the run's deferred Close after an abort, or an
// abort after the run, finds nothing to close.
func (g *guard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var err error
	if g.tr != nil {
		err = g.tr.Close()
	}
	g.tr, g.out = nil, nil
	return err
}

// close is abortRun's Close: it also keeps a run that has not started its
// tracer yet from starting one. It returns the run's output, if any.
func (g *guard) close() *output {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	out := g.out
	if g.tr != nil {
		g.tr.Close()
	}
	g.tr, g.out = nil, nil
	return out
}

// output is the run's stdout, buffered: an event line is not a write(2)
// of its own (a consumer that writes each one cannot keep up with a fast
// reader), and the run flushes it whenever the ring buffer is empty and
// at the end. Its lock lets abortRun flush it unless a write is stuck.
type output struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newOutput(w io.Writer) *output {
	return &output{w: bufio.NewWriterSize(w, outputBuffer)}
}

// Write buffers p; an error is an outputError.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.w.Write(p)
	return n, wrapOutput(err)
}

// Flush writes what is buffered; an error is an outputError.
func (o *output) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return wrapOutput(o.w.Flush())
}

func wrapOutput(err error) error {
	if err == nil {
		return nil
	}
	return outputError{err}
}

// tryFlush flushes unless a write holds the output or the flush takes
// longer than timeout (it is then left to the process's exit).
func (o *output) tryFlush(timeout time.Duration) {
	if o == nil || !o.mu.TryLock() {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer o.mu.Unlock()
		o.w.Flush()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// aggregator returns the guard as a tracers.Aggregator if its tracer is
// one.
func (g *guard) aggregator() (tracers.Aggregator, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.tr.(tracers.Aggregator)
	return g, ok
}

func (g *guard) Histogram() (histogram.Log2, error) {
	return withAggregator(g, tracers.Aggregator.Histogram)
}

func (g *guard) PerTGID() (tracers.TGIDTable, error) {
	return withAggregator(g, tracers.Aggregator.PerTGID)
}

func withAggregator[T any](g *guard, read func(tracers.Aggregator) (T, error)) (T, error) {
	g.lock()
	defer g.mu.Unlock()
	agg, ok := g.tr.(tracers.Aggregator)
	if !ok {
		var zero T
		return zero, os.ErrClosed
	}
	return read(agg)
}
