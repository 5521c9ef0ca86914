package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"tracebench/tracers"
)

// round rotates the order of the sub-benchmarks. `go test -count N` runs
// each sub-benchmark N times in a row (A A A B B B), so drift over the run
// would land on one mechanism; bench/rounds.sh instead runs this binary
// once per round with -count 1 and -tracebench.round=<round>, which gives
// A B C A B C and, with as many rounds as units, puts every unit at every
// position of a round once.
var round = flag.Int("tracebench.round", 0, "rotate the order of the sub-benchmarks by this many places")

// only limits the run to some mechanisms, e.g. to fit a time budget.
var only = flag.String("tracebench.mechanisms", "", "comma-separated mechanisms to measure (default: every registered one)")

func TestMain(m *testing.M) {
	flag.Parse()
	printConfig(os.Stdout)
	os.Exit(m.Run())
}

// printConfig labels the results in Go's benchmark format ("key: value"
// lines, as `go test` prints goos and cpu), so that the report and
// benchstat name the kernel and the emulation next to every figure.
func printConfig(w io.Writer) {
	fmt.Fprintf(w, "tracebench-kernel: %s\n", tracers.KernelRelease())
	fmt.Fprintf(w, "tracebench-emulation: %s\n", emulation())
	fmt.Fprintf(w, "tracebench-cpus: %d\n", runtime.NumCPU())
	fmt.Fprintf(w, "tracebench-clock: %s\n", cmp.Or(os.Getenv("TRACEBENCH_CLOCK"), "wall"))
}

// emulation is vm/run.sh's TRACEBENCH_ACCEL (tcg or kvm) in a guest.
func emulation() string {
	if accel := os.Getenv("TRACEBENCH_ACCEL"); accel != "" {
		return accel
	}
	return "none"
}

const (
	// noProcess is a TGID no process has (pid_max is at most 2^22).
	noProcess = math.MaxUint32
	// highThreshold is far above any 1-byte read of /dev/zero, even under
	// emulation, and within tracers.MaxThreshold.
	highThreshold = time.Minute
)

// benchCase is one configuration every mechanism is measured in.
type benchCase struct {
	name string
	// config traces this process (TGID self) or not.
	config func(self uint32) tracers.Config
	// consume drains the ring buffer from a Go goroutine while the loop
	// runs, as a real consumer would.
	consume bool
	// check says what the counters must show after reads timed reads from
	// this process, with events consumed (see session.finish); it fails
	// the benchmark otherwise, since a mechanism that did not trace
	// measured nothing.
	check func(s tracers.Stats, reads, events uint64) error
}

var cases = []benchCase{
	{
		name:   "tgid-miss",
		config: func(uint32) tracers.Config { return tracers.Config{TGID: noProcess} },
		check: func(s tracers.Stats, _, _ uint64) error {
			return expectKnown(s, tracers.FieldCalls, s.Calls == 0, "filtered-out calls were counted: %+v", s)
		},
	},
	{
		name:   "below-threshold",
		config: func(self uint32) tracers.Config { return tracers.Config{TGID: self, Threshold: highThreshold} },
		check: func(s tracers.Stats, reads, _ uint64) error {
			return errors.Join(
				expectKnown(s, tracers.FieldCalls, s.Calls >= reads, "%d calls counted for %d reads: %+v", s.Calls, reads, s),
				expectKnown(s, tracers.FieldSlow, s.Slow == 0, "calls above a %v threshold: %+v", highThreshold, s))
		},
	},
	{
		name:    "every-call",
		config:  func(self uint32) tracers.Config { return tracers.Config{TGID: self} },
		consume: true,
		check: func(s tracers.Stats, reads, events uint64) error {
			return errors.Join(
				expectKnown(s, tracers.FieldCalls, s.Calls >= reads, "%d calls counted for %d reads: %+v", s.Calls, reads, s),
				expectKnown(s, tracers.FieldCalls|tracers.FieldSlow, s.Slow == s.Calls, "zero threshold but slow != calls: %+v", s),
				expectKnown(s, tracers.FieldSlow|tracers.FieldDropped, events+s.Dropped <= s.Slow, "%d events consumed + %d dropped > %d slow", events, s.Dropped, s.Slow),
				// Without a slow count the events are the only sign that
				// the mechanism traced at all.
				expect(events > 0 || !s.Unknown.Has(tracers.FieldSlow), "no event consumed or left unread for %d reads, and the mechanism does not count slow calls: nothing shows it traced", reads))
		},
	},
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// expectKnown is expect for an assertion on the counters in uses: it is
// not made when the mechanism declares any of them unknown (they read 0
// and are not measurements, e.g. ftrace-graph's calls).
func expectKnown(s tracers.Stats, uses tracers.Fields, ok bool, format string, args ...any) error {
	if s.Unknown&uses != 0 {
		return nil
	}
	return expect(ok, format, args...)
}

// unit is one sub-benchmark.
type unit struct {
	name string
	run  func(*testing.B)
}

// perMechanism returns one unit per case and mechanism, the mechanisms
// alternating within a case so that neighbours in time differ.
func perMechanism(mechs []tracers.Mechanism, bench func(tracers.Mechanism, benchCase) func(*testing.B)) []unit {
	var units []unit
	for _, c := range cases {
		for _, m := range mechs {
			units = append(units, unit{name: m.Name + "/" + c.name, run: bench(m, c)})
		}
	}
	return units
}

// selected returns the mechanisms named in list (comma-separated), or
// every registered one for "".
func selected(list string) ([]tracers.Mechanism, error) {
	if list == "" {
		return tracers.Mechanisms(), nil
	}
	var mechs []tracers.Mechanism
	for _, name := range strings.Split(list, ",") {
		m, err := tracers.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("-tracebench.mechanisms: %w", err)
		}
		mechs = append(mechs, m)
	}
	return mechs, nil
}

func selectedMechanisms(b *testing.B) []tracers.Mechanism {
	mechs, err := selected(*only)
	if err != nil {
		b.Fatal(err)
	}
	return mechs
}

// rotate returns units starting at position n (mod len).
func rotate(units []unit, n int) []unit {
	if len(units) == 0 {
		return units
	}
	k := ((n % len(units)) + len(units)) % len(units)
	return slices.Concat(units[k:], units[:k])
}

func runUnits(b *testing.B, units []unit) {
	requireRoot(b)
	for _, u := range rotate(units, *round) {
		b.Run(u.name, u.run)
	}
}

func requireRoot(b *testing.B) {
	if euid := os.Geteuid(); euid != 0 {
		b.Skipf("loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid %d", euid)
	}
}

// BenchmarkVFSRead reports ns/op of a 1-byte read(2) from /dev/zero with
// nothing attached (baseline) and with each mechanism in each case; the
// every-call case also reports events/s consumed and dropped/s.
func BenchmarkVFSRead(b *testing.B) {
	baseline := unit{name: "baseline", run: benchBaseline}
	runUnits(b, slices.Concat([]unit{baseline}, perMechanism(selectedMechanisms(b), benchVFSRead)))
}

// BenchmarkBPFStats reports the kernel's run-time statistics of each
// mechanism's programs over the same loop: bpf-ns/op (all program bodies,
// per read), and per program <name>-ns/run and <name>-runs/op. A mechanism
// without BPF programs is skipped, saying what it is instead.
func BenchmarkBPFStats(b *testing.B) {
	runUnits(b, perMechanism(selectedMechanisms(b), benchBPFStats))
}

func benchBaseline(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd := openZero(b)
	warmUp(fd)
	readLoop(b, fd)
}

func benchVFSRead(m tracers.Mechanism, c benchCase) func(*testing.B) {
	return func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		s := attach(b, m, c)
		warmUp(fd)
		readLoop(b, fd)
		elapsed := b.Elapsed().Seconds()
		o := s.finish(b, c)
		if c.consume {
			b.ReportMetric(float64(o.events)/elapsed, "events/s")
			// An unknown count reads 0: reporting it would claim no drops.
			if !o.stats.Unknown.Has(tracers.FieldDropped) {
				b.ReportMetric(float64(o.stats.Dropped)/elapsed, "dropped/s")
			}
		}
	}
}

func benchBPFStats(m tracers.Mechanism, c benchCase) func(*testing.B) {
	return func(b *testing.B) {
		if why := noBPFStats(m); why != "" {
			b.Skip(why)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		s := attach(b, m, c)
		warmUp(fd)
		// Read before enabling: the counters of fresh programs only move
		// while statistics are on, so nothing outside the loop is counted
		// (unless another process turned them on too).
		before := s.programStats(b)
		stats, err := tracers.EnableRunTimeStats()
		if err != nil {
			b.Skip(err.Error())
		}
		readLoop(b, fd)
		if err := stats.Close(); err != nil {
			b.Fatal(err)
		}
		after := s.programStats(b)
		s.finish(b, c)
		reportRunTime(b, before, after)
	}
}

// noBPFStats says why m has no BPF run-time statistics, "" if it has.
func noBPFStats(m tracers.Mechanism) string {
	if m.BPF() {
		return ""
	}
	return fmt.Sprintf("%s has no BPF programs, so no BPF run-time statistics: %s", m.Name, m.Summary)
}

// reportRunTime reports the programs' run time between two snapshots.
// Programs that are not attached to vfs_read (e.g. a task iterator that
// reports state) do not run in the loop: they get runs/op 0 and no ns/run.
// It fails b if no program ran at all, since then nothing was traced.
func reportRunTime(b *testing.B, before, after map[string]tracers.ProgramStats) {
	var total time.Duration
	var runs uint64
	for _, name := range slices.Sorted(maps.Keys(after)) {
		d := after[name].Sub(before[name])
		total += d.Runtime
		runs += d.RunCount
		b.ReportMetric(float64(d.RunCount)/float64(b.N), name+"-runs/op")
		if d.RunCount > 0 {
			b.ReportMetric(float64(d.Runtime.Nanoseconds())/float64(d.RunCount), name+"-ns/run")
		}
	}
	if runs == 0 {
		b.Fatalf("no program of %v ran while statistics were on", slices.Sorted(maps.Keys(after)))
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "bpf-ns/op")
}

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

// TestRotate checks the property the rounds rely on: over len(units)
// rounds every unit runs once at every position.
func TestRotate(t *testing.T) {
	units := []unit{{name: "a"}, {name: "b"}, {name: "c"}}
	names := func(us []unit) string {
		var s []string
		for _, u := range us {
			s = append(s, u.name)
		}
		return strings.Join(s, " ")
	}
	for n, want := range map[int]string{0: "a b c", 1: "b c a", 2: "c a b", 3: "a b c", 7: "b c a", -1: "c a b"} {
		if got := names(rotate(units, n)); got != want {
			t.Errorf("rotate(%d) = %q, want %q", n, got, want)
		}
	}
	if got := rotate(nil, 3); len(got) != 0 {
		t.Errorf("rotate(nil) = %v", got)
	}
}

func TestSelected(t *testing.T) {
	all, err := selected("")
	if err != nil || len(all) != len(tracers.Mechanisms()) {
		t.Fatalf("selected(\"\") = %d mechanisms, %v; want all %d", len(all), err, len(tracers.Mechanisms()))
	}
	two, err := selected("fentry-fexit, fsession")
	if err != nil || len(two) != 2 || two[0].Name != "fentry-fexit" || two[1].Name != "fsession" {
		t.Errorf("selected(fentry-fexit, fsession) = %v, %v", two, err)
	}
	if _, err := selected("fentry"); err == nil || !strings.Contains(err.Error(), `unknown mechanism "fentry"`) {
		t.Errorf("selected(fentry) error = %v", err)
	}
}

func TestNoBPFStats(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		why := noBPFStats(m)
		if m.BPF() != (why == "") {
			t.Errorf("%s (BPF %v): noBPFStats = %q", m.Name, m.BPF(), why)
		}
	}
	graph, err := tracers.Lookup("ftrace-graph")
	if err != nil {
		t.Fatal(err)
	}
	if why := noBPFStats(graph); !strings.Contains(why, "ftrace-graph has no BPF programs") || !strings.Contains(why, "function_graph tracer") {
		t.Errorf("noBPFStats(ftrace-graph) = %q, want the mechanism and what it is instead", why)
	}
}

// What ftrace-graph declares unknown (tracers/ftrace_graph.go), at a
// threshold above 0 and at 0.
const (
	graphUnknown       = tracers.FieldCalls | tracers.FieldErrors | tracers.FieldMissed | tracers.FieldPending
	graphUnknownAtZero = graphUnknown | tracers.FieldSlow | tracers.FieldDropped
)

// TestCaseChecks feeds each case's check counters it must accept and
// counters it must reject, so that a benchmark of a mechanism that did not
// trace cannot pass.
func TestCaseChecks(t *testing.T) {
	byName := map[string]benchCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	tests := []struct {
		caseName       string
		stats          tracers.Stats
		reads, events  uint64
		wantErrContain string // "" = accepted
	}{
		{"tgid-miss", tracers.Stats{}, 100, 0, ""},
		{"tgid-miss", tracers.Stats{Calls: 1}, 100, 0, "filtered-out calls were counted"},
		{"below-threshold", tracers.Stats{Calls: 101}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Calls: 99}, 100, 0, "99 calls counted for 100 reads"},
		{"below-threshold", tracers.Stats{Calls: 100, Slow: 1}, 100, 0, "calls above a 1m0s threshold"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 10}, 100, 90, ""},
		{"every-call", tracers.Stats{Calls: 0, Slow: 0}, 100, 0, "0 calls counted for 100 reads"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 99}, 100, 0, "slow != calls"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 10}, 100, 91, "91 events consumed + 10 dropped > 100 slow"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 100}, 100, 0, ""},
		// Unknown counters read 0 and are not held to anything; the
		// known ones still are (as ftrace-graph declares them).
		{"tgid-miss", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Unknown: graphUnknown}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Slow: 1, Unknown: graphUnknown}, 100, 0, "calls above a 1m0s threshold"},
		{"every-call", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 90, ""},
		{"every-call", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 0, "no event consumed or left unread for 100 reads"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 99, Unknown: tracers.FieldDropped}, 100, 0, "slow != calls"},
	}
	for _, tt := range tests {
		err := byName[tt.caseName].check(tt.stats, tt.reads, tt.events)
		switch {
		case tt.wantErrContain == "" && err != nil:
			t.Errorf("%s %+v: unexpected error %v", tt.caseName, tt.stats, err)
		case tt.wantErrContain != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErrContain)):
			t.Errorf("%s %+v: error %v, want one containing %q", tt.caseName, tt.stats, err, tt.wantErrContain)
		}
	}
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
