package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"tracebench/bench/suite"
)

// Family is one benchmark family: the benchmarks a run of it executes,
// where its results go, and how its share of a report is computed and
// written. Families lists them; the runner (cmd/bench) and the report read
// nothing else about a family. Adding one is a value there, a file with its
// summarize and Part, and templates/<Name>.md.tmpl defining "<Name>.lead"
// (said right below the title of a run of it) and "<Name>.body" (its
// sections), both given a partPage.
type Family struct {
	// Name selects it: cmd/bench's BENCH_SUITE, meta.txt's suite.
	Name string
	// Doc says what a run of it measures, for cmd/bench's help.
	Doc string
	// Benchmarks are package bench's Benchmark<X> functions a run of it
	// executes, in order (cmd/bench's -test.bench pattern).
	Benchmarks []string
	// Once are those of Benchmarks a run executes once, in processes of
	// their own apart from the rounds (a measurement too long to repeat,
	// that leaves the kernel changed, e.g. attaching thousands of
	// functions): the test binary lists them with
	// -tracebench.once-processes, cmd/bench runs each in a fresh guest.
	Once []string
	// Ready is the configuration key a round prints once the files the
	// Once processes share with it are written (the function sets); they
	// start after it.
	Ready string
	// Dir is where a run's results go, below results/<kernel>/ ("": there).
	Dir string
	// PeerRoot: a run needs the peer tools' root (vm/peer-root.sh).
	PeerRoot bool
	// Sizes are the function sets of a run of it (cmd/bench's
	// BENCH_SIZES default; "": BenchmarkMultiStart's own).
	Sizes string
	// GuestCPUs is the guest's CPUs for a run of it (cmd/bench's
	// BENCH_CPUS default). Under icount every vCPU's instructions count
	// in the loop's figure, so CPUs beyond the loop's own and one for the
	// other tasks add theirs: the multi readpath intervals were within
	// ±0.05% with 2, ±0.2-0.6% with 4 (7.2 guest, 12 rounds each).
	GuestCPUs int
	// flat: the sub-benchmarks are Benchmark<X>/<name>, not
	// Benchmark<X>/<mechanism>/<case> and Benchmark<X>/baseline.
	flat bool
	// summarize reads the family's figures from a run.
	summarize func(*run) Part
}

// Part is one family's share of a report.
type Part interface {
	// Measured reports whether the run has results of the family: its
	// sections are written only then, or in a report of a run of it.
	Measured() bool
	// expected are the sub-benchmarks it should have in every round;
	// those without a result, skip or failure are listed as missing.
	expected() []Key
	// Charts and Comparisons are the files it writes beside README.md;
	// Without says why not ("" when it writes them).
	Charts(s *Summary) []Chart
	Comparisons() []Comparison
	Without() string
}

// Chart is a figure drawn from a Part.
type Chart struct {
	File string // in the report's directory
	What string // for the report's list of files
	// Draw draws it in format "svg" or "png".
	Draw func(w io.Writer, format string) error
}

// Comparison is a benchstat comparison: `go tool benchstat Args input`,
// where Input writes the input from raw.txt, into File.
type Comparison struct {
	File  string
	Input func(w io.Writer, raw io.Reader) error
	Args  []string
}

// Families are the benchmark families, in the report's order.
var Families = []*Family{
	{
		Name: "overhead", Doc: "BenchmarkVFSRead and BenchmarkBPFStats, into results/<kernel>/",
		Benchmarks: []string{vfsRead, bpfStats}, GuestCPUs: 2, summarize: summarizeOverhead,
	},
	{
		Name: "peers", Doc: "BenchmarkPeers: the peer tools, whose start-up under TCG takes minutes per round, " +
			"into results/<kernel>/peers/, with vm/peer-root.sh",
		Benchmarks: []string{Peers}, Dir: "peers", PeerRoot: true, GuestCPUs: 2, flat: true, summarize: summarizePeers,
	},
	{
		Name: "multi", Doc: "BenchmarkMultiRead (the read path's functions traced at once, every round) and " +
			"BenchmarkMultiStart (Start, Close and kernel memory by number of functions, once, a fresh guest per mechanism), " +
			"BenchmarkTraceExit (the CLI's exit after SIGINT on n1000 with the CPUs busy, once), " +
			"the peers' wildcards (bpftrace, bcc) beside them, into results/<kernel>/multi/, with vm/peer-root.sh",
		Benchmarks: []string{multiRead, multiStart, traceExit}, Once: []string{multiStart, traceExit}, Ready: suite.MultiKinds,
		Dir: "multi", PeerRoot: true, GuestCPUs: 2, summarize: summarizeMulti,
	},
	{
		Name: "growth", Doc: "the multi family reduced for make bench-kernels: BenchmarkMultiRead and BenchmarkMultiStart " +
			"at n1, n100, n1000 and n10000, without the peers and BenchmarkTraceExit, into results/<kernel>/growth/",
		Benchmarks: []string{multiRead, multiStart}, Once: []string{multiStart}, Ready: suite.MultiKinds,
		Dir: "growth", Sizes: "n1,n100,n1000,n10000", GuestCPUs: 2, summarize: summarizeMulti,
	},
}

// LookupFamily returns the family named name.
func LookupFamily(name string) (*Family, error) {
	i := slices.IndexFunc(Families, func(f *Family) bool { return f.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%q is not a benchmark family (%s)", name, strings.Join(FamilyNames(), ", "))
	}
	return Families[i], nil
}

// FamilyNames are the families' names, in order.
func FamilyNames() []string {
	var names []string
	for _, f := range Families {
		names = append(names, f.Name)
	}
	return names
}

// Pattern is the -test.bench pattern of f's benchmarks run in every
// round: all but Once.
func (f *Family) Pattern() string {
	return pattern(slices.DeleteFunc(slices.Clone(f.Benchmarks), func(b string) bool { return slices.Contains(f.Once, b) }))
}

func pattern(benchmarks []string) string {
	if len(benchmarks) == 1 {
		return "^Benchmark" + benchmarks[0] + "$"
	}
	return "^Benchmark(" + strings.Join(benchmarks, "|") + ")$"
}

// once reports whether benchmark bench (without "Benchmark") runs once
// per run (Family.Once).
func once(bench string) bool {
	f := familyOf(bench)
	return f != nil && slices.Contains(f.Once, bench)
}

// shares reports whether f and g run a benchmark in common.
func (f *Family) shares(g *Family) bool {
	return slices.ContainsFunc(f.Benchmarks, func(b string) bool { return slices.Contains(g.Benchmarks, b) })
}

// familyOf returns the family of benchmark bench (without "Benchmark"),
// nil if none has it.
func familyOf(bench string) *Family {
	for _, f := range Families {
		if slices.Contains(f.Benchmarks, bench) {
			return f
		}
	}
	return nil
}

// benchmarkOrder is the order of every family's benchmarks, each once.
func benchmarkOrder() []string {
	var out []string
	for _, f := range Families {
		for _, b := range f.Benchmarks {
			if !slices.Contains(out, "Benchmark"+b) {
				out = append(out, "Benchmark"+b)
			}
		}
	}
	return out
}
