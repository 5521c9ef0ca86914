package tracers

import (
	"errors"
	"os"
	"time"
)

// BatchReader is implemented by Tracers that read many events per call;
// every BPF mechanism's does. ReadEvents below uses it when present.
type BatchReader interface {
	// ReadEvents fills dst with the events available, waiting until
	// deadline only for the first (as ReadEvent does). It returns how many
	// it stored and the error that stopped it: os.ErrDeadlineExceeded
	// only when n == 0; other errors (as ReadEvent's) also after n events,
	// which are valid, as io.Reader's are.
	ReadEvents(dst []Event, deadline time.Time) (n int, err error)
}

// ReadEvents reads up to len(dst) events from t into dst, waiting until
// deadline for the first only: with t's BatchReader, or with ReadEvent
// calls otherwise. Results and errors are as BatchReader's.
func ReadEvents(t Tracer, dst []Event, deadline time.Time) (int, error) {
	if br, ok := t.(BatchReader); ok {
		return br.ReadEvents(dst, deadline)
	}
	return readEach(t.ReadEvent, dst, deadline)
}

// readEach is a batch read built from single reads: the first waits until
// deadline, the others only take what is there.
func readEach(read func(time.Time) (Event, error), dst []Event, deadline time.Time) (int, error) {
	n := 0
	for n < len(dst) {
		ev, err := read(deadline)
		if n > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		dst[n] = ev
		n++
		deadline = noWait
	}
	return n, nil
}

// noWait is a deadline already past: a read takes only what is there.
var noWait = time.Unix(1, 0)

// ReadEvents locks and sets the ring buffer's deadline once per batch
// instead of once per event.
func (t *tracer) ReadEvents(dst []Event, deadline time.Time) (int, error) {
	return readEach(t.readRecord, dst, deadline)
}

// readRecord is ReadEvent; it sets the ring's deadline only when it changes.
func (t *tracer) readRecord(deadline time.Time) (Event, error) {
	if !deadline.Equal(t.deadline) {
		t.events.SetDeadline(deadline)
		t.deadline = deadline
	}
	if err := t.events.ReadInto(&t.record); err != nil {
		return Event{}, err
	}
	ev, function, err := decodeEvent(t.record.RawSample)
	if err != nil {
		return Event{}, err
	}
	return ev, t.fns.fill(&ev, function)
}
