package bench

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"tracebench/tracers"
)

// openZero opens /dev/zero for the benchmark's duration.
func openZero(b *testing.B) int {
	fd, err := unix.Open("/dev/zero", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatalf("open /dev/zero: %v", err)
	}
	b.Cleanup(func() { unix.Close(fd) })
	return fd
}

// warmupReads precede every timed loop, untimed: under TCG the first runs
// of newly attached code (trampoline, JIT image) include its translation,
// and caches are cold after loading.
const warmupReads = 1000

func warmUp(fd int) {
	buf := make([]byte, 1)
	for range warmupReads {
		unix.Read(fd, buf) // errors show in the timed loop
	}
}

// readLoop is the timed workload: one 1-byte read(2) per iteration, issued
// directly (unix.Read: no os.File poller or retry logic) from the calling
// goroutine, which the caller has locked to its OS thread so that every
// read comes from one task, as from an application thread.
func readLoop(b *testing.B, fd int) {
	buf := make([]byte, 1)
	for b.Loop() {
		if n, err := unix.Read(fd, buf); n != 1 || err != nil {
			b.Fatalf("read(2) of /dev/zero: %d bytes, %v", n, err)
		}
	}
}

// session is a mechanism attached for one sub-benchmark.
type session struct {
	mech     tracers.Mechanism
	tracer   tracers.Tracer
	consumer *consumer // nil unless the case consumes
}

// attach starts m in case c, tracing this process or not. It skips b with
// the tracers' reason when the kernel lacks the mechanism.
func attach(b *testing.B, m tracers.Mechanism, c benchCase) *session {
	tr, err := m.Start(c.config(uint32(os.Getpid())))
	if errors.Is(err, tracers.ErrUnsupported) {
		b.Skip(err.Error())
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() }) // on failure paths; finish closes first
	s := &session{mech: m, tracer: tr}
	if c.consume {
		s.consumer = consume(tr)
		b.Cleanup(func() { s.consumer.halt() }) // runs before the Close above
	}
	return s
}

// outcome is what a session counted.
type outcome struct {
	stats  tracers.Stats
	events uint64 // consumed by the Go consumer
}

// finish ends the session right after the timed loop: it takes the
// consumer's count, stops the consumer, detaches, reads the counters, closes the tracer and
// fails b if the counters contradict case c. The check gets the consumer's
// count, or 1 for an event left unread where that is the only sign of
// tracing (see eventLeft).
func (s *session) finish(b *testing.B, c benchCase) outcome {
	var o outcome
	if s.consumer != nil {
		o.events = s.consumer.events.Load()
		if err := s.consumer.halt(); err != nil {
			b.Fatalf("consumer: %v", err)
		}
	}
	if err := s.tracer.Detach(); err != nil {
		b.Fatalf("detach: %v", err)
	}
	stats, err := s.tracer.Stats()
	if err != nil {
		b.Fatalf("stats: %v", err)
	}
	o.stats = stats
	seen := o.events
	if s.consumer != nil && seen == 0 && stats.Unknown.Has(tracers.FieldSlow) && s.eventLeft() {
		seen = 1
	}
	if err := s.tracer.Close(); err != nil {
		b.Fatalf("close: %v", err)
	}
	if err := c.check(o.stats, uint64(b.N), seen); err != nil {
		b.Fatalf("%s/%s: %v", s.mech.Name, c.name, err)
	}
	return o
}

// eventLeft reports whether an event is still unread after Detach. A
// mechanism that cannot count slow calls shows that it traced only by its
// events, and in a short loop (e.g. -benchtime 2000x under TCG) the
// consumer may not have read any yet.
func (s *session) eventLeft() bool {
	_, err := s.tracer.ReadEvent(time.Now().Add(consumerPoll))
	return err == nil
}

func (s *session) programStats(b *testing.B) map[string]tracers.ProgramStats {
	stats, err := s.mech.ProgramStats(s.tracer)
	if err != nil {
		b.Fatal(err)
	}
	return stats
}
