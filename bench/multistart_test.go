package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/bench/report"
	"tracebench/bench/suite"
	"tracebench/funcset"
	"tracebench/internal/testenv"
	"tracebench/peers"
	"tracebench/tracers"
	"tracebench/workload"
)

// startBudget bounds one Start of BenchmarkMultiStart: a mechanism or
// peer whose Start passes it at some size, or whose fit predicts it would,
// is not attempted at the larger sizes (the report extrapolates them).
// It also bounds the read loop with the set traced: tracing every function
// can slow the whole guest a thousandfold (kprobe-kretprobe-multi on 44591
// functions, 7.2 guest: its sub-benchmark had not ended after 25 min).
var startBudget = flag.Duration("tracebench.start-budget", 10*time.Second,
	"time budget of one Start in BenchmarkMultiStart, and of its read loop with the set traced, in the guest's clock")

// closeBudget bounds one Close of BenchmarkMultiStart, idle or with the
// CPUs busy, as startBudget bounds Start: a detach one perf event at a
// time waits for SRCU twice per link (7.2 rt guest, icount,
// kprobe-kretprobe-each on 1000 functions: Close 281 s idle, 381 s busy).
var closeBudget = flag.Duration("tracebench.close-budget", time.Minute,
	"time budget of one Close (idle or with the CPUs busy) in BenchmarkMultiStart, in the guest's clock")

// BenchmarkMultiStart measures, once per run (cmd/bench runs each
// process of printOnceProcesses in a fresh guest, apart from the rounds),
// what tracing more functions costs: each mechanism that traces many
// functions and each of the peers' wildcard variants on each function set
// of -tracebench.sizes, smallest first, and each mechanism that traces
// vfs_read alone on it (BenchmarkMultiStart/<name>/vfs_read), every call
// of it timed and counted.
// Each sub-benchmark reports Start (load, verify, attach; for bpftrace
// exec to attached) as start-ns, guest time, and start-cpu-ns, this
// process's CPU time (under icount its instructions, the kernel's work in
// its system calls included, idle waits not), Close the same (bpftrace:
// SIGINT to exit, close-ns), what the kernel shows of the attached
// functions (reportAttached), the functions traced, and ns/op of the read
// loop with them attached. A size the kernel refuses, or one beyond the
// start budget, ends the mechanism's sizes, printed as
// suite.MultiStopPrefix lines.
func BenchmarkMultiStart(b *testing.B) {
	testenv.Tracing.Require(b)
	mechs := selectedMechanisms(b)
	sets := multiSets(b, multiKinds(mechs))
	root, rootErr := multiPeers(mechs)
	fmt.Printf("%s: %v\n%s: %v\n%s: %v\n", suite.MultiBudget, *startBudget, suite.MultiCloseBudget, *closeBudget,
		suite.MultiPeerLimit, peerStartLimit())
	var units []unit
	for _, m := range manyFunctions(mechs, false) {
		units = append(units, unit{name: m.Name + "/" + suite.VFSReadCase, run: benchGrowth(m, nil, sets, nil)})
	}
	growths := map[string]*growth{}
	for _, set := range sets.sized {
		for _, m := range manyFunctions(mechs, true) {
			g := growthOf(growths, m.Name)
			units = append(units, unit{name: m.Name + "/" + set.Name, run: benchGrowth(m, set, sets, g)})
		}
		for _, w := range wildcards() {
			g := growthOf(growths, w.Name)
			units = append(units, unit{name: w.Name + "/" + set.Name, run: benchWildcard(w, set, sets, root, rootErr, g)})
		}
	}
	runInOrder(b, units)
}

// printOnceProcesses prints the -test.bench pattern of each process the
// Once benchmarks are split into: BenchmarkTraceExit's, one per mechanism
// tracing many functions; BenchmarkMultiStart's, one per mechanism or
// peer tracing many functions (its sizes in one process: each predicts
// the next), one for those tracing vfs_read alone. Each runs in a fresh
// kernel, since a mass attach leaves the kernel slower for minutes after
// its detach (7.2 guest: the baseline read +30% after function_graph on
// 44591 functions).
// The longest come first, so that the guests side by side end together:
// the CLI's runs (the per-function designs attach and detach n1000 one
// function at a time, 2 to 4 guest minutes each), the peers (a tool's
// exec at every size), the vfs_read group last.
// It returns the exit status: 1 on a bad -tracebench.mechanisms.
func printOnceProcesses(w io.Writer) int {
	mechs, err := selected(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, m := range manyFunctions(mechs, true) {
		fmt.Fprintf(w, "^BenchmarkTraceExit$/^%s$\n", regexp.QuoteMeta(m.Name))
	}
	const start = "^BenchmarkMultiStart$/"
	for _, p := range wildcards() {
		fmt.Fprintf(w, "%s^%s$\n", start, regexp.QuoteMeta(p.Name))
	}
	for _, m := range manyFunctions(mechs, true) {
		fmt.Fprintf(w, "%s^%s$\n", start, regexp.QuoteMeta(m.Name))
	}
	if len(manyFunctions(mechs, false)) > 0 {
		fmt.Fprintf(w, "%s/^%s$\n", start, regexp.QuoteMeta(suite.VFSReadCase))
	}
	return 0
}

// manyFunctions returns the mechanisms of mechs that trace many functions
// (many true) or vfs_read alone (false).
func manyFunctions(mechs []tracers.Mechanism, many bool) []tracers.Mechanism {
	var out []tracers.Mechanism
	for _, m := range mechs {
		if m.Can.Functions.Many == many {
			out = append(out, m)
		}
	}
	return out
}

var multiOnce sync.Once

// multiPeers opens the peer root, and labels the results once per process
// with what the multi family measures: the mechanisms, peers and their
// designs, the peers' versions.
func multiPeers(mechs []tracers.Mechanism) (*peers.Root, error) {
	root, err := peers.RootFromEnv()
	multiOnce.Do(func() {
		names := func(ms []tracers.Mechanism) string {
			var n []string
			for _, m := range ms {
				n = append(n, m.Name)
				fmt.Printf("%s%s: %s\n", suite.MultiDesignPrefix, m.Name, m.Summary)
			}
			return strings.Join(n, " ")
		}
		fmt.Printf("%s: %s\n", suite.MultiMechanisms, names(manyFunctions(mechs, true)))
		fmt.Printf("%s: %s\n", suite.MultiSingle, names(manyFunctions(mechs, false)))
		var peerNames []string
		for _, w := range wildcards() {
			peerNames = append(peerNames, w.Name)
			fmt.Printf("%s%s: %s\n", suite.MultiDesignPrefix, w.Name, w.Design)
		}
		fmt.Printf("%s: %s\n", suite.MultiPeers, strings.Join(peerNames, " "))
		if err == nil && *withPeers {
			if on, _ := root.Preloads(); on {
				fmt.Printf("%s: true\n", suite.MultiPeerPreload)
			}
			printPeerVersions(root)
		}
	})
	return root, err
}

// benchGrowth times Start and Close of m on set (nil: vfs_read alone,
// m's default) and the loop while it traces this process; see
// BenchmarkMultiStart.
func benchGrowth(m tracers.Mechanism, set *funcset.Set, sets *functionSets, g *growth) func(*testing.B) {
	return func(b *testing.B) {
		g.before(b, set)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		cfg := tracers.Config{TGID: uint32(os.Getpid()), Threshold: highThreshold}
		if set != nil {
			cfg.Functions = set.Functions()
		}
		warmStart(b, m.Name, func() (io.Closer, error) { return m.Start(warmConfig(cfg)) })
		before := viewOrFail(b, os.Getpid())
		began, cpu := clocks()
		tr, err := m.Start(cfg)
		start, startCPU := since(began, cpu)
		switch {
		case errors.Is(err, tracers.ErrUnsupported):
			b.Skip(err.Error())
		case err != nil && g != nil:
			g.refused(b, set, err)
		case err != nil:
			b.Fatal(err)
		}
		b.Cleanup(func() { tr.Close() })
		g.timeReads(b, fd, set, start)
		attached := viewOrFail(b, os.Getpid()) // after the loop: see viewOrFail
		// Close is timed in two parts around the counters, which are read
		// detached: a per-thread map of every function changes under an
		// iteration faster than it completes (kprobe-kretprobe-multi at
		// 44591 functions, 7.2 guest: "iteration aborted").
		began, cpu = clocks()
		err = tr.Detach()
		detached, detachedCPU := since(began, cpu)
		if err != nil {
			b.Fatalf("detach: %v", err)
		}
		stats, err := tr.Stats()
		if err != nil {
			b.Fatalf("stats: %v", err)
		}
		began, cpu = clocks()
		err = tr.Close()
		closed, closedCPU := since(began, cpu)
		closed, closedCPU = closed+detached, closedCPU+detachedCPU
		if err != nil {
			b.Fatalf("close: %v", err)
		}
		// Start and Close are what this benchmark compares, not the work
		// of tracing: a set's lost calls and missed runs (Missed is the
		// kernel's, system-wide) are reported, not failed on.
		if err := everyCallIn(stats, sets.perRead, uint64(b.N), false); err != nil {
			b.Fatalf("%s: %v", m.Name, err)
		}
		reportLosses(b, stats)
		if text := lostFunctions(stats, lostFunctionsShown); text != "" {
			fmt.Printf("%s%s: %s\n", suite.MultiLostFunctionsPrefix, strings.TrimPrefix(b.Name(), "BenchmarkMultiStart/"), text)
		}
		busyStart, busyClose := startCloseBusy(b, m, cfg)
		for unit, d := range map[string]time.Duration{"start-ns": start, "start-cpu-ns": startCPU, "close-ns": closed,
			"close-cpu-ns": closedCPU, "start-busy-ns": busyStart, "close-busy-ns": busyClose} {
			b.ReportMetric(float64(d.Nanoseconds()), unit)
		}
		if g == nil {
			b.ReportMetric(1, "functions")
			reportAttached(b, before, attached)
			return
		}
		g.after(b, set, start, max(closed, busyClose), before, attached)
	}
}

// startCloseBusy times a second Start and Close (Detach included) of m
// on cfg, guest time, while a busy reader per guest CPU (a process of its
// own, outside the TGID filter) reads /dev/zero: what a user waits for
// on a loaded machine, where the kernel's waits for every CPU (RCU grace
// periods, trampoline and text updates) last longer. It prints what the
// Close waited in (sampleWaits; its reads are part of the time).
func startCloseBusy(b *testing.B, m tracers.Mechanism, cfg tracers.Config) (start, closed time.Duration) {
	busyCPUs(b)
	began := time.Now()
	tr, err := m.Start(cfg)
	start = time.Since(began)
	if err != nil {
		b.Fatalf("Start with the CPUs busy, after one without: %v", err)
	}
	waits := sampleWaits(unix.Gettid()) // the caller's thread is locked
	began = time.Now()
	err = tr.Close()
	closed = time.Since(began)
	text, waitErr := waits.end()
	if err != nil {
		b.Fatalf("Close with the CPUs busy: %v", err)
	}
	if waitErr != nil {
		text = "not sampled: " + waitErr.Error()
	}
	fmt.Printf("%s%s: %s\n", suite.MultiCloseWaitsPrefix, strings.TrimPrefix(b.Name(), "BenchmarkMultiStart/"), text)
	return start, closed
}

// busyCPUs starts a busy reader per guest CPU (workload.StartBusy:
// processes of their own, outside the TGID filter), stopped when b ends.
func busyCPUs(b *testing.B) {
	busy, err := workload.StartBusy(runtime.NumCPU())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := busy.Stop(); err != nil {
			b.Error(err)
		}
	})
}

// reportLosses reports the calls s lost, and of them those overwritten
// after a missed return, and the program runs the kernel missed
// (system-wide), and of them the recursion misses, each where the
// mechanism knows it.
func reportLosses(b *testing.B, s tracers.Stats) {
	if !s.Unknown.Has(tracers.FieldLost) {
		b.ReportMetric(float64(s.Lost), "lost-calls")
		b.ReportMetric(float64(s.Overwritten), "lost-overwritten")
	}
	if !s.Unknown.Has(tracers.FieldMissed) {
		b.ReportMetric(float64(s.Missed), "missed-runs")
		b.ReportMetric(float64(s.RecursionMisses), "missed-recursion")
	}
}

// lostFunctionsShown bounds the functions lostFunctions names.
const lostFunctionsShown = 5

// lostFunctions names the n functions of s that lost the most calls, most
// first, each as "name lost (overwritten)", and how many others lost any;
// "" where none lost one.
func lostFunctions(s tracers.Stats, n int) string {
	var lost []tracers.FunctionStats
	for _, f := range s.PerFunction {
		if f.Lost > 0 && !f.Unknown.Has(tracers.FieldLost) {
			lost = append(lost, f)
		}
	}
	slices.SortStableFunc(lost, func(a, b tracers.FunctionStats) int { return cmp.Compare(b.Lost, a.Lost) })
	var parts []string
	for _, f := range lost[:min(n, len(lost))] {
		parts = append(parts, fmt.Sprintf("%s %d (%d)", f.Function, f.Lost, f.Overwritten))
	}
	if rest := len(lost) - len(parts); rest > 0 {
		parts = append(parts, fmt.Sprintf("%d more functions", rest))
	}
	return strings.Join(parts, ", ")
}

// clocks reads the guest's clock and this process's CPU time.
func clocks() (time.Time, time.Duration) {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) // cannot fail for this clock
	return time.Now(), time.Duration(ts.Nano())
}

// since returns how much each of clocks advanced since wall, cpu.
func since(wall time.Time, cpu time.Duration) (time.Duration, time.Duration) {
	now, c := clocks()
	return now.Sub(wall), c - cpu
}

// viewOrFail reads the kernel's view (viewKernel) or fails b. The view
// of the attached set is read after the read loop, so that a loop cut by
// the budget skips it: reading /proc/kallsyms with every function traced
// is slower still (7.2 guest, icount, all: 44591 functions: 168 guest s under
// kprobe-kretprobe-multi, 248 under bpftrace's kprobe.session, each after
// a loop cut at 10 s). The loop attaches nothing; the maps' entries it
// leaves may add to Slab, which is coarse anyway.
func viewOrFail(b *testing.B, pid int) kernelView {
	v, err := viewKernel(pid)
	if err != nil {
		b.Fatalf("what the kernel shows: %v", err)
	}
	return v
}

// growth follows one mechanism's or peer's sizes in a run, smallest
// first: the Start and Close times measured, whose fits predict the next
// size's, and where it stops (suite.Stop). Its methods do nothing on a
// nil growth (a sub-benchmark of BenchmarkMultiRead).
type growth struct {
	name string
	// per size measured: functions, Start and Close (the longer of idle
	// and busy) in seconds
	functions, start, close []float64
	stop                    *suite.Stop
}

func growthOf(all map[string]*growth, name string) *growth {
	if all[name] == nil {
		all[name] = &growth{name: name}
	}
	return all[name]
}

// before skips b when g stopped at a smaller size, or when a fit predicts
// a Start or a Close at set beyond its budget (predictStop).
func (g *growth) before(b *testing.B, set *funcset.Set) {
	switch {
	case g == nil:
		return
	case g.stop != nil:
		b.Skipf("not attempted: %s stopped at %s", g.name, g.stop)
	}
	if reason, text, stop := g.predictStop(len(set.Members)); stop {
		g.stopAt(set, reason, text)
		b.Skipf("not attempted: %s", g.stop)
	}
}

// predictStop says whether the line through the two largest sizes
// measured (report.FitTail) predicts a Start or a Close of n functions
// beyond its budget, with the stop's reason and text.
func (g *growth) predictStop(n int) (reason, text string, stop bool) {
	for _, p := range []struct {
		what, reason string
		times        []float64
		budget       time.Duration
	}{{"Start", suite.StopPredicted, g.start, *startBudget}, {"Close", suite.StopClosePredicted, g.close, *closeBudget}} {
		fit, ok := report.FitTail(g.functions, p.times)
		if predicted := fit.Predict(float64(n)); ok && predicted > p.budget.Seconds() {
			return p.reason, fmt.Sprintf("the line through the 2 largest sizes measured predicts a %s of %.1f s, beyond the %v budget",
				p.what, predicted, p.budget), true
		}
	}
	return "", "", false
}

// startLimitFactor times the start budget bounds the wait for a peer's
// Start in BenchmarkMultiStart, where the budget alone ends a size only
// after its Start: bpftrace's probes run for every process while it
// attaches the rest, so a large set slows the whole guest meanwhile.
const startLimitFactor = 3

// startLimit bounds a peer's Start: peerStartLimit, peers.StartTimeout
// on a nil growth (BenchmarkMultiRead).
func (g *growth) startLimit() time.Duration {
	if g == nil {
		return peers.StartTimeout
	}
	return peerStartLimit()
}

// peerStartLimit is startLimitFactor times the start budget.
func peerStartLimit() time.Duration { return startLimitFactor * *startBudget }

// warmConfig is cfg on its first function alone: a warm-up of a whole
// large set would be the mass attach a fresh guest is there to avoid.
func warmConfig(cfg tracers.Config) tracers.Config {
	cfg.Functions = cfg.Functions[:min(1, len(cfg.Functions))]
	return cfg
}

// warmed are the mechanisms and peers started once in this process.
var warmed = map[string]bool{}

// warmStart starts and closes name once per process before its first
// timed Start, untimed: a process's first Start costs more guest time
// than the functions explain (7.2 guest, each mechanism in a fresh
// process: fsession-multi 0.11 s on 1 function, 0.023 s on 10 after it).
// A failing start is left to the timed one to report.
func warmStart(b *testing.B, name string, start func() (io.Closer, error)) {
	if warmed[name] {
		return
	}
	warmed[name] = true
	c, err := start()
	if err != nil {
		return
	}
	if err := c.Close(); err != nil {
		b.Fatalf("%s: closing the warm-up start: %v", name, err)
	}
}

// view reads what the kernel shows, with pid's BPF objects; nothing on a
// nil growth.
func (g *growth) view(b *testing.B, pid int) kernelView {
	if g == nil {
		return kernelView{}
	}
	return viewOrFail(b, pid)
}

// maxStopText bounds the error a stop quotes (a refusal may list every
// function the kernel refused).
const maxStopText = 400

// refused ends g at set, whose Start failed with err, and skips b.
func (g *growth) refused(b *testing.B, set *funcset.Set, err error) {
	why := strings.Join(strings.Fields(err.Error()), " ")
	if len(why) > maxStopText {
		why = why[:maxStopText] + "..."
	}
	g.stopAt(set, suite.StopRefused, why)
	b.Skipf("Start failed: %v", err)
}

// after reports the functions traced and what the kernel shows of them,
// and records Start and Close at set: either beyond its budget, g stops
// there.
func (g *growth) after(b *testing.B, set *funcset.Set, start, closed time.Duration, before, attached kernelView) {
	if g == nil {
		return
	}
	b.ReportMetric(float64(len(set.Members)), "functions")
	reportAttached(b, before, attached)
	if reason, text, stop := g.record(len(set.Members), start, closed); stop {
		g.stopAt(set, reason, text)
	}
}

// record adds a size of n functions measured and says whether its Start
// or Close passed its budget, with the stop's reason and text.
func (g *growth) record(n int, start, closed time.Duration) (reason, text string, stop bool) {
	g.functions = append(g.functions, float64(n))
	g.start = append(g.start, start.Seconds())
	g.close = append(g.close, closed.Seconds())
	switch {
	case start > *startBudget:
		return suite.StopBudget, fmt.Sprintf("Start took %.1f s, beyond the %v budget", start.Seconds(), *startBudget), true
	case closed > *closeBudget:
		return suite.StopCloseBudget, fmt.Sprintf("Close took %.1f s, beyond the %v budget", closed.Seconds(), *closeBudget), true
	}
	return "", "", false
}

// timeReads is timeReads within the start budget (readsWithin) for a
// sub-benchmark of BenchmarkMultiStart whose Start took start: past the
// budget, g stops at set and b is skipped, or b fails on a nil growth
// (a mechanism on vfs_read alone).
func (g *growth) timeReads(b *testing.B, fd int, set *funcset.Set, start time.Duration) {
	ok, reads, took := readsWithin(b, fd, *startBudget)
	if ok {
		return
	}
	text := fmt.Sprintf("Start took %.1f s; then %d reads of 1 byte (%d warm-up) took %.1f s with the functions traced, "+
		"%.0f µs each, beyond the %v budget", start.Seconds(), reads, warmupReads, took.Seconds(),
		float64(took.Microseconds())/float64(reads), *startBudget)
	if g == nil {
		b.Fatal(text)
	}
	g.stopAt(set, suite.StopLoop, text)
	b.Skipf("cut: %s", g.stop)
}

// stopAt ends g at set and prints where and why.
func (g *growth) stopAt(set *funcset.Set, reason, text string) {
	g.stop = &suite.Stop{Size: set.Name, Reason: reason, Text: text}
	fmt.Printf("%s%s: %s\n", suite.MultiStopPrefix, g.name, g.stop)
}

// closer counts its Close calls.
type closer struct{ closed int }

func (c *closer) Close() error { c.closed++; return nil }

// warmStart starts a name once per process, closes what it started, and
// leaves a failing start to the timed one.
func TestWarmStart(t *testing.T) {
	c, starts := &closer{}, 0
	start := func() (io.Closer, error) { starts++; return c, nil }
	name := fmt.Sprintf("test-warm-%d", len(warmed)) // once per process: a name per run of the test (-count)
	testing.Benchmark(func(b *testing.B) {
		warmStart(b, name, start)
		warmStart(b, name, start)
	})
	assert.Equal(t, 1, starts)
	assert.Equal(t, 1, c.closed)
	failed := 0
	testing.Benchmark(func(b *testing.B) {
		warmStart(b, name+"-failing", func() (io.Closer, error) { failed++; return nil, errors.New("refused") })
	})
	assert.Equal(t, 1, failed)
}

// A size whose Start or Close passes its budget ends the growth there;
// the fit through the two largest sizes ends it before a size it
// predicts past either budget (7.2 rt guest: kprobe-kretprobe-each's
// Close took 28 s on 100 functions, 281 s on 1000).
func TestGrowthBudgets(t *testing.T) {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	for _, c := range []struct {
		name                 string
		closes               []float64 // per size: 1, 100 functions
		start                float64   // at 100 functions
		wantRecord, wantAt1k string
	}{
		{"within both", []float64{0.1, 2}, 0.5, "", ""},
		{"Close predicted past", []float64{0.3, 28}, 0.5, "", suite.StopClosePredicted},
		{"Start predicted past", []float64{0.1, 2}, 5, "", suite.StopPredicted},
		{"Close past", []float64{0.3, 61}, 0.5, suite.StopCloseBudget, ""},
		{"Start past", []float64{0.3, 2}, 11, suite.StopBudget, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &growth{name: "m"}
			_, _, stop := g.record(1, s(0.01), s(c.closes[0]))
			require.False(t, stop)
			reason, text, _ := g.record(100, s(c.start), s(c.closes[1]))
			assert.Equal(t, c.wantRecord, reason, text)
			if c.wantRecord != "" {
				return
			}
			reason, text, _ = g.predictStop(1000)
			assert.Equal(t, c.wantAt1k, reason, text)
		})
	}
}

// The functions that lost the most calls come first, with those
// overwritten; one whose lost calls are unknown is left out.
func TestLostFunctions(t *testing.T) {
	s := tracers.Stats{PerFunction: []tracers.FunctionStats{
		{Function: "a", Lost: 3, Overwritten: 3}, {Function: "b"}, {Function: "c", Lost: 90, Overwritten: 10},
		{Function: "d", Lost: 5, Unknown: tracers.FieldLost}, {Function: "e", Lost: 1},
	}}
	assert.Equal(t, "c 90 (10), a 3 (3), 1 more functions", lostFunctions(s, 2))
	assert.Equal(t, "", lostFunctions(tracers.Stats{PerFunction: []tracers.FunctionStats{{Function: "b"}}}, 2))
}
