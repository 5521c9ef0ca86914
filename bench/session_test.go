package bench

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// timeReads warms up, settles and times the loop on fd: a sub-benchmark
// that has nothing to do between those steps.
func timeReads(b *testing.B, fd int) {
	defer onOneCPU(b)()
	warmUp(fd)
	settle()
	readLoop(b, fd)
}

// onOneCPU runs the calling thread, which the caller has locked, with
// SCHED_FIFO priority 1 on the last CPU it may use, until the returned
// function sets it SCHED_NORMAL and restores its CPUs (suite.LoopSched).
// Neither the tool's nor the kernel's CFS threads then take the loop's CPU from it:
// with it they did, and each time the loop's figure rose (7.2 guest,
// icount: bpftrace's rows moved 41338-44761 instructions a read over 10
// rounds, 41268-41287 over 4 on one CPU). It fails b if the kernel
// refuses (sched_setattr needs CAP_SYS_NICE).
func onOneCPU(b *testing.B) (restore func()) {
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		b.Fatalf("sched_getaffinity: %v", err)
	}
	last := -1
	for cpu := range len(was) * 64 {
		if was.IsSet(cpu) {
			last = cpu
		}
	}
	var one unix.CPUSet
	one.Set(last)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		b.Fatalf("sched_setaffinity to CPU %d: %v", last, err)
	}
	if err := unix.SchedSetAttr(0, &fifo1, 0); err != nil {
		unix.SchedSetaffinity(0, &was)
		b.Fatalf("sched_setattr SCHED_FIFO 1: %v", err)
	}
	return func() {
		unix.SchedSetAttr(0, &normal, 0)
		unix.SchedSetaffinity(0, &was)
	}
}

// requireOnOneCPU fails b unless the calling thread runs as onOneCPU
// leaves it: the reports say every timed loop did (suite.LoopSched).
func requireOnOneCPU(b *testing.B) {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		b.Fatalf("sched_getattr: %v", err)
	}
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		b.Fatalf("sched_getaffinity: %v", err)
	}
	if attr.Policy != fifo1.Policy || attr.Priority != fifo1.Priority || cpus.Count() != 1 {
		b.Fatalf("the timed loop's thread runs policy %d priority %d on %d CPUs, not SCHED_FIFO priority 1 on one (onOneCPU)",
			attr.Policy, attr.Priority, cpus.Count())
	}
}

// The loop's scheduling policy (onOneCPU) and the one it restores.
var (
	fifo1  = unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	normal = unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
)

// clockEvery is how many reads a bounded loop (readsWithin) does between
// two looks at the clock, and after its warm-up: a look every 256 reads
// added 10 to 13 instructions a read (7.2 guest, icount).
const clockEvery = 4096

// readsWithin is timeReads ending at limit of the guest's clock from now,
// warm-up included. Past it, it returns false, how many reads it did and
// how long they took: the timed loop was cut, and b's figures are not
// reported (the caller skips or fails b).
func readsWithin(b *testing.B, fd int, limit time.Duration) (bool, int, time.Duration) {
	defer onOneCPU(b)()
	begin := time.Now()
	warmUp(fd)
	if took := time.Since(begin); took > limit {
		return false, warmupReads, took
	}
	settle()
	requireOnOneCPU(b)
	buf := make([]byte, 1)
	reads := warmupReads
	for b.Loop() {
		if n, err := unix.Read(fd, buf); n != 1 || err != nil {
			b.Fatalf("read(2) of /dev/zero: %d bytes, %v", n, err)
		}
		if reads++; reads%clockEvery == 0 {
			if took := time.Since(begin); took > limit {
				return false, reads, took
			}
		}
	}
	return true, reads, time.Since(begin)
}

// readLoop is the timed workload: one 1-byte read(2) per iteration, issued
// directly (unix.Read: no os.File poller or retry logic) from the calling
// goroutine, which the caller has locked to its OS thread so that every
// read comes from one task, as from an application thread.
func readLoop(b *testing.B, fd int) {
	requireOnOneCPU(b)
	buf := make([]byte, 1)
	for b.Loop() {
		if n, err := unix.Read(fd, buf); n != 1 || err != nil {
			b.Fatalf("read(2) of /dev/zero: %d bytes, %v", n, err)
		}
	}
}

// session is a mechanism attached for one sub-benchmark.
type session struct {
	mech   tracers.Mechanism
	tracer tracers.Tracer
	// start is how long Start took: load, verify and attach (under icount,
	// guest instructions).
	start time.Duration
	// footprint is the tracer's kernel objects, read at attach in the
	// cost case (nil otherwise, and for a mechanism without BPF objects).
	footprint *tracers.Footprint
	// atLoop are the counters right before the timed loop (loopStarts).
	atLoop tracers.Stats
}

// timeReads is timeReads for the attached session: on one CPU it warms
// up, reads the warm-up's events when drainWarmUp is set (so that none is
// timed), settles, reads the counters (loopStarts) and times the loop.
func (s *session) timeReads(b *testing.B, fd int, drainWarmUp bool) {
	defer onOneCPU(b)()
	warmUp(fd)
	if drainWarmUp {
		if _, _, err := drain(s.tracer); err != nil {
			b.Fatalf("reading the warm-up's events: %v", err)
		}
	}
	settle()
	s.loopStarts(b)
	readLoop(b, fd)
}

// loopStarts reads the counters right before the timed loop, so that
// finish judges the calls lost and runs missed during the loop alone (a
// loss the loop finds of an entry pending before it is not the loop's):
// before it, fentry-fexit-multi and fentry-fexit-each lost 280 and 469
// calls of the readpath set (7.2 guest), most likely calls entered
// between their entry and return attaches (this process's own bpf(2)
// calls pass through fput and fdget), which the loop never meets.
func (s *session) loopStarts(b *testing.B) {
	stats, err := s.tracer.Stats()
	if err != nil {
		b.Fatalf("stats: %v", err)
	}
	s.atLoop = stats
}

// attach starts m in case c, tracing this process or not. It skips b with
// the tracers' reason when the kernel lacks the mechanism. A draining
// case gets a ring buffer for every event of the loop and its warm-up.
func attach(b *testing.B, m tracers.Mechanism, c benchCase) *session {
	cfg := c.config(uint32(os.Getpid()))
	if c.drain {
		reads, err := timedReads()
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		cfg.RingBufferBytes = ringFor(reads + warmupReads)
	}
	begin := time.Now()
	tr, err := m.Start(cfg)
	start := time.Since(begin)
	if errors.Is(err, tracers.ErrUnsupported) {
		b.Skip(err.Error())
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() }) // on failure paths; finish closes first
	s := &session{mech: m, tracer: tr, start: start}
	if c.cost {
		s.footprint = footprint(b, tr)
	}
	return s
}

// outcome is what a session counted.
type outcome struct {
	stats  tracers.Stats
	events uint64        // read after the loop (draining cases)
	drain  time.Duration // reading them
}

// finish ends the session right after the timed loop: it detaches, reads
// the events left in a draining case, reads the counters, closes the
// tracer and fails b if the counters contradict case c (their Lost and
// Missed those of the loop, where loopStarts read them before it).
func (s *session) finish(b *testing.B, c benchCase) outcome {
	var o outcome
	if err := s.tracer.Detach(); err != nil {
		b.Fatalf("detach: %v", err)
	}
	if c.drain {
		var err error
		if o.events, o.drain, err = drain(s.tracer); err != nil {
			b.Fatalf("reading the events: %v", err)
		}
	}
	stats, err := s.tracer.Stats()
	if err != nil {
		b.Fatalf("stats: %v", err)
	}
	o.stats = stats
	if err := s.tracer.Close(); err != nil {
		b.Fatalf("close: %v", err)
	}
	if s.atLoop.Lost > 0 || s.atLoop.Missed > 0 || s.atLoop.Pending > 0 {
		b.Logf("%s: before the timed loop (at attach and warm-up) %d calls lost, %d program runs missed, "+
			"%d entries pending; after it %d lost", s.mech.Name, s.atLoop.Lost, s.atLoop.Missed, s.atLoop.Pending,
			o.stats.Lost)
	}
	loop := o.stats
	loop.Lost, loop.Missed = loop.Lost-s.atLoop.Lost, loop.Missed-s.atLoop.Missed
	loop.RecursionMisses -= s.atLoop.RecursionMisses
	if !s.atLoop.Unknown.Has(tracers.FieldPending) {
		// A call entered before the loop whose return never ran leaves an
		// entry, counted lost only when a call in the loop meets it (at its
		// frame): up to atLoop.Pending such, none a call of the loop.
		loop.Lost -= min(loop.Lost, s.atLoop.Pending)
	}
	if err := c.check(loop, uint64(b.N), o.events); err != nil {
		b.Fatalf("%s/%s: %v", s.mech.Name, c.name, err)
	}
	return o
}

func (s *session) programStats(b *testing.B) map[string]tracers.ProgramStats {
	stats, err := s.mech.ProgramStats(s.tracer)
	if err != nil {
		b.Fatal(err)
	}
	return stats
}

// TestReadsWithin checks both ends of the bounded loop on this machine's
// /dev/zero: a limit already passed cuts it at the first look at the
// clock, a generous one lets every read of the warm-up and the loop run.
func TestReadsWithin(t *testing.T) {
	requireFIFO(t)
	for _, c := range []struct {
		limit time.Duration
		done  bool
	}{{0, false}, {time.Hour, true}} {
		var done bool
		var reads, n int
		testing.Benchmark(func(b *testing.B) {
			runtime.LockOSThread() // as readsWithin's callers do
			defer runtime.UnlockOSThread()
			fd := openZero(b)
			done, reads, _ = readsWithin(b, fd, c.limit)
			n = b.N
		})
		assert.Equal(t, c.done, done, "limit %v", c.limit)
		if c.done {
			assert.Equal(t, warmupReads+n, reads, "every read counted")
		} else {
			assert.Equal(t, warmupReads, reads, "cut at the first look at the clock, after the warm-up")
		}
	}
}

// TestReadLoopRequiresOneCPU: a loop not placed by onOneCPU fails (the
// reports would claim a scheduling it did not have); placed, it runs.
func TestReadLoopRequiresOneCPU(t *testing.T) {
	loop := func(place bool) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			fd := openZero(b)
			if place {
				defer onOneCPU(b)()
			} else if err := unix.SchedSetAttr(0, &normal, 0); err != nil {
				b.Fatalf("sched_setattr SCHED_NORMAL: %v", err) // never refused: it lowers the policy
			}
			readLoop(b, fd)
		})
	}
	assert.Zero(t, loop(false).N, "an unplaced loop failed")
	requireFIFO(t)
	assert.NotZero(t, loop(true).N, "a loop placed by onOneCPU ran")
}

// requireFIFO skips t, naming CAP_SYS_NICE, where the kernel refuses a
// thread SCHED_FIFO priority 1 (onOneCPU's placement), and fails it on
// any other error; it tries on a locked thread and sets it back.
func requireFIFO(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := unix.SchedSetAttr(0, &fifo1, 0)
	if errors.Is(err, unix.EPERM) {
		t.Skipf("sched_setattr(SCHED_FIFO) refused (%v): the loop runs SCHED_FIFO (onOneCPU), which needs CAP_SYS_NICE", err)
	}
	if err == nil {
		err = unix.SchedSetAttr(0, &normal, 0)
	}
	if err != nil {
		t.Fatalf("sched_setattr: %v", err)
	}
}
