package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/suite"
)

// twoRounds is `go test -bench -v` output of package bench as
// bench/rounds.sh collects it: two processes, rotated order, a mechanism
// the kernel lacks, a failure and the BPF statistics benchmark.
const twoRounds = `tracebench-kernel: 7.2.13+deb14-amd64
tracebench-emulation: tcg
tracebench-cpus: 2
goos: linux
goarch: amd64
pkg: tracebench/bench
cpu: QEMU TCG CPU version 2.5+
BenchmarkVFSRead
BenchmarkVFSRead/baseline
BenchmarkVFSRead/baseline-2         	   20000	      4914 ns/op
BenchmarkVFSRead/fentry-fexit/tgid-miss
BenchmarkVFSRead/fentry-fexit/tgid-miss-2     	   20000	      7442 ns/op
BenchmarkVFSRead/kprobe-kretprobe/tgid-miss
    bench_test.go:271: kprobe-kretprobe needs kprobes (CONFIG_KPROBES with perf kprobe events); this kernel is 7.2.13+deb14-amd64: /sys/bus/event_source/devices/kprobe/type does not exist
--- SKIP: BenchmarkVFSRead/kprobe-kretprobe/tgid-miss
BenchmarkVFSRead/fentry-fexit/every-call
BenchmarkVFSRead/fentry-fexit/every-call-2              	   20000	     29658 ns/op	         0 dropped/s	     25531 events/s
BenchmarkBPFStats
BenchmarkBPFStats/fentry-fexit/tgid-miss
BenchmarkBPFStats/fentry-fexit/tgid-miss-2              	   20000	      6162 ns/op	      1479 bpf-ns/op	       774.9 vfs_read_entry-ns/run	         1.000 vfs_read_entry-runs/op	       704.6 vfs_read_exit-ns/run	         1.000 vfs_read_exit-runs/op
PASS
tracebench-kernel: 7.2.13+deb14-amd64
tracebench-emulation: tcg
tracebench-cpus: 2
goos: linux
goarch: amd64
pkg: tracebench/bench
cpu: QEMU TCG CPU version 2.5+
BenchmarkVFSRead
BenchmarkVFSRead/fentry-fexit/tgid-miss
BenchmarkVFSRead/fentry-fexit/tgid-miss-2     	   20000	      7000 ns/op
BenchmarkVFSRead/fentry-fexit/every-call
    bench_test.go:301: fentry-fexit/every-call: 0 calls counted for 20000 reads: {Calls:0}
--- FAIL: BenchmarkVFSRead/fentry-fexit/every-call
BenchmarkVFSRead/baseline
BenchmarkVFSRead/baseline-2         	   20000	      5000 ns/op
--- FAIL: BenchmarkVFSRead
FAIL
`

func TestParse(t *testing.T) {
	run, err := parse(strings.NewReader(twoRounds), "raw.txt")
	require.NoError(t, err)

	assert.Equal(t, "7.2.13+deb14-amd64", run.config["tracebench-kernel"])
	assert.Equal(t, "tcg", run.config["tracebench-emulation"])
	assert.Equal(t, "QEMU TCG CPU version 2.5+", run.config["cpu"])

	base := Key{vfsRead, Baseline, ""}
	fentry := Key{vfsRead, "fentry-fexit", "tgid-miss"}
	every := Key{vfsRead, "fentry-fexit", "every-call"}
	stats := Key{bpfStats, "fentry-fexit", "tgid-miss"}
	assert.Equal(t, []float64{4914, 5000}, run.values(base, "ns/op"))
	assert.Equal(t, []float64{7442, 7000}, run.values(fentry, "ns/op"))
	assert.Equal(t, []float64{25531}, run.values(every, "events/s"))
	assert.Equal(t, []float64{0}, run.values(every, "dropped/s"))
	// units stay as printed, not benchfmt's seconds.
	assert.Equal(t, []float64{1479}, run.values(stats, "bpf-ns/op"))
	assert.Equal(t, []float64{774.9}, run.values(stats, "vfs_read_entry-ns/run"))
	assert.Equal(t, []float64{1}, run.values(stats, "vfs_read_exit-runs/op"))
	assert.Len(t, run.samples, 4)

	assert.Equal(t, map[Key]string{
		{vfsRead, "kprobe-kretprobe", "tgid-miss"}: "kprobe-kretprobe needs kprobes (CONFIG_KPROBES with perf kprobe events); this kernel is 7.2.13+deb14-amd64: /sys/bus/event_source/devices/kprobe/type does not exist",
	}, run.Skipped)
	assert.Equal(t, map[Key]string{
		every: "fentry-fexit/every-call: 0 calls counted for 20000 reads: {Calls:0}",
	}, run.Failed, "not the message-less failure of the parent benchmark")
}

func TestParseWholeBenchmarkSkipped(t *testing.T) {
	out := "BenchmarkVFSRead\n    bench_test.go:160: loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000\n--- SKIP: BenchmarkVFSRead\n"
	run, err := parse(strings.NewReader(out), "raw.txt")
	require.NoError(t, err)
	assert.Equal(t, map[Key]string{{bench: vfsRead}: "loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000"}, run.Skipped)
	s := summarize(run)
	const why = "loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000"
	assert.Equal(t, []outcome{{Who: "BenchmarkVFSRead", N: 1, Reasons: []reason{{Msg: why, N: 1, Benchmarks: []string{"BenchmarkVFSRead"}}}}}, s.Skipped)
	assert.False(t, ov(s).HasBase)
	assert.Equal(t, "no mechanism ran on this kernel", ov(s).NoOverhead())

	md := markdown(t, s, nil, "")
	assert.Contains(t, md, "> **No mechanism ran on this kernel** (*Skipped* below says why), so this report has no overhead over baseline, no chart and no benchstat comparison. Nothing was measured.\n")
	assert.Contains(t, md, "No baseline was measured, so there is no overhead to report.")
	assert.Contains(t, md, "## Skipped\n\n- BenchmarkVFSRead (1 sub-benchmark): "+why+"\n")
	assert.Contains(t, md, "## Files\n\n- [raw.txt](raw.txt): the raw `go test -bench` output of every round\n\nHow to read it: bench/README.md.\n")
}

func TestParseRejectsForeignBenchmark(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkOther-2 10 5 ns/op\n"), "raw.txt")
	assert.ErrorContains(t, err, `benchmark "Other-2" is neither`)
	_, err = parse(strings.NewReader("BenchmarkVFSRead/baseline-2 10 ns/op\n"), "raw.txt")
	assert.ErrorContains(t, err, "raw.txt:1")
}

// rounds builds n rounds of output in which every figure is base + round:
// baseline 100+r ns/op, fentry-fexit 200+r and fsession 150+r in
// tgid-miss, fentry-fexit 300+r in every-call (events/s 1000+r, dropped/s
// 0), and program bodies of 40+r ns per read, plus a program that never
// runs (like a task iterator).
func rounds(n int) string { return roundsWith(n, nil) }

// roundsWith is rounds(n) with extra(r) appended to round r.
func roundsWith(n int, extra func(r int) string) string {
	var b strings.Builder
	for r := range n {
		fmt.Fprintf(&b, "tracebench-kernel: 7.2.13+deb14-amd64\ntracebench-emulation: tcg\ntracebench-cpus: 2\ncpu: QEMU TCG CPU version 2.5+\n")
		fmt.Fprintf(&b, "BenchmarkVFSRead/baseline-2 40000 %d ns/op\n", 100+r)
		fmt.Fprintf(&b, "BenchmarkVFSRead/fsession/tgid-miss-2 40000 %d ns/op\n", 150+r)
		fmt.Fprintf(&b, "BenchmarkVFSRead/fentry-fexit/tgid-miss-2 40000 %d ns/op\n", 200+r)
		fmt.Fprintf(&b, "BenchmarkVFSRead/fentry-fexit/every-call-2 40000 %d ns/op 0 dropped/s %d events/s\n", 300+r, 1000+r)
		fmt.Fprintf(&b, "BenchmarkBPFStats/fentry-fexit/tgid-miss-2 40000 %d ns/op %d bpf-ns/op 0 count_pending-runs/op %d vfs_read_entry-ns/run 1 vfs_read_entry-runs/op\n", 250+r, 40+r, 40+r)
		if extra != nil {
			b.WriteString(extra(r))
		}
	}
	return b.String()
}

// ov and pe are the overhead and peers families' parts of s.
func ov(s *Summary) *overheadPart { o, _ := partOf[*overheadPart](s); return o }
func pe(s *Summary) *peersPart    { p, _ := partOf[*peersPart](s); return p }

func summaryOf(t *testing.T, out string) *Summary {
	t.Helper()
	run, err := parse(strings.NewReader(out), "raw.txt")
	require.NoError(t, err)
	return summarize(run)
}

// partOf returns s's part of type P.
func partOf[P Part](s *Summary) (P, bool) {
	for _, p := range s.parts {
		if part, ok := p.Part.(P); ok {
			return part, true
		}
	}
	var none P
	return none, false
}

// markdown is the README.md WriteMarkdown writes of s.
func markdown(t *testing.T, s *Summary, meta Meta, regenerate string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, s, meta, regenerate))
	return b.String()
}

// drawChart draws the overhead family's chart of s as bench report does,
// in SVG.
func drawChart(w io.Writer, s *Summary) error { return ov(s).Charts(s)[0].Draw(w, "svg") }

// chart is the SVG drawChart draws; drawing it must succeed.
func chart(t *testing.T, s *Summary) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, drawChart(&b, s))
	return b.String()
}

// assertContains asserts that text holds each of want.
func assertContains(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		assert.Contains(t, text, w)
	}
}

func TestSummarize(t *testing.T) {
	s := summaryOf(t, rounds(6))
	assert.Equal(t, "7.2.13+deb14-amd64", s.Kernel)
	assert.Equal(t, "Linux 7.2.13+deb14-amd64, QEMU guest under TCG (software emulation)", s.Label())
	assert.Equal(t, []string{"tgid-miss", "every-call"}, ov(s).cases)
	require.True(t, ov(s).HasBase)
	assert.Equal(t, 102.5, ov(s).Baseline.Center)

	require.Len(t, ov(s).Rows, 3)
	ref, fs, every := ov(s).Rows[0], ov(s).Rows[1], ov(s).Rows[2]
	assert.Equal(t, [2]string{"fentry-fexit", "tgid-miss"}, [2]string{ref.Mechanism, ref.Case}, "reference first")
	assert.Equal(t, [2]string{"fsession", "tgid-miss"}, [2]string{fs.Mechanism, fs.Case})
	assert.Equal(t, [2]string{"fentry-fexit", "every-call"}, [2]string{every.Mechanism, every.Case})

	// Each round's difference is 100: paired, the round's own level
	// (+r) cancels. 6 positive differences: p = 2/2^6.
	assert.Equal(t, 6, s.Rounds)
	assert.Equal(t, estimate{Center: 100, lo: 100, hi: 100, N: 6}, ref.Overhead.estimate)
	assert.Equal(t, 2.0/64, ref.Overhead.P)
	assert.False(t, ref.HasVsReference)
	assert.Equal(t, 1.0, ref.Ratio)

	assert.Equal(t, estimate{Center: 50, lo: 50, hi: 50, N: 6}, fs.Overhead.estimate)
	require.True(t, fs.HasVsReference)
	assert.Equal(t, estimate{Center: -50, lo: -50, hi: -50, N: 6}, fs.VsReference.estimate)
	assert.Equal(t, 0.5, fs.Ratio)
	assert.False(t, fs.hasBody)

	require.True(t, ref.hasBody)
	assert.Equal(t, 42.5, ref.Body.Center)
	d, ok := ref.dispatch()
	assert.True(t, ok)
	assert.Equal(t, 57.5, d)
	require.Len(t, ref.Programs, 2)
	assert.Equal(t, "count_pending", ref.Programs[0].Name)
	assert.False(t, ref.Programs[0].HasNsPerRun)
	assert.Equal(t, "vfs_read_entry", ref.Programs[1].Name)
	assert.True(t, ref.Programs[1].HasNsPerRun)
	assert.Equal(t, 1.0, ref.Programs[1].RunsPerOp.Center)

	assert.True(t, every.HasEvents)
	assert.Equal(t, 1002.5, every.Events.Center)
	assert.Equal(t, 1.0, every.Ratio)
	assert.False(t, every.hasBody, "no BPFStats for every-call")
	_, ok = every.dispatch()
	assert.False(t, ok)
}

func TestMarkdown(t *testing.T) {
	s := summaryOf(t, rounds(6))
	meta := Meta{{"where", "guest"}, {"host-load-start", "0.12 0.30 0.41"}, {"custom", "a|b"}}
	md := markdown(t, s, meta, "make bench-report BENCH_RESULTS=/tmp/r")
	assertContains(t, md,
		"# vfs_read tracing overhead: Linux 7.2.13+deb14-amd64, QEMU guest under TCG (software emulation)\n",
		"| host load average (1, 5, 15 min) at start | 0.12 0.30 0.41 |\n",
		"| custom | a\\|b |\n",
		"| clock | not recorded (tracebench-clock missing) |\n| rounds in raw.txt | 6 |\n",
		"**baseline** (nothing attached): 102 ns per read(2) [100, 105], n=6.",
		"| case | mechanism | ns per read(2), median [95% CI] | overhead over baseline, ns [95% CI] |",
		"| tgid-miss | fentry-fexit | 202 [200, 205] | +100 [100, 100] | 0.031 | (reference) |  | 1.00× |\n",
		"| tgid-miss | fsession | 152 [150, 155] | +50.0 [50.0, 50.0] | 0.031 | -50.0 [-50.0, -50.0] | 0.031 | 0.50× |\n",
		"| every-call | fentry-fexit | 302 [300, 305] | +200 [200, 200] | 0.031 | (reference) |  | 1.00× |\n",
		"## Targets\n\n| target | this run | met |\n|---|---|---|\n"+
			"| ≥ 6 rounds | 6 | yes |\n"+
			"| one run ≤ 600 s, boot included | not recorded | n/a |\n"+
			"| fentry-fexit/tgid-miss overhead: 95% CI within ±3% | ±0.0% | yes |\n"+
			"| fsession/tgid-miss overhead: 95% CI within ±3% | ±0.0% | yes |\n"+
			"| fentry-fexit/every-call: no event dropped | 0 in every round | yes |\n\n",
		"| every-call | fentry-fexit | 1002 [1000, 1005] | 0 [0, 0] | n/a |\n",
		"| tgid-miss | fentry-fexit | 42.5 [40.0, 45.0] | 57.5 | count_pending: did not run (not attached to vfs_read)<br>vfs_read_entry: 42.5 [40.0, 45.0] × 1.00 |\n",
		"![overhead per mechanism and case](overhead.svg)\n",
		"## Files\n\n"+
			"- [raw.txt](raw.txt): the raw `go test -bench` output of every round\n"+
			"- [meta.txt](meta.txt): when, where and how loaded the host was\n"+
			"- [benchstat-vs-baseline.txt](benchstat-vs-baseline.txt), [benchstat-vs-fentry-fexit.txt](benchstat-vs-fentry-fexit.txt): benchstat's comparisons (benchstat prints sec/op)\n"+
			"- [overhead.svg](overhead.svg): the chart above\n\n"+
			"Regenerate with `make bench-report BENCH_RESULTS=/tmp/r`; how to read it: bench/README.md.\n",
	)
	assert.NotContains(t, md, "## Skipped")
	assert.NotContains(t, md, "No mechanism")
	assert.True(t, strings.HasPrefix(md, "# vfs_read tracing overhead: Linux 7.2.13+deb14-amd64, QEMU guest under TCG (software emulation)\n\n> Every figure below was measured in a QEMU guest"), "the caveat right below the title")
}

func TestMarkdownTooFewRounds(t *testing.T) {
	s := summaryOf(t, rounds(3))
	assert.True(t, math.IsNaN(ov(s).Rows[1].Ratio), "no ratio when the overhead is not significant")
	assert.Equal(t, "overhead n.s.", ov(s).Rows[1].noRatio)
	md := markdown(t, s, nil, "make bench-report")
	assert.NotContains(t, md, "meta.txt", "no meta.txt to list")
	// 3 rounds give a median but no 95% interval, and no signed-rank
	// test can reach p < 0.05 (at best 2/2^3): the report must say so
	// rather than print bounds or a ratio.
	assertContains(t, md,
		"| tgid-miss | fsession | 151 [no CI: n=3] | +50.0 [no CI: n=3] | 0.250 *n.s.* | -50.0 [no CI: n=3] | 0.250 *n.s.* | overhead n.s. |",
		"| ≥ 6 rounds | 3 | **no** |\n",
		"| fsession/tgid-miss overhead: 95% CI within ±3% | no interval (n=3) | **no** |\n")
}

func TestChart(t *testing.T) {
	s := summaryOf(t, rounds(6))
	svg := chart(t, s)
	assert.True(t, strings.HasPrefix(svg, "<?xml"), "an SVG document")
	assertContains(t, svg, "Linux 7.2.13+deb14-amd64, QEMU guest under TCG", "fentry-fexit", "fsession", "tgid-miss", "every-call", ">50.0<", ">100<", ">200<")
	assert.Error(t, drawChart(io.Discard, &Summary{}), "nothing to draw")
}

// withoutBPF adds to rounds(n) a mechanism without BPF programs, as
// package bench prints it: measured by BenchmarkVFSRead (every-call
// without dropped/s, which it cannot count there), skipped by
// BenchmarkBPFStats.
func withoutBPF(n int) string {
	const why = "ftrace-graph has no BPF programs, so no BPF run-time statistics: the kernel's function_graph tracer"
	return roundsWith(n, func(r int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "BenchmarkVFSRead/ftrace-graph/tgid-miss-2 40000 %d ns/op\n", 400+r)
		fmt.Fprintf(&b, "BenchmarkVFSRead/ftrace-graph/every-call-2 40000 %d ns/op %d events/s\n", 900+r, 500+r)
		for _, c := range []string{"tgid-miss", "every-call"} {
			fmt.Fprintf(&b, "BenchmarkBPFStats/ftrace-graph/%s\n    bench_test.go:248: %s\n--- SKIP: BenchmarkBPFStats/ftrace-graph/%s\n", c, why, c)
		}
		return b.String()
	})
}

func TestMechanismWithoutBPF(t *testing.T) {
	s := summaryOf(t, withoutBPF(6))
	require.Len(t, ov(s).Rows, 5)
	graph, ok := findRow(ov(s).Rows, "ftrace-graph", "every-call")
	require.True(t, ok)
	assert.Equal(t, estimate{Center: 800, lo: 800, hi: 800, N: 6}, graph.Overhead.estimate)
	assert.True(t, graph.HasEvents)
	assert.False(t, graph.HasDropped)
	assert.False(t, graph.hasBody)
	assert.Contains(t, graph.BodySkipped, "ftrace-graph has no BPF programs")

	md := markdown(t, s, nil, "")
	assertContains(t, md,
		"| tgid-miss | ftrace-graph | 402 [400, 405] | +300 [300, 300] | 0.031 | +200 [200, 200] | 0.031 | 3.00× |\n",
		"| every-call | ftrace-graph | 502 [500, 505] | n/a | n/a |\n",
		"*n/a*: the mechanism cannot count that in this case",
		"| tgid-miss | fentry-fexit | 42.5 [40.0, 45.0] | 57.5 |",
		"Measured above but not here, since BenchmarkBPFStats skipped them:\n\n- ftrace-graph (tgid-miss, every-call): ftrace-graph has no BPF programs, so no BPF run-time statistics: the kernel's function_graph tracer\n",
		"## Skipped\n\n- ftrace-graph (2 sub-benchmarks): ftrace-graph has no BPF programs",
	)
	assert.NotContains(t, md, "| ftrace-graph | 0 ", "no body row for ftrace-graph")

	svg := chart(t, s)
	assertContains(t, svg, "ftrace-graph", ">800<")
}

// TestOnlyMechanismWithoutBPF: with no BPF statistics at all the section
// still says why, without an empty table.
func TestOnlyMechanismWithoutBPF(t *testing.T) {
	var out strings.Builder
	for _, l := range strings.SplitAfter(withoutBPF(2), "\n") {
		if !strings.Contains(l, "BPFStats/fentry-fexit") {
			out.WriteString(l)
		}
	}
	md := markdown(t, summaryOf(t, out.String()), nil, "")
	assert.Contains(t, md, "## Program body vs dispatch")
	assert.Contains(t, md, "- ftrace-graph (tgid-miss, every-call): ftrace-graph has no BPF programs")
	assert.NotContains(t, md, "| case | mechanism | body ns")
}

// baselineOnly is one round on a kernel that lacks every mechanism, as
// package bench prints it (shortened to two cases): only the baseline ran;
// ftrace-graph is skipped by BenchmarkVFSRead and BenchmarkBPFStats for
// different reasons.
const baselineOnly = `tracebench-kernel: 6.18.44-fc-v595
tracebench-emulation: none
tracebench-cpus: 2
cpu: AMD EPYC
BenchmarkVFSRead
BenchmarkVFSRead/baseline
BenchmarkVFSRead/baseline-2         	     100	       310.3 ns/op
BenchmarkVFSRead/fsession/tgid-miss
    bench_test.go:345: fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595
--- SKIP: BenchmarkVFSRead/fsession/tgid-miss
BenchmarkVFSRead/ftrace-graph/tgid-miss
    bench_test.go:345: ftrace-graph needs tracefs with the function_graph tracer; this kernel is 6.18.44-fc-v595: tracefs is not mounted
--- SKIP: BenchmarkVFSRead/ftrace-graph/tgid-miss
BenchmarkVFSRead/fsession/every-call
    bench_test.go:345: fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595
--- SKIP: BenchmarkVFSRead/fsession/every-call
BenchmarkVFSRead/ftrace-graph/every-call
    bench_test.go:345: ftrace-graph needs tracefs with the function_graph tracer; this kernel is 6.18.44-fc-v595: tracefs is not mounted
--- SKIP: BenchmarkVFSRead/ftrace-graph/every-call
BenchmarkBPFStats
BenchmarkBPFStats/fsession/tgid-miss
    bench_test.go:345: fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595
--- SKIP: BenchmarkBPFStats/fsession/tgid-miss
BenchmarkBPFStats/ftrace-graph/tgid-miss
    bench_test.go:243: ftrace-graph has no BPF programs, so no BPF run-time statistics
--- SKIP: BenchmarkBPFStats/ftrace-graph/tgid-miss
BenchmarkBPFStats/fsession/every-call
    bench_test.go:345: fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595
--- SKIP: BenchmarkBPFStats/fsession/every-call
BenchmarkBPFStats/ftrace-graph/every-call
    bench_test.go:243: ftrace-graph has no BPF programs, so no BPF run-time statistics
--- SKIP: BenchmarkBPFStats/ftrace-graph/every-call
PASS
`

func TestNoMechanismRan(t *testing.T) {
	s := summaryOf(t, baselineOnly)
	assert.True(t, ov(s).HasBase)
	assert.Empty(t, ov(s).Rows)
	assert.False(t, ov(s).hasOverhead())
	assert.Equal(t, "no mechanism ran on this kernel", ov(s).NoOverhead())
	assert.Equal(t, []outcome{
		{Who: "fsession", N: 4, Reasons: []reason{
			{Msg: "fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595", N: 4, Benchmarks: []string{"BenchmarkVFSRead", "BenchmarkBPFStats"}},
		}},
		{Who: "ftrace-graph", N: 4, Reasons: []reason{
			{Msg: "ftrace-graph needs tracefs with the function_graph tracer; this kernel is 6.18.44-fc-v595: tracefs is not mounted", N: 2, Benchmarks: []string{"BenchmarkVFSRead"}},
			{Msg: "ftrace-graph has no BPF programs, so no BPF run-time statistics", N: 2, Benchmarks: []string{"BenchmarkBPFStats"}},
		}},
	}, s.Skipped, "one entry per mechanism, its reasons BenchmarkVFSRead's first")

	md := markdown(t, s, Meta{{"where", "host (6.18.44-fc-v595)"}}, "make bench-report BENCH_RESULTS=/tmp/bh")
	assert.Equal(t, "# vfs_read tracing overhead: Linux 6.18.44-fc-v595, not a tracebench guest (bare metal or the host's own VM)\n\n"+
		"> **No mechanism ran on this kernel** (*Skipped* below says why), so this report has no overhead over baseline, no chart and no benchstat comparison. Only the baseline was measured.\n\n"+
		"## Run\n", md[:strings.Index(md, "## Run\n")+len("## Run\n")], "says so first, without the caveat about comparing mechanisms")
	assertContains(t, md,
		"**baseline** (nothing attached): 310 ns per read(2) [no CI: n=1], n=1.\n\nNo mechanism was measured, so there is nothing to compare it with.\n\n## Skipped\n",
		"## Skipped\n\n"+
			"- fsession (4 sub-benchmarks): fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595\n"+
			"- ftrace-graph (4 sub-benchmarks):\n"+
			"  - BenchmarkVFSRead (2): ftrace-graph needs tracefs with the function_graph tracer; this kernel is 6.18.44-fc-v595: tracefs is not mounted\n"+
			"  - BenchmarkBPFStats (2): ftrace-graph has no BPF programs, so no BPF run-time statistics\n\n",
		"## Files\n\n"+
			"- [raw.txt](raw.txt): the raw `go test -bench` output of every round\n"+
			"- [meta.txt](meta.txt): when, where and how loaded the host was\n\n"+
			"Regenerate with `make bench-report BENCH_RESULTS=/tmp/bh`; how to read it: bench/README.md.\n",
	)
	for _, absent := range []string{"Compare mechanisms", "overhead.svg", "benchstat-vs", "## Program body", "## Events", "## Failed"} {
		assert.NotContains(t, md, absent)
	}
	assert.Error(t, drawChart(io.Discard, s), "nothing to draw")
}

func TestNoMechanismMeasured(t *testing.T) {
	failed := baselineOnly + "BenchmarkVFSRead/kprobe-session/tgid-miss\n    bench_test.go:301: kprobe-session/tgid-miss: 3 calls counted, want 0\n--- FAIL: BenchmarkVFSRead/kprobe-session/tgid-miss\n--- FAIL: BenchmarkVFSRead\nFAIL\n"
	s := summaryOf(t, failed)
	assert.Equal(t, "no mechanism was measured on this kernel", ov(s).NoOverhead())
	assertContains(t, markdown(t, s, nil, ""),
		"> **No mechanism was measured on this kernel** (*Skipped* and *Failed* below say why), so this report has no overhead over baseline, no chart and no benchstat comparison. Only the baseline was measured.\n",
		"## Failed\n\n- kprobe-session (1 sub-benchmark): kprobe-session/tgid-miss: 3 calls counted, want 0\n")
}

// A sub-benchmark failing in some of several rounds is listed once, with
// the number of those rounds: the message alone is only the last round's.
func TestFailedSaysInHowManyRounds(t *testing.T) {
	fail := func(n int) string {
		return fmt.Sprintf("BenchmarkVFSRead/kprobe-session/tgid-miss\n    bench_test.go:301: kprobe-session/tgid-miss: %d calls counted, want 0\n"+
			"--- FAIL: BenchmarkVFSRead/kprobe-session/tgid-miss\n--- FAIL: BenchmarkVFSRead\nFAIL\n", n)
	}
	md := markdown(t, summaryOf(t, baselineOnly+fail(3)+baselineOnly+baselineOnly+fail(5)), nil, "")
	assertContains(t, md, "## Failed\n\n- kprobe-session (1 sub-benchmark): in 2 of 3 rounds, the last: kprobe-session/tgid-miss: 5 calls counted, want 0\n")
	md = markdown(t, summaryOf(t, baselineOnly+baselineOnly+fail(3)), nil, "")
	assertContains(t, md, "## Failed\n\n- kprobe-session (1 sub-benchmark): in 1 of 2 rounds: kprobe-session/tgid-miss: 3 calls counted, want 0\n")
}

func TestNoBaseline(t *testing.T) {
	var out strings.Builder
	for _, l := range strings.SplitAfter(rounds(2), "\n") {
		if !strings.Contains(l, "/baseline") {
			out.WriteString(l)
		}
	}
	s := summaryOf(t, out.String())
	assert.NotEmpty(t, ov(s).Rows)
	assert.False(t, ov(s).hasOverhead())
	assert.Equal(t, "no baseline was measured", ov(s).NoOverhead())
	md := markdown(t, s, nil, "")
	assert.Contains(t, md, "> **No baseline was measured**, so this report has no overhead over baseline, no chart and no benchstat comparison.\n\n> Every figure below")
	assert.NotContains(t, md, "overhead.svg")
}

func TestBenchstatInput(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeBenchstatInput(&b, strings.NewReader(rounds(1)), Baseline))
	lines := benchmarkLines(b.String())
	assert.Equal(t, []string{
		"BenchmarkVFSRead/case=tgid-miss/mechanism=baseline-2 40000 100 ns/op",
		"BenchmarkVFSRead/case=every-call/mechanism=baseline-2 40000 100 ns/op",
		"BenchmarkVFSRead/case=tgid-miss/mechanism=fsession-2 40000 150 ns/op",
		"BenchmarkVFSRead/case=tgid-miss/mechanism=fentry-fexit-2 40000 200 ns/op",
		"BenchmarkVFSRead/case=every-call/mechanism=fentry-fexit-2 40000 300 ns/op 0 dropped/s 1000 events/s",
		"BenchmarkBPFStats/case=tgid-miss/mechanism=fentry-fexit-2 40000 250 ns/op 40 bpf-ns/op 0 count_pending-runs/op 40 vfs_read_entry-ns/run 1 vfs_read_entry-runs/op",
	}, lines)
	assert.Contains(t, b.String(), "tracebench-kernel: 7.2.13+deb14-amd64\n", "configuration kept")

	b.Reset()
	require.NoError(t, writeBenchstatInput(&b, strings.NewReader(rounds(1)), reference, Baseline))
	lines = benchmarkLines(b.String())
	require.Len(t, lines, 4)
	assert.True(t, strings.HasPrefix(lines[0], "BenchmarkVFSRead/case=tgid-miss/mechanism=fentry-fexit-2 "), "reference first: %v", lines)
	assert.NotContains(t, b.String(), "mechanism=baseline")
}

func benchmarkLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestParseMeta(t *testing.T) {
	m, err := parseMeta(strings.NewReader("# written by bench run\nwhere: guest\n\nhost-load-start: 0.1 0.2 0.3\n"))
	require.NoError(t, err)
	assert.Equal(t, Meta{{"where", "guest"}, {"host-load-start", "0.1 0.2 0.3"}}, m)
	assert.Equal(t, "0.1 0.2 0.3", m.get("host-load-start"))
	assert.Equal(t, "", m.get("absent"))
	_, err = parseMeta(strings.NewReader("where: guest\nno colon here\n"))
	assert.EqualError(t, err, `meta line 2: "no colon here" is not "key: value"`)
}

func TestMedianNeedsSamples(t *testing.T) {
	_, ok := median(nil)
	assert.False(t, ok)
}

// TestMarkdownIcount: under QEMU icount, ns/op counts guest instructions,
// and the report names the unit and the model's limits.
func TestMarkdownIcount(t *testing.T) {
	s := summaryOf(t, strings.ReplaceAll(rounds(6), "tracebench-cpus: 2\n", "tracebench-cpus: 2\ntracebench-clock: icount\n"))
	assert.Equal(t, "Linux 7.2.13+deb14-amd64, QEMU guest under TCG (software emulation), icount clock", s.Label())
	md := markdown(t, s, nil, "")
	assertContains(t, md,
		"**ns/op is guest instructions per read(2)**",
		"every instruction costs 1; cache and TLB misses, branch mispredictions, atomics and serialising instructions are not weighted",
		"bare metal stays the reference",
		"| clock | QEMU icount (-icount shift=0,sleep=on): guest time advances 1 ns per executed guest instruction, so ns/op is guest instructions per read(2) |\n",
		"**baseline** (nothing attached): 102 guest instructions per read(2) [100, 105], n=6.",
		"| case | mechanism | guest instructions per read(2), median [95% CI] | overhead over baseline, guest instructions [95% CI] |",
		"| case | mechanism | body guest instructions per read(2), median [95% CI] |",
	)
	assert.NotContains(t, md, "about 10x slower", "the wall-clock caveat does not apply")
	svg := chart(t, s)
	assert.Contains(t, svg, "guest instructions per read(2)")
}

// floorRounds adds to rounds(n): the floors fentry+fexit at 160+r and
// fsession at 130+r (fentry+fexit's disturbed by 1000 in round 0), the
// mapping lines, a consumer cost and below-threshold cost figures.
func floorRounds(n int) string {
	return roundsWith(n, func(r int) string {
		disturbed := 0
		if r == 0 {
			disturbed = 1000
		}
		return "tracebench-floor-fentry-fexit: fentry+fexit\ntracebench-floor-fsession: fsession\n" +
			fmt.Sprintf("BenchmarkVFSRead/fentry+fexit/floor-2 40000 %d ns/op\n", 160+r+disturbed) +
			fmt.Sprintf("BenchmarkVFSRead/fsession/floor-2 40000 %d ns/op\n", 130+r) +
			fmt.Sprintf("BenchmarkVFSRead/fsession/below-threshold-2 40000 %d ns/op %d start-ns 2048 map-bytes 96 xlated-bytes\n",
				170+r, 5000+r) +
			fmt.Sprintf("BenchmarkVFSRead/fsession/every-call-2 40000 %d ns/op 0 dropped/s %d events/s %d consumer-ns/event\n",
				250+r, 900+r, 700+r)
	})
}

func TestFloorsAndCosts(t *testing.T) {
	s := summaryOf(t, floorRounds(12))
	assert.Equal(t, []string{"tgid-miss", "below-threshold", "every-call"}, ov(s).cases, "floor is no case")
	require.Len(t, ov(s).Floors, 2)
	assert.Equal(t, "fentry+fexit", ov(s).Floors[0].Name, "in suite.Floors' order")
	// paired, one disturbed round of 12 leaves the interval on the others.
	assert.Equal(t, estimate{Center: 60, lo: 60, hi: 60, N: 12}, ov(s).Floors[0].Overhead.estimate)
	assert.Equal(t, estimate{Center: 30, lo: 30, hi: 30, N: 12}, ov(s).Floors[1].Overhead.estimate)

	byKey := map[string]Row{}
	for _, r := range ov(s).Rows {
		byKey[r.Mechanism+"/"+r.Case] = r
	}
	ref := byKey["fentry-fexit/tgid-miss"]
	assert.Equal(t, "fentry+fexit", ref.Floor)
	require.True(t, ref.HasAboveFloor)
	assert.Equal(t, estimate{Center: 40, lo: 40, hi: 40, N: 12}, ref.AboveFloor.estimate)
	fs := byKey["fsession/every-call"]
	assert.Equal(t, estimate{Center: 120, lo: 120, hi: 120, N: 12}, fs.AboveFloor.estimate)
	require.True(t, fs.HasConsumer)
	assert.Equal(t, 705.5, fs.Consumer.Center)

	require.Len(t, ov(s).Costs, 1)
	assert.Equal(t, "fsession", ov(s).Costs[0].Mechanism)
	assert.Equal(t, 5005.5, ov(s).Costs[0].units["start-ns"].Center)
	assert.Equal(t, 2048.0, ov(s).Costs[0].units["map-bytes"].Center)
	_, jited := ov(s).Costs[0].units["jited-bytes"]
	assert.False(t, jited, "not reported, not invented")

	md := markdown(t, s, nil, "")
	assertContains(t, md,
		"## Floor + body\n",
		"| fentry+fexit | 166 [163, 170] | +60.0 [60.0, 60.0] | <0.001 |\n",
		// The disturbed round's difference has the other sign: p grows.
		"| tgid-miss | fentry-fexit | +100 [100, 100] | fentry+fexit | +60.0 [60.0, 60.0] | +40.0 [40.0, 40.0] | 0.033 |\n",
		"| every-call | fsession | 906 [902, 909] | 0 [0, 0] | 706 [702, 709] |\n",
		"## Cost beyond time\n",
		"| fsession | 5006 [5002, 5009] | 2048 | 96 | n/a | n/a |\n",
	)
}

func TestPeers(t *testing.T) {
	s := summaryOf(t, roundsWith(6, func(r int) string {
		return "tracebench-peer-bpftrace: 0.27.1\n" +
			fmt.Sprintf("BenchmarkPeers/baseline-2 40000 %d ns/op\n", 90+r) +
			fmt.Sprintf("BenchmarkPeers/bpftrace-2 40000 %d ns/op\n", 390+r) +
			fmt.Sprintf("BenchmarkPeers/tracebench-fsession-2 40000 %d ns/op\n", 140+r)
	}))
	require.Len(t, pe(s).Peers, 2)
	assert.Equal(t, "bpftrace", pe(s).Peers[0].Name)
	assert.Equal(t, estimate{Center: 300, lo: 300, hi: 300, N: 6}, pe(s).Peers[0].Overhead.estimate)
	assert.Equal(t, estimate{Center: 50, lo: 50, hi: 50, N: 6}, pe(s).Peers[1].Overhead.estimate)
	assert.Equal(t, []string{"bpftrace 0.27.1"}, pe(s).Versions)
	assert.Len(t, ov(s).Rows, 3, "peers are not BenchmarkVFSRead rows")
	assertContains(t, markdown(t, s, nil, ""),
		"(92.5 ns per read(2) [90.0, 95.0]), paired by round. Tools: bpftrace 0.27.1.\n",
		"| bpftrace | 392 [390, 395] | +300 [300, 300] | 0.031 |\n")
}

// A run of BenchmarkPeers alone (make bench-peers) says so instead of
// claiming that no mechanism ran, and keeps its peer table.
func TestPeersOnly(t *testing.T) {
	var raw strings.Builder
	for r := range 6 {
		fmt.Fprintf(&raw, "tracebench-kernel: 7.2.13+deb14-amd64\ntracebench-emulation: tcg\ntracebench-cpus: 2\n")
		fmt.Fprintf(&raw, "BenchmarkPeers/baseline-2 40000 %d ns/op\n", 90+r)
		fmt.Fprintf(&raw, "BenchmarkPeers/bpftrace-2 40000 %d ns/op\n", 390+r)
	}
	s := summaryOf(t, raw.String())
	require.Equal(t, "peers", s.Family.Name)
	md := markdown(t, s, nil, "")
	assertContains(t, md, "This run measured the peer tools only", "| bpftrace | 392 [390, 395] | +300 [300, 300] | 0.031 |\n")
	assert.NotContains(t, md, "No mechanism ran")
	assert.NotContains(t, md, "## Cost per read(2)", "no mechanism section in a peers run")
	assert.Equal(t, "overhead", summaryOf(t, rounds(6)).Family.Name)

	// A peers run in which every peer failed is still a peers run (meta says so).
	var failed strings.Builder
	for range 6 {
		fmt.Fprintf(&failed, "tracebench-kernel: 7.2.13+deb14-amd64\ntracebench-emulation: tcg\ntracebench-cpus: 2\n")
		fmt.Fprintf(&failed, "BenchmarkPeers/baseline-2 40000 90 ns/op\n--- FAIL: BenchmarkPeers/bpftrace\n")
	}
	md = markdown(t, summaryOf(t, failed.String()), Meta{{Key: "suite", Value: "peers (^BenchmarkPeers$)"}}, "")
	assert.Contains(t, md, "This run measured the peer tools only")
	assert.NotContains(t, md, "No mechanism was measured")
}

func TestParseRejectsUnmeasuredValues(t *testing.T) {
	for _, v := range []string{"NaN", "+Inf", "-Inf", "-5", "0"} {
		out := roundsWith(2, func(r int) string {
			if r == 1 {
				return "BenchmarkVFSRead/fsession/every-call-2 40000 " + v + " ns/op\n"
			}
			return ""
		})
		_, err := parse(strings.NewReader(out), "raw.txt")
		assert.ErrorContains(t, err, "raw.txt:19: BenchmarkVFSRead/fsession/every-call: ", v)
		assert.ErrorContains(t, err, " ns/op is not a measured value", v)
	}
	out := roundsWith(1, func(int) string { return "BenchmarkVFSRead/fsession/every-call-2 1 5 ns/op NaN events/s\n" })
	_, err := parse(strings.NewReader(out), "raw.txt")
	assert.ErrorContains(t, err, "raw.txt:10: BenchmarkVFSRead/fsession/every-call: NaN events/s is not a measured value")
}

// A damaged round is refused, not folded into another: a round whose
// "tracebench-kernel:" line is lost runs into the round before it, and a
// repeated result line would add a sample.
func TestParseRejectsDamagedRounds(t *testing.T) {
	raw := rounds(4)
	lost := strings.Replace(raw, "tracebench-kernel: 7.2.13+deb14-amd64\n", "", 3) // rounds 1-3 lose it
	lost = "tracebench-kernel: 7.2.13+deb14-amd64\n" + lost                        // round 1 keeps it
	_, err := parse(strings.NewReader(lost), "raw.txt")
	assert.ErrorContains(t, err, "a second result of BenchmarkVFSRead/baseline in one round")

	line := "BenchmarkVFSRead/baseline-2 40000 101 ns/op\n"
	_, err = parse(strings.NewReader(strings.Replace(raw, line, line+line, 1)), "raw.txt")
	assert.ErrorContains(t, err, "a second result of BenchmarkVFSRead/baseline in one round")

	withClock := rounds(3)
	withClock = strings.ReplaceAll(withClock, "tracebench-cpus: 2\n", "tracebench-cpus: 2\ntracebench-clock: icount\n")
	i := strings.LastIndex(withClock, "tracebench-clock: icount\n")
	noClock := withClock[:i] + withClock[i+len("tracebench-clock: icount\n"):]
	_, err = parse(strings.NewReader(noClock), "raw.txt")
	assert.ErrorContains(t, err, `round 3 has no "tracebench-clock" line, which other rounds have`)
	_, err = parse(strings.NewReader(withClock), "raw.txt")
	assert.NoError(t, err)
}

func TestParseRejectsRoundsThatDisagree(t *testing.T) {
	for key, other := range map[string]string{
		"tracebench-kernel": "7.3.0", "tracebench-emulation": "none", "tracebench-cpus": "4", "tracebench-clock": "tsc",
	} {
		out := roundsWith(3, nil)
		if key == "tracebench-clock" {
			out = strings.ReplaceAll(out, "tracebench-cpus: 2\n", "tracebench-cpus: 2\ntracebench-clock: icount\n")
		}
		i := strings.LastIndex(out, "tracebench-kernel:")
		last := out[i:]
		j := strings.Index(last, key+": ")
		end := j + strings.IndexByte(last[j:], '\n')
		old := last[j+len(key)+2 : end]
		out = out[:i] + last[:j] + key + ": " + other + last[end:]
		_, err := parse(strings.NewReader(out), "raw.txt")
		assert.EqualError(t, err, fmt.Sprintf("raw.txt: round 3 has %s %q, an earlier round %q: rounds of one report must agree",
			key, other, old))
	}
}

func TestMissingSubBenchmarks(t *testing.T) {
	out := roundsWith(3, func(r int) string {
		if r == 2 {
			return ""
		}
		return "BenchmarkVFSRead/fsession/every-call-2 40000 400 ns/op 0 dropped/s 1000 events/s\n"
	})
	// fsession/tgid-miss vanishes from round 2 without a word.
	out = strings.Replace(out, "BenchmarkVFSRead/fsession/tgid-miss-2 40000 151 ns/op\n", "", 1)
	// fentry-fexit never ran below-threshold, which fsession did.
	out += "BenchmarkVFSRead/fsession/below-threshold-2 40000 170 ns/op\n"
	s := summaryOf(t, out)
	assert.Equal(t, []Missing{
		{Key{vfsRead, "fentry-fexit", "below-threshold"}, []int{1, 2, 3}},
		{Key{vfsRead, "fsession", "below-threshold"}, []int{1, 2}},
		{Key{vfsRead, "fsession", "every-call"}, []int{3}},
		{Key{vfsRead, "fsession", "tgid-miss"}, []int{2}},
	}, s.Missing)

	assert.Contains(t, markdown(t, s, nil, ""), "## Missing\n\nNo result, skip or failure in these rounds; "+
		"comparisons use only the rounds that have both sides.\n\n"+
		"- BenchmarkVFSRead/fentry-fexit/below-threshold: missing from every round (3): no row\n"+
		"- BenchmarkVFSRead/fsession/below-threshold: missing from rounds 1, 2 of 3\n"+
		"- BenchmarkVFSRead/fsession/every-call: missing from rounds 3 of 3\n"+
		"- BenchmarkVFSRead/fsession/tgid-miss: missing from rounds 2 of 3\n\n")

	raw, err := os.ReadFile("../../results/7.2.13+deb14-amd64/raw.txt")
	require.NoError(t, err)
	assert.Empty(t, summaryOf(t, string(raw)).Missing, "the committed run has every sub-benchmark in every round")
}

// A configuration line after a process's last result is kept, as one
// before it is; the report's labels still come from results.
func TestParseTrailingConfig(t *testing.T) {
	run, err := parse(strings.NewReader("tracebench-kernel: 7.2\nBenchmarkVFSRead/baseline-2 1 5 ns/op\n"+
		"tracebench-found: late\ntracebench-kernel: other\n--- SKIP: x\n"), "raw.txt")
	require.NoError(t, err)
	assert.Equal(t, "late", run.config["tracebench-found"])
	assert.Equal(t, "7.2", run.config["tracebench-kernel"], "a label is not taken from a line no result follows")
}

// A -delta unit may be negative, no other.
func TestParseDeltaUnits(t *testing.T) {
	run, err := parse(strings.NewReader("BenchmarkVFSRead/x/n1-2 1 5 ns/op -4096 slab-bytes-delta\n"), "raw.txt")
	require.NoError(t, err)
	assert.Equal(t, []float64{-4096}, run.values(Key{vfsRead, "x", "n1"}, "slab-bytes-delta"))
	_, err = parse(strings.NewReader("BenchmarkVFSRead/x/n1-2 1 5 ns/op -4096 map-bytes\n"), "raw.txt")
	assert.ErrorContains(t, err, "-4096 map-bytes is not a measured value")
}

// A log line longer than benchfmt reads (the counters of 44591 functions
// in a failure) is cut, not a syntax error, and its failure still shows.
func TestParseCutsOverlongLines(t *testing.T) {
	every := Key{vfsRead, "fentry-fexit", "every-call"}
	long := strings.Replace(twoRounds, "{Calls:0}", "{Calls:0 "+strings.Repeat("x", 100<<10)+"}", 1)
	run, err := parse(strings.NewReader(long), "raw.txt")
	require.NoError(t, err)
	assert.Contains(t, run.Failed[every], "fentry-fexit/every-call: 0 calls counted")
	assert.Contains(t, run.Failed[every], "bytes cut)")
	assert.Equal(t, []float64{4914, 5000}, run.values(Key{vfsRead, Baseline, ""}, "ns/op"))
}

// The report says how the loop's thread was scheduled where the rounds
// say so, and nothing where they do not (runs before the key existed).
func TestLoopSchedulingIsNamed(t *testing.T) {
	const said = "SCHED_FIFO priority 1, pinned to one CPU"
	pinned := strings.ReplaceAll(rounds(3), "tracebench-cpus: 2\n", "tracebench-cpus: 2\n"+suite.LoopKey+": "+suite.LoopSched+"\n")
	assert.Contains(t, markdown(t, summaryOf(t, pinned), nil, ""), said)
	assert.NotContains(t, markdown(t, summaryOf(t, rounds(3)), nil, ""), said)
}
