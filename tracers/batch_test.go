package tracers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"
	"unsafe"
)

// TestDecodeEventMatchesLayout encodes a rawEvent (whose layout
// TestLayoutsMatchBTF checks) with encoding/binary and decodes it field by
// field.
func TestDecodeEventMatchesLayout(t *testing.T) {
	raw := rawEvent{PID: 7, TGID: 5, Requested: 1 << 40, Result: -512, LatencyNS: 123456789, Function: 3}
	copy(raw.Comm[:], "reader")
	if n := int(unsafe.Sizeof(raw)); n != rawEventSize {
		t.Fatalf("rawEvent is %d bytes, rawEventSize %d", n, rawEventSize)
	}
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, raw); err != nil {
		t.Fatal(err)
	}
	buf.Write(make([]byte, rawEventSize-buf.Len())) // the struct's padding
	got, function, err := decodeEvent(buf.Bytes())
	want := Event{PID: 7, TGID: 5, Requested: 1 << 40, Result: -512, Latency: 123456789, Comm: "reader"}
	if err != nil || got != want || function != 3 {
		t.Errorf("decodeEvent = %+v, %d, %v; want %+v, 3", got, function, err, want)
	}
	if _, _, err := decodeEvent(buf.Bytes()[:40]); err == nil {
		t.Error("decodeEvent of 40 bytes: no error")
	}
}

type eventSource struct {
	Tracer
	left int
	err  error
	hits []time.Time // deadlines seen
}

func (s *eventSource) ReadEvent(deadline time.Time) (Event, error) {
	s.hits = append(s.hits, deadline)
	if s.left > 0 {
		s.left--
		return Event{PID: uint32(s.left)}, nil
	}
	if s.err != nil {
		return Event{}, s.err
	}
	return Event{}, os.ErrDeadlineExceeded
}

func TestReadEvents(t *testing.T) {
	deadline := time.Now().Add(time.Second)
	src := &eventSource{left: 3}
	dst := make([]Event, 2)
	if n, err := ReadEvents(src, dst, deadline); n != 2 || err != nil || dst[1].PID != 1 {
		t.Errorf("first batch = %d, %v, %+v; want 2 events", n, err, dst)
	}
	if !src.hits[0].Equal(deadline) || !src.hits[1].Equal(noWait) {
		t.Errorf("deadlines %v: want the caller's for the first event only", src.hits)
	}
	if n, err := ReadEvents(src, dst, deadline); n != 1 || err != nil {
		t.Errorf("second batch = %d, %v; want the last event", n, err)
	}
	if n, err := ReadEvents(src, dst, deadline); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("empty batch = %d, %v; want the deadline error", n, err)
	}
	closed := &eventSource{left: 1, err: os.ErrClosed}
	if n, err := ReadEvents(closed, dst, deadline); n != 1 || !errors.Is(err, os.ErrClosed) {
		t.Errorf("batch ending in an error = %d, %v; want 1 event and the error", n, err)
	}
}
