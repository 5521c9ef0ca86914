package report

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"tracebench/bench/suite"
)

// Summary is what the report shows, computed from a run: what every
// report says, and each family's Part.
type Summary struct {
	Kernel    string // uname -r where the benchmarks ran
	Emulation string // "tcg", "kvm" or "none" (not a tracebench guest)
	// clock is what ns/op was measured with: "icount" (QEMU's
	// instruction counter), "wall", or "" if the run did not say.
	clock    string
	Rounds   int    // benchmark processes, one per round
	CPUs     string // CPUs the benchmark process saw
	CPUModel string // Go's "cpu:" line
	// Compiler built the kernel (suite.CompilerKey; "" if the run did not
	// say).
	Compiler string
	// floors are each mechanism's floor, as the rounds name it
	// (suite.FloorKeyPrefix lines).
	floors map[string]string
	// LoopPinned: the rounds say their loop's thread ran as
	// suite.LoopSched says (false for runs before they said).
	LoopPinned bool
	// Skipped and Failed say which sub-benchmarks were skipped or failed
	// and why, one outcome per mechanism.
	Skipped, Failed []outcome
	// Drops are the sub-benchmarks that dropped events in some round: their
	// mechanisms then skipped work the others did, so the run is no
	// comparison.
	Drops []Drop
	// Missing are the sub-benchmarks without a result in some round and
	// no skip or failure saying why, by name.
	Missing []Missing
	// Family is the family the run has results of, the first in
	// Families' order (the first family without any).
	Family *Family
	// parts are every family's share, in Families' order.
	parts []familyPart
}

// familyPart is a family's share of a report.
type familyPart struct {
	Family *Family
	Part   Part
}

// Missing is a sub-benchmark absent from some or every round: its
// comparisons use only the rounds that have it, or it has no row.
type Missing struct {
	Key    Key
	Rounds []int // the rounds without it, from 1
}

// Drop is a sub-benchmark that dropped events.
type Drop struct {
	Mechanism, Case string
	Rounds, Of      int     // rounds with drops, rounds measured
	Max             float64 // most events dropped per second in a round
}

// Name is the sub-benchmark's name below its benchmark.
func (d Drop) Name() string {
	if d.Case == "" {
		return d.Mechanism
	}
	return d.Mechanism + "/" + d.Case
}

// outcome is why sub-benchmarks of one mechanism were skipped (or
// failed): a mechanism the kernel lacks is skipped for the same reason in
// every case, but BenchmarkVFSRead and BenchmarkBPFStats may give
// different reasons (ftrace-graph: no tracefs; no BPF programs).
type outcome struct {
	// Who is the mechanism, or the whole benchmark ("BenchmarkVFSRead")
	// when it was skipped or failed as a whole.
	Who string
	// N counts the sub-benchmarks.
	N int
	// Reasons are the distinct messages, BenchmarkVFSRead's first.
	Reasons []reason
}

// reason is one message and the sub-benchmarks that gave it.
type reason struct {
	Msg string
	N   int
	// Benchmarks are those the sub-benchmarks belong to, like
	// "BenchmarkVFSRead".
	Benchmarks []string
}

// summarize computes the summary of run.
func summarize(run *run) *Summary {
	s := &Summary{
		Kernel:     run.config["tracebench-kernel"],
		Emulation:  run.config["tracebench-emulation"],
		clock:      run.config["tracebench-clock"],
		Rounds:     run.Rounds,
		CPUs:       run.config["tracebench-cpus"],
		CPUModel:   run.config["cpu"],
		Compiler:   run.config[suite.CompilerKey],
		LoopPinned: run.config[suite.LoopKey] == suite.LoopSched,
		floors:     mechanismFloors(run.config),
		Skipped:    outcomes(run.Skipped),
		Failed:     outcomes(failures(run)),
		Drops:      drops(run),
		Family:     runFamily(run),
	}
	var expected []Key
	for _, f := range Families {
		p := f.summarize(run)
		s.parts = append(s.parts, familyPart{f, p})
		expected = append(expected, p.expected()...)
	}
	s.Missing = missing(run, expected)
	return s
}

// mechanismFloors reads the suite.FloorKeyPrefix lines of config.
func mechanismFloors(config map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range config {
		if m, ok := strings.CutPrefix(k, suite.FloorKeyPrefix); ok {
			out[m] = v
		}
	}
	return out
}

// runFamily is the first family with a result, skip or failure in run.
func runFamily(run *run) *Family {
	benches := map[string]bool{}
	for _, keys := range []iter.Seq[Key]{maps.Keys(run.samples), maps.Keys(run.Skipped), maps.Keys(run.Failed)} {
		for k := range keys {
			benches[k.bench] = true
		}
	}
	for _, f := range Families {
		if slices.ContainsFunc(f.Benchmarks, func(b string) bool { return benches[b] }) {
			return f
		}
	}
	return Families[0]
}

// setOf returns the set of keys.
func setOf[k comparable](keys iter.Seq[k]) map[k]bool {
	set := map[k]bool{}
	for k := range keys {
		set[k] = true
	}
	return set
}

// Shown are the parts the report of a run of family f writes: f's, and
// every other one that measured something, but for those reading f's
// benchmarks (growth and multi share theirs).
func (s *Summary) Shown(f *Family) []familyPart {
	var out []familyPart
	for _, p := range s.parts {
		if p.Family == f || p.Part.Measured() && !f.shares(p.Family) {
			out = append(out, p)
		}
	}
	return out
}

// Part returns family f's share.
func (s *Summary) Part(f *Family) Part {
	for _, p := range s.parts {
		if p.Family == f {
			return p.Part
		}
	}
	return nil
}

// drops returns the sub-benchmarks that dropped events in some round, by
// name.
func drops(run *run) []Drop {
	var out []Drop
	for k := range run.samples {
		values := run.values(k, "dropped/s")
		d := Drop{Mechanism: k.Mechanism, Case: k.Case, Of: len(values)}
		for _, v := range values {
			if v > 0 {
				d.Rounds++
				d.Max = max(d.Max, v)
			}
		}
		if d.Rounds > 0 {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Drop) int { return cmp.Compare(a.Name(), b.Name()) })
	return out
}

// failures are run's failure messages, each of a benchmark run every
// round saying in how many of several rounds it failed (the message is
// the last round's): one failure in ten rounds is not seven.
func failures(run *run) map[Key]string {
	out := make(map[Key]string, len(run.Failed))
	for k, msg := range run.Failed {
		switch n := run.failedIn[k]; {
		case once(k.bench) || run.Rounds < 2:
		case n == 1:
			msg = fmt.Sprintf("in 1 of %d rounds: %s", run.Rounds, msg)
		default:
			msg = fmt.Sprintf("in %d of %d rounds, the last: %s", n, run.Rounds, msg)
		}
		out[k] = msg
	}
	return out
}

// missing lists the sub-benchmarks absent from some round, and those
// expected that are absent from every round, unless a skip or failure
// says why; those of a benchmark run once per run (Once) are expected in
// one process, a round or one of their own.
func missing(run *run, expected []Key) []Missing {
	keys := setOf(maps.Keys(run.samples))
	for _, k := range expected {
		keys[k] = true
	}
	var out []Missing
	for k := range keys {
		_, skipped := run.Skipped[k]
		_, failed := run.Failed[k]
		rounds := run.missingRounds(k)
		if once(k.bench) && len(run.rounds[k]) > 0 {
			rounds = nil
		}
		if len(rounds) > 0 && !skipped && !failed {
			out = append(out, Missing{Key: k, Rounds: rounds})
		}
	}
	slices.SortFunc(out, func(a, b Missing) int { return cmp.Compare(a.Key.String(), b.Key.String()) })
	return out
}

// ordered returns the keys of set: those in first in that order, then the
// rest by name.
func ordered(set map[string]bool, first []string) []string {
	var out []string
	for _, f := range first {
		if set[f] {
			out = append(out, f)
		}
	}
	var rest []string
	for k := range set {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// outcomes groups sub-benchmarks by mechanism, then by message, in the
// order of the mechanisms' names.
func outcomes(m map[Key]string) []outcome {
	type group struct{ who, msg string }
	count := map[group]int{}
	benches := map[group]map[string]bool{}
	for k, msg := range m {
		g := group{k.Mechanism, msg}
		if g.who == "" {
			g.who = k.String()
		}
		count[g]++
		if benches[g] == nil {
			benches[g] = map[string]bool{}
		}
		benches[g]["Benchmark"+k.bench] = true
	}
	order := benchmarkOrder()
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	var out []outcome
	for g, n := range count {
		i := slices.IndexFunc(out, func(o outcome) bool { return o.Who == g.who })
		if i < 0 {
			i = len(out)
			out = append(out, outcome{Who: g.who})
		}
		out[i].N += n
		out[i].Reasons = append(out[i].Reasons, reason{Msg: g.msg, N: n, Benchmarks: ordered(benches[g], order)})
	}
	for _, o := range out {
		slices.SortFunc(o.Reasons, func(a, b reason) int {
			return cmp.Or(
				cmp.Compare(rank(a.Benchmarks[0]), rank(b.Benchmarks[0])),
				cmp.Compare(a.Benchmarks[0], b.Benchmarks[0]),
				cmp.Compare(a.Msg, b.Msg))
		})
	}
	slices.SortFunc(out, func(a, b outcome) int { return cmp.Compare(a.Who, b.Who) })
	return out
}
