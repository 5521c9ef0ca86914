package tracers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
)

// Event is one traced call whose latency reached Config.Threshold.
type Event struct {
	// Function is the traced function called (one of
	// Config.TracedFunctions).
	Function string
	PID      uint32 // thread ID of the caller
	TGID     uint32 // process ID (thread group) of the caller
	// Requested is vfs_read's count argument, bytes; unknown for any
	// other function.
	Requested uint64
	// Result is the return value: for vfs_read bytes read or -errno; for
	// another function its return register read as its BTF type
	// (sign-extended if signed), unknown where that is no integer, enum
	// or pointer.
	Result  int64
	Latency time.Duration // from entry to return of the function
	Comm    string        // the caller's task name
	// Unknown lists the fields the mechanism could not observe for this
	// call (Capabilities.OfFunction); they read 0 and are not
	// measurements. Empty for every BPF mechanism's vfs_read calls.
	Unknown Fields
}

// rawEvent is struct event of bpf/vfsread.h, 56 bytes.
type rawEvent struct {
	PID       uint32
	TGID      uint32
	Requested uint64
	Result    int64
	LatencyNS uint64
	Comm      [16]byte
	Function  uint32 // 4 bytes of padding follow
}

// rawStats is struct stats of bpf/vfsread.h, one CPU's copy.
type rawStats struct {
	Calls, Slow, Errors, Dropped, Lost, Overwritten uint64
}

// rawEventSize is the size of struct event of bpf/vfsread.h.
const rawEventSize = 56

// decodeEvent decodes one ring buffer record, written in order (the BPF
// object's, see records.go), field by field (encoding/binary's reflection
// cost several µs per event in the guest, a consumer's largest share,
// notes of branch cli), and returns the index of its function.
func decodeEvent(record []byte, order binary.ByteOrder) (Event, uint32, error) {
	if len(record) != rawEventSize {
		return Event{}, 0, fmt.Errorf("event record is %d bytes, want %d", len(record), rawEventSize)
	}
	comm, _, _ := bytes.Cut(record[32:48], []byte{0})
	return Event{
		PID:       order.Uint32(record[0:4]),
		TGID:      order.Uint32(record[4:8]),
		Requested: order.Uint64(record[8:16]),
		Result:    int64(order.Uint64(record[16:24])),
		Latency:   time.Duration(order.Uint64(record[24:32])),
		Comm:      string(comm),
	}, order.Uint32(record[48:52]), nil
}

// Drain detaches t and returns the events left and the counters read after
// them: stats.Slow == len(events) + stats.Dropped for a correct mechanism.
// It waits up to timeout for events of calls in flight at detach.
func Drain(t Tracer, timeout time.Duration) (events []Event, stats Stats, err error) {
	return DrainRest(t, 0, timeout)
}

// DrainRest is Drain for a caller that already took alreadyRead events
// with ReadEvent while tracing: it returns only the events left, and for a
// correct mechanism stats.Slow == alreadyRead + len(events) + stats.Dropped.
func DrainRest(t Tracer, alreadyRead uint64, timeout time.Duration) (events []Event, stats Stats, err error) {
	if err := t.Detach(); err != nil {
		return nil, Stats{}, fmt.Errorf("detach: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		if events, err = readAvailable(t, events); err != nil {
			return events, Stats{}, err
		}
		if stats, err = t.Stats(); err != nil {
			return events, stats, err
		}
		if stats.Slow <= alreadyRead+uint64(len(events))+stats.Dropped || time.Now().After(deadline) {
			return events, stats, nil
		}
		ev, err := t.ReadEvent(deadline)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return events, stats, err
		}
		events = append(events, ev)
	}
}

// readAvailable appends the events already in the ring buffer.
func readAvailable(t Tracer, events []Event) ([]Event, error) {
	for {
		ev, err := t.ReadEvent(time.Now())
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
}
