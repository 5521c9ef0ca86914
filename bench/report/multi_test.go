package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/suite"
)

// multiRounds is n rounds of the multi family as package bench prints
// them: the first with BenchmarkMultiStart, every one with
// BenchmarkMultiRead. fsession-multi grows as 10 ms · N^0.5 at every
// size; fentry-fexit-each as 20 ms · N, past the 10 s budget at n1000;
// kprobe-session is refused at all; a bpftrace variant stops before n100
// by prediction; fsession traces vfs_read alone. Readpath: baseline
// 1000+r, fsession-multi 3000+r, bpftrace 9000+2r.
func multiRounds(n int) string { return multiRoundsOn(n, "7.2.13+deb14-amd64", 1) }

// multiRoundsOn is multiRounds on kernel, fsession-multi's Start scaled
// by startScale.
func multiRoundsOn(n int, kernel string, startScale float64) string {
	var b strings.Builder
	sets := []struct {
		name string
		n    int
	}{{"n1", 1}, {"n10", 10}, {"n100", 100}, {"n1000", 1000}, {"n10000", 10000}, {"all", 40000}}
	for r := range n {
		fmt.Fprintf(&b, "tracebench-kernel: %s\ntracebench-emulation: tcg\ntracebench-cpus: 2\ntracebench-clock: icount\n", kernel)
		fmt.Fprintf(&b, "%s: fentry fexit kprobe.multi\n%sreadpath: 16\n", suite.MultiKinds, suite.MultiSetPrefix)
		for _, s := range sets {
			fmt.Fprintf(&b, "%s%s: %d\n", suite.MultiSetPrefix, s.name, s.n)
		}
		if r == 0 {
			fmt.Fprintf(&b, "%s: 73.2\n", suite.MultiSetsBuilt)
		}
		fmt.Fprintf(&b, "%s: fsession-multi kprobe-session fentry-fexit-each\n%s: bpftrace-wildcard-kprobe\n%s: fsession\n",
			suite.MultiMechanisms, suite.MultiPeers, suite.MultiSingle)
		fmt.Fprintf(&b, "%sfsession-multi: one fsession.multi program | a tracing_multi link\ntracebench-peer-bpftrace: 0.27.1-1\n",
			suite.MultiDesignPrefix)
		b.WriteString("BenchmarkMultiRead\n")
		fmt.Fprintf(&b, "BenchmarkMultiRead/baseline-2 20000 %d ns/op\n", 1000+r)
		fmt.Fprintf(&b, "BenchmarkMultiRead/fsession-multi/readpath-2 20000 %d ns/op 17000000 start-ns 295120 map-bytes\n", 3000+r)
		fmt.Fprintf(&b, "BenchmarkMultiRead/bpftrace-wildcard-kprobe/readpath-2 20000 %d ns/op 2500000000 start-ns 900000000 close-ns 2 probes\n", 9000+2*r)
		if r > 0 {
			continue
		}
		fmt.Fprintf(&b, "BenchmarkMultiStart\n%s: 10s\n%s: 1m0s\n", suite.MultiBudget, suite.MultiCloseBudget)
		b.WriteString("BenchmarkTraceExit/fsession-multi/n1000-2 1 3000000000 attach-ns 5000000000 exit-ns\n")
		fmt.Fprintf(&b, "BenchmarkMultiStart/fsession/vfs_read-2 20000 2000 ns/op 1 functions 17000000 start-ns 15000000 start-cpu-ns 9000000 close-ns 8000000 close-cpu-ns 3 maps 2 programs 1 links 295120 map-bytes 1 trampolines-delta 2 ftrace-lines-delta -4096 slab-bytes-delta 0 vmalloc-bytes-delta\n")
		for _, s := range sets {
			start := startScale * 1e7 * math.Sqrt(float64(s.n))
			fmt.Fprintf(&b, "BenchmarkMultiStart/fsession-multi/%s-2 20000 1100 ns/op %d functions %.0f start-ns %.0f start-cpu-ns %.0f close-ns 1000 close-cpu-ns %.0f start-busy-ns %d close-busy-ns 3 maps 1 programs 1 links 295120 map-bytes %d trampolines-delta %d ftrace-lines-delta %d slab-bytes-delta 0 vmalloc-bytes-delta\n",
				s.name, s.n, start, start/2, start/3, 1.5*start, 1000000*s.n, s.n, 2*s.n, 1400*s.n)
			if s.n == 1000 {
				fmt.Fprintf(&b, "%sfsession-multi/n1000: synchronize_rcu_tasks_generic ← ftrace_shutdown 70%%, running 30%% (80 samples, every 10ms)\n",
					suite.MultiCloseWaitsPrefix)
				fmt.Fprintf(&b, "%sfsession-multi/n1000: do_exit 12 (12), 3 more functions\n", suite.MultiLostFunctionsPrefix)
			}
			if s.name == "all" {
				fmt.Fprintf(&b, "BenchmarkMultiStart/kprobe-session/all\n%skprobe-session: all refused: kprobe-session: attach: creating kprobe_multi link: cannot allocate memory\n", suite.MultiStopPrefix)
				b.WriteString("    multistart_test.go:200: Start failed: kprobe-session: attach: creating kprobe_multi link: cannot allocate memory\n--- SKIP: BenchmarkMultiStart/kprobe-session/all\n")
			} else {
				fmt.Fprintf(&b, "BenchmarkMultiStart/kprobe-session/%s-2 20000 1100 ns/op %d functions %d start-ns 10000000 close-ns\n", s.name, s.n, 70000000+20000*s.n)
			}
			switch {
			case s.n <= 1000:
				fmt.Fprintf(&b, "BenchmarkMultiStart/fentry-fexit-each/%s-2 20000 1100 ns/op %d functions %d start-ns %d close-ns\n", s.name, s.n, 20000000*s.n, 16000000*s.n)
				if s.n == 1000 {
					fmt.Fprintf(&b, "%sfentry-fexit-each: n1000 budget: Start took 20.0 s, beyond the 10s budget\n", suite.MultiStopPrefix)
				}
			default:
				fmt.Fprintf(&b, "BenchmarkMultiStart/fentry-fexit-each/%s\n    multistart_test.go:180: not attempted: fentry-fexit-each stopped at n1000 budget: Start took 20.0 s\n--- SKIP: BenchmarkMultiStart/fentry-fexit-each/%s\n", s.name, s.name)
			}
			switch {
			case s.n <= 10:
				fmt.Fprintf(&b, "BenchmarkMultiStart/bpftrace-wildcard-kprobe/%s-2 20000 1100 ns/op %d functions %d start-ns 900000000 close-ns 2 probes\n", s.name, s.n, map[int]int{1: 2100000000, 10: 6000000000}[s.n])
			case s.n == 100:
				fmt.Fprintf(&b, "%sbpftrace-wildcard-kprobe: n100 predicted: the fit of the 2 sizes measured predicts a Start of 17.1 s, beyond the 10s budget\n", suite.MultiStopPrefix)
				fmt.Fprintf(&b, "BenchmarkMultiStart/bpftrace-wildcard-kprobe/%s\n    multistart_test.go:180: not attempted: n100 predicted\n--- SKIP: BenchmarkMultiStart/bpftrace-wildcard-kprobe/%s\n", s.name, s.name)
			default:
				fmt.Fprintf(&b, "BenchmarkMultiStart/bpftrace-wildcard-kprobe/%s\n    multistart_test.go:180: not attempted: stopped\n--- SKIP: BenchmarkMultiStart/bpftrace-wildcard-kprobe/%s\n", s.name, s.name)
			}
		}
	}
	return b.String()
}

// mu is the multi family's part of s.
func mu(s *Summary) *multiPart { p, _ := partOf[*multiPart](s); return p }

func multiFamily(t *testing.T) *Family {
	f, err := LookupFamily("multi")
	require.NoError(t, err)
	return f
}

func growthOf(t *testing.T, p *multiPart, name string) Growth {
	return named(t, p.Growth, name, func(g Growth) string { return g.Name })
}

// named is the item of items whose name is name; t fails without one.
func named[T any](t *testing.T, items []T, name string, nameOf func(T) string) T {
	t.Helper()
	for _, it := range items {
		if nameOf(it) == name {
			return it
		}
	}
	t.Fatalf("no %T named %q", *new(T), name)
	return *new(T)
}

func TestSummarizeMulti(t *testing.T) {
	s := summaryOf(t, multiRounds(6))
	assert.Same(t, multiFamily(t), s.Family)
	p := mu(s)
	require.NotNil(t, p)
	assert.Equal(t, []functionSet{{"readpath", 16}, {"n1", 1}, {"n10", 10}, {"n100", 100}, {"n1000", 1000}, {"n10000", 10000},
		{"all", 40000}}, p.Sets)
	assert.Equal(t, "73.2", p.SetsBuilt)
	assert.Equal(t, "10s", p.Budget)
	assert.Equal(t, []string{"bpftrace 0.27.1-1"}, p.Versions)
	assert.Empty(t, s.Missing, "BenchmarkMultiStart is expected in one process only")

	require.Len(t, p.Readpath, 2)
	fm, bt := p.Readpath[0], p.Readpath[1]
	assert.Equal(t, "fsession-multi", fm.Name, "the run's order: mechanisms, then peers")
	assert.Equal(t, estimate{Center: 2000, lo: 2000, hi: 2000, N: 6}, fm.Overhead.estimate)
	assert.Equal(t, 1.0, fm.Ratio)
	assert.Equal(t, 17e6, fm.Start.Center)
	assert.True(t, bt.Peer)
	assert.Equal(t, 8002.5, bt.Overhead.Center)
	assert.InDelta(t, 4.0, bt.Ratio, 0.01)

	assert.Equal(t, []string{"fsession-multi", "kprobe-session", "fentry-fexit-each", "bpftrace-wildcard-kprobe", "fsession"},
		func() (names []string) {
			for _, g := range p.Growth {
				names = append(names, g.Name)
			}
			return names
		}())
	fsm := growthOf(t, p, "fsession-multi")
	assert.Nil(t, fsm.stop)
	assert.InDelta(t, 0.5, fsm.StartFit.slope, 1e-9)
	assert.Len(t, fsm.Cells, 6)
	assert.Equal(t, 1400.0*40000, fsm.Cells[5].units["slab-bytes-delta"])

	each := growthOf(t, p, "fentry-fexit-each")
	require.NotNil(t, each.stop)
	assert.Equal(t, suite.Stop{Size: "n1000", Reason: suite.StopBudget, Text: "Start took 20.0 s, beyond the 10s budget"}, *each.stop)
	assert.True(t, each.Cells[3].Measured, "the size past the budget was measured")
	assert.True(t, each.Cells[4].extrapolated)
	assert.InDelta(t, 20e6*10000, each.predictedStart(each.Cells[4]), 1e3, "slope 1 extrapolated")

	ks := growthOf(t, p, "kprobe-session")
	assert.True(t, ks.Cells[5].refused)
	assert.False(t, ks.Cells[5].extrapolated, "no extrapolation past a refusal")

	bp := growthOf(t, p, "bpftrace-wildcard-kprobe")
	assert.True(t, bp.Peer)
	assert.False(t, bp.Cells[2].Measured)
	assert.True(t, bp.Cells[2].extrapolated, "a predicted stop's size is the fit's")
	assert.False(t, bp.StartFit.hasCI(), "two sizes: no interval")

	single := growthOf(t, p, "fsession")
	assert.True(t, single.Single)
	require.Len(t, single.Cells, 1)
	assert.Equal(t, "vfs_read", single.Cells[0].Size)
	assert.False(t, single.HasStartFit)

	targets := p.Targets(Meta{{"duration-s", "1500"}})
	assert.Contains(t, targets, target{"fsession-multi: every size up to n10000, or to where the kernel refuses it or the budget stops it", "measured to n10000", "yes"})
	assert.Contains(t, targets, target{"fentry-fexit-each: every size up to n10000, or to where the kernel refuses it or the budget stops it", "budget stop at n1000, extrapolated beyond", "yes"})
	assert.Contains(t, targets, target{"one run ≤ 30 min, boot included", "1500 s (25m0s)", "yes"})
	assert.Contains(t, targets, target{"fsession-multi/readpath overhead: 95% CI within ±3%", "±0.0%", "yes"})
}

func TestMultiMarkdown(t *testing.T) {
	s := summaryOf(t, multiRounds(6))
	md := markdown(t, s, Meta{{"suite", "multi (^BenchmarkMultiRead$)"}, {"duration-s", "2000"}}, "make bench-report")
	assertContains(t, md,
		"> This run measured the mechanisms on many functions at once (`make bench-multi`",
		"> Every figure below was measured in a QEMU guest under TCG (software emulation) with QEMU's instruction counter",
		"Built once per run on the running kernel, in its first round (73.2 guest s), for every attach kind of the run's mechanisms and peers (fentry fexit kprobe.multi)",
		"| n10000 | 10000 | [sets/n10000.txt](sets/n10000.txt) |\n",
		"| fsession-multi | 3002 [3000, 3005] | +2000 [2000, 2000] | 0.031 | 1.00× | 0.017 | one fsession.multi program \\| a tracing_multi link |\n",
		"| bpftrace-wildcard-kprobe | 9005 [9000, 9010] | +8002 [8000, 8005] | 0.031 | 4.00× | 2.50 |  |\n",
		"Peers: bpftrace 0.27.1-1.",
		"Start's time budget: 10s.",
		"![Start against functions traced, log-log](growth.svg)",
		"| mechanism or peer | n1 (1) | n10 (10) | n100 (100) | n1000 (1000) | n10000 (10000) | all (40000) | slope of Start [95% CI] | slope of Close [95% CI] | slope of Close, CPUs busy [95% CI] |\n",
		"| fsession-multi | 0.01 | 0.0316 | 0.1 | 0.316 | 1.00 | 2.00 | 0.50 [0.50, 0.50] | 0.50 [0.50, 0.50] | 1.00 [1.00, 1.00] |\n",
		"| fentry-fexit-each | 0.02 | 0.2 | 2.00 | 20.0 | ≈ 200 (extrapolated) | ≈ 800 (extrapolated) | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] | n/a |\n",
		"| kprobe-session | 0.07 | 0.0702 | 0.072 | 0.09 | 0.27 | refused | 0.13 [-0.05, 0.30] | 0.00 [0.00, 0.00] | n/a |\n",
		"| bpftrace-wildcard-kprobe | 2.10 | 6.00 | ≈ 17.1 (extrapolated) | ≈ 49.0 (extrapolated) | ≈ 140 (extrapolated) | ≈ 263 (extrapolated) | 0.46 [no CI: 2 points] | 0.00 [no CI: 2 points] | n/a |\n",
		"| fsession (vfs_read alone) | 0.017 (vfs_read) |  |  |  |  |  | n/a | n/a | n/a |\n",
		"| kprobe-session | all | Start failed there | kprobe-session: attach: creating kprobe_multi link: cannot allocate memory |\n",
		"| fentry-fexit-each | n1000 | Start passed the time budget there; the larger sizes are extrapolated | Start took 20.0 s, beyond the 10s budget |\n",
		"| fsession-multi | none | every size measured |  |\n",
		"| fsession | n/a | traces vfs_read alone |  |\n",
		"| one run ≤ 30 min, boot included | 2000 s (33m20s) | **no** |\n",
		"### fsession-multi\n\none fsession.multi program \\| a tracing_multi link\n\n",
		"| all | 40000 | 2.00 | 1000 | 0.667 | 0.001 | 3.00 | 40.0 | 3 / 1 / 1 | 288 KiB | +40000 | +80000 | +53.4 MiB | 0 B | 1100 | n/a / n/a |\n",
		"| vfs_read | 1 | 0.017 | 15.0 | 0.009 | 8.00 | n/a | n/a | 3 / 2 / 1 | 288 KiB | +1 | +2 | -4.00 KiB | 0 B | 2000 | n/a / n/a |\n",
		"| kprobe-session | all | Start failed there |",
		"What *Close, CPUs busy* waited in: the closing thread's kernel stack",
		"Close's budget: 1m0s, idle or with the CPUs busy",
		"\n- n1000: synchronize_rcu_tasks_generic ← ftrace_shutdown 70%, running 30% (80 samples, every 10ms)\n",
		"those whose entry a later call of the thread overwrote because the return was missed):\n\n- n1000: do_exit 12 (12), 3 more functions\n",
		"## `tracebench trace`: attach, and exit after SIGINT, with the CPUs busy\n",
		"| fsession-multi | n1000 | 3.00 | 5.00 |\n",
		"- [growth.svg](growth.svg): the plot above\n",
	)
	assert.NotContains(t, md, "## Missing")
	assert.NotContains(t, md, "## Cost per read(2)\n", "the overhead family's sections are not shown")
}

func TestMultiChart(t *testing.T) {
	s := summaryOf(t, multiRounds(6))
	charts := mu(s).Charts(s)
	require.Len(t, charts, 1)
	var b bytes.Buffer
	require.NoError(t, charts[0].Draw(&b, "svg"))
	assertContains(t, b.String(), "<?xml", "fsession-multi: slope 0.50 [0.50, 0.50]", "fentry-fexit-each: slope 1.00",
		"bpftrace-wildcard-kprobe: slope", "fsession (vfs_read alone)", "functions traced (log scale)")
	assert.Error(t, (&multiPart{}).writeGrowthChart(&b, s, "svg"), "nothing to draw")
}

// A readpath row missing from a round is listed; BenchmarkMultiStart,
// run in one process only, is not.
func TestMultiMissing(t *testing.T) {
	out := strings.Replace(multiRounds(2), "BenchmarkMultiRead/fsession-multi/readpath-2 20000 3000 ns/op 17000000 start-ns 295120 map-bytes\n", "", 1)
	s := summaryOf(t, out)
	require.Len(t, s.Missing, 1)
	assert.Equal(t, Missing{Key: Key{multiRead, "fsession-multi", "readpath"}, Rounds: []int{1}}, s.Missing[0])
}

// A malformed stop line is shown as what it is, not dropped.
func TestMultiBadStop(t *testing.T) {
	out := strings.Replace(multiRounds(1), suite.MultiStopPrefix+"kprobe-session: all refused:", suite.MultiStopPrefix+"kprobe-session: all:", 1)
	p := mu(summaryOf(t, out))
	ks := growthOf(t, p, "kprobe-session")
	require.NotNil(t, ks.stop)
	assert.Contains(t, ks.stop.Text, `is not "<size> <reason>: <text>"`)
}

func TestParseStop(t *testing.T) {
	stop, err := suite.ParseStop("n1000 budget: Start took 20.0 s: beyond")
	require.NoError(t, err)
	assert.Equal(t, suite.Stop{Size: "n1000", Reason: "budget", Text: "Start took 20.0 s: beyond"}, stop)
	assert.Equal(t, "n1000 budget: Start took 20.0 s: beyond", stop.String())
	stop, err = suite.ParseStop("all loop: Start took 1.9 s; then 2048 reads")
	require.NoError(t, err)
	assert.Equal(t, suite.StopLoop, stop.Reason)
	for _, bad := range []string{"", "n1000", "n1000 budget", "n1000 slow: x", " budget: x"} {
		_, err := suite.ParseStop(bad)
		assert.Error(t, err, bad)
	}
}

// A readpath row that failed in every round and a size that failed are
// shown as not measured, never as a figure.
func TestMultiFailedIsNotMeasured(t *testing.T) {
	out := strings.ReplaceAll(multiRounds(2), "BenchmarkMultiRead/fsession-multi/readpath-2 20000 3000 ns/op 17000000 start-ns 295120 map-bytes\n",
		"    multiread_test.go:89: fsession-multi: vfs_read: 0 calls counted: no comparison\n--- FAIL: BenchmarkMultiRead/fsession-multi/readpath\n")
	out = strings.ReplaceAll(out, "BenchmarkMultiRead/fsession-multi/readpath-2 20000 3001 ns/op 17000000 start-ns 295120 map-bytes\n",
		"--- FAIL: BenchmarkMultiRead/fsession-multi/readpath\n")
	out = regexp.MustCompile(`BenchmarkMultiStart/fsession-multi/n10-2 [^\n]*\n`).ReplaceAllString(out, "--- FAIL: BenchmarkMultiStart/fsession-multi/n10\n")
	s := summaryOf(t, out)
	md := markdown(t, s, Meta{{"duration-s", "2000"}}, "make bench-report")
	assertContains(t, md, "| fsession-multi | not measured (see Failed) | n/a |",
		"| fsession-multi | n10 | not measured there (see Failed or Missing) |  |\n")
	assert.NotContains(t, md, "| fsession-multi | 0 [0, 0]")
}

// A size whose read loop passed the budget has no figures: the cell is
// cut, the stop says why, the larger sizes are the fit's.
func TestMultiLoopCut(t *testing.T) {
	out := regexp.MustCompile(`BenchmarkMultiStart/fsession-multi/n10000-2 [^\n]*\n`).ReplaceAllString(multiRounds(1),
		suite.MultiStopPrefix+"fsession-multi: n10000 loop: Start took 1.0 s; then 2048 reads of 1 byte (1000 warm-up) took "+
			"10.2 s with the functions traced, 4980 µs each, beyond the 10s budget\n"+
			"--- SKIP: BenchmarkMultiStart/fsession-multi/n10000\n")
	out = regexp.MustCompile(`BenchmarkMultiStart/fsession-multi/all-2 [^\n]*\n`).ReplaceAllString(out,
		"--- SKIP: BenchmarkMultiStart/fsession-multi/all\n")
	s := summaryOf(t, out)
	fsm := growthOf(t, mu(s), "fsession-multi")
	require.NotNil(t, fsm.stop)
	assert.Equal(t, suite.StopLoop, fsm.stop.Reason)
	assert.True(t, fsm.Cells[4].cut)
	assert.False(t, fsm.Cells[4].Measured)
	assert.False(t, fsm.Cells[5].Measured, "not attempted past the cut")
	assert.True(t, fsm.Cells[5].extrapolated)
	assert.Equal(t, "loop cut", mu(s).GrowthCells(fsm)[4])
	assert.Contains(t, mu(s).Targets(Meta{{"duration-s", "1500"}}), target{"fsession-multi: every size up to n10000, or to " +
		"where the kernel refuses it or the budget stops it", "read loop over the budget at n10000", "yes"})
	md := markdown(t, s, Meta{{"duration-s", "1500"}}, "make bench-report")
	assertContains(t, md, "| fsession-multi | n10000 | the read loop with it traced passed the time budget there")
}

// A peer killed for not attaching within the peer limit has no Start
// there: the cell is a lower bound, never the fit's smaller guess, and
// the sizes past it are not attempted (bpftrace --no-feature
// kprobe_session at all, 7.2 guest: the fit said 5.12 s of a Start over
// 30 s).
func TestMultiKilledIsALowerBound(t *testing.T) {
	out := strings.Replace(multiRounds(1), suite.MultiBudget+": 10s\n", suite.MultiBudget+": 10s\n"+suite.MultiPeerLimit+": 30s\n", 1)
	for _, s := range []string{"n10", "n100", "n1000", "n10000", "all"} {
		out = regexp.MustCompile(`(?s)BenchmarkMultiStart/bpftrace-wildcard-kprobe/`+s+`\n.*?--- SKIP: BenchmarkMultiStart/bpftrace-wildcard-kprobe/`+s+`\n|`+
			`BenchmarkMultiStart/bpftrace-wildcard-kprobe/`+s+`-2 [^\n]*\n|`+suite.MultiStopPrefix+`bpftrace-wildcard-kprobe: [^\n]*\n`).ReplaceAllString(out, "")
	}
	out = strings.Replace(out, "BenchmarkMultiStart/bpftrace-wildcard-kprobe/n1-2 ", "BenchmarkMultiStart/bpftrace-wildcard-kprobe/n10-2 20000 1100 ns/op 10 functions 2200000000 start-ns 900000000 close-ns 2 probes\n"+
		suite.MultiStopPrefix+"bpftrace-wildcard-kprobe: n100 killed: Start did not end within 30s (3 times the budget): the tool was killed\n"+
		"BenchmarkMultiStart/bpftrace-wildcard-kprobe/n1-2 ", 1)
	s := summaryOf(t, out)
	bt := growthOf(t, mu(s), "bpftrace-wildcard-kprobe")
	require.NotNil(t, bt.stop)
	assert.Equal(t, suite.StopKilled, bt.stop.Reason)
	assert.True(t, bt.hasTailFit, "two sizes measured: a fit that could extrapolate")
	cells := mu(s).GrowthCells(bt)
	assert.Equal(t, []string{"2.10", "2.20", "> 30s (killed)", "not attempted", "not attempted", "not attempted"}, cells)
	for _, c := range bt.Cells[2:] {
		assert.False(t, c.extrapolated, c.Size)
	}
	assert.Contains(t, mu(s).Targets(Meta{{"duration-s", "1500"}}), target{"bpftrace-wildcard-kprobe: every size up to n10000, or to " +
		"where the kernel refuses it or the budget stops it", "killed at n100, not attached within the peer's start limit", "yes"})
	md := markdown(t, s, Meta{{"duration-s", "1500"}}, "make bench-report")
	assertContains(t, md, "| bpftrace-wildcard-kprobe | n100 | not attached within the peer's start limit, so killed",
		"A peer not attached within 30s is killed")
}

// BenchmarkMultiStart in processes of its own, after the rounds (each
// in a fresh kernel): those processes are no rounds, and the report reads
// the same figures as from a first round that ran it.
func TestMultiStartApartFromTheRounds(t *testing.T) {
	together := multiRounds(3)
	head := together[:strings.Index(together, "BenchmarkMultiRead\n")]
	first, rest, ok := strings.Cut(together[len(head):], "tracebench-kernel:")
	require.True(t, ok)
	reads, starts, ok := strings.Cut(first, "BenchmarkMultiStart\n")
	require.True(t, ok)
	apart := head + reads + "tracebench-kernel:" + rest + head + suite.ApartKey + ": true\nBenchmarkMultiStart\n" + starts
	s, want := summaryOf(t, apart), summaryOf(t, together)
	assert.Equal(t, 3, s.Rounds)
	assert.Empty(t, s.Missing)
	meta := Meta{{"duration-s", "1500"}}
	apartMD, togetherMD := markdown(t, s, meta, "make bench-report"), markdown(t, want, meta, "make bench-report")
	assert.Contains(t, apartMD, "BenchmarkMultiStart, once per run, apart from the rounds: each mechanism or peer in a fresh guest")
	assert.Contains(t, togetherMD, "BenchmarkMultiStart, once per run, in the first round")
	other := regexp.MustCompile(`(?m)^BenchmarkMultiStart, once per run, .*$`)
	assert.Equal(t, other.ReplaceAllString(togetherMD, ""), other.ReplaceAllString(apartMD, ""), "the same figures")
}

// The report says the peers' programs were in RAM only for a run whose
// benchmark said so.
func TestMultiPeerPreload(t *testing.T) {
	assert.False(t, mu(summaryOf(t, multiRounds(1))).Preload, "no line: not said")
	out := strings.Replace(multiRounds(1), suite.MultiBudget+": 10s\n", suite.MultiBudget+": 10s\n"+suite.MultiPeerPreload+": true\n", 1)
	assert.True(t, mu(summaryOf(t, out)).Preload)
}
