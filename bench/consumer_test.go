package bench

import (
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"tracebench/tracers"
)

// eventBatch is how many events drain reads per call, as a CLI would.
const eventBatch = 256

// drain reads every event in t's ring buffer, t detached, and says how
// long that took: the consumer's cost, apart from the loop's.
func drain(t tracers.Tracer) (events uint64, took time.Duration, err error) {
	buf := make([]tracers.Event, eventBatch)
	begin := time.Now()
	for {
		n, err := tracers.ReadEvents(t, buf, noWait)
		events += uint64(n)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return events, time.Since(begin), nil
		}
		if err != nil {
			return events, time.Since(begin), err
		}
	}
}

// noWait is a deadline already past: a read takes only what is there.
var noWait = time.Unix(1, 0)

// recordBytes is what one event takes in a BPF ring buffer: the 48-byte
// struct event and the ring's 8-byte record header.
const recordBytes = 48 + 8

// ringFor is the ring buffer size that holds events records: a power of two
// and a multiple of the page size, as the kernel wants.
func ringFor(events int) int {
	need := max(events*recordBytes, os.Getpagesize())
	return 1 << bits.Len(uint(need-1))
}

// timedReads is the loop's iteration count, from -test.benchtime Nx: a
// ring sized from it holds every event (b.N is not known before b.Loop).
func timedReads() (int, error) {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return 0, errors.New("no -test.benchtime flag")
	}
	return readsOf(f.Value.String())
}

func readsOf(benchtime string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(benchtime, "x"))
	if !strings.HasSuffix(benchtime, "x") || err != nil || n < 1 {
		return 0, fmt.Errorf("-test.benchtime %q is not an iteration count like 50000x,"+
			" which sizes the ring buffer so that no event is dropped", benchtime)
	}
	return n, nil
}

// fakeTracer serves a fixed number of events, then times out, or fails
// with err once they are served.
type fakeTracer struct {
	tracers.Tracer
	left int
	err  error
}

func (f *fakeTracer) ReadEvent(time.Time) (tracers.Event, error) {
	if f.left > 0 {
		f.left--
		return tracers.Event{}, nil
	}
	if f.err != nil {
		return tracers.Event{}, f.err
	}
	return tracers.Event{}, os.ErrDeadlineExceeded
}

func TestDrain(t *testing.T) {
	n, _, err := drain(&fakeTracer{left: 2*eventBatch + 5})
	if err != nil || n != 2*eventBatch+5 {
		t.Errorf("drain = %d, %v; want %d events", n, err, 2*eventBatch+5)
	}
	broken := errors.New("decode event: record is 40 bytes, want 48")
	n, _, err = drain(&fakeTracer{left: 3, err: broken})
	if !errors.Is(err, broken) || n != 3 {
		t.Errorf("drain of a failing tracer = %d, %v; want 3, %v", n, err, broken)
	}
}

func TestRingFor(t *testing.T) {
	page := os.Getpagesize()
	for events, want := range map[int]int{0: page, 1: page, 51000: 4 << 20, (1 << 20) / recordBytes: 1 << 20} {
		if got := ringFor(events); got != want {
			t.Errorf("ringFor(%d) = %d, want %d", events, got, want)
		}
	}
	if n, err := readsOf("50000x"); n != 50000 || err != nil {
		t.Errorf("readsOf(50000x) = %d, %v", n, err)
	}
	for _, bad := range []string{"1s", "x", "0x", "-3x"} {
		if _, err := readsOf(bad); err == nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("readsOf(%q) error = %v", bad, err)
		}
	}
}
