package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"

	"tracebench/bench/suite"
)

// Reference is the mechanism the others are compared with: the
// established trampoline design.
const Reference = "fentry-fexit"

// Summary is what the report shows, computed from a Run.
type Summary struct {
	Kernel    string // uname -r where the benchmarks ran
	Emulation string // "tcg", "kvm" or "none" (not a tracebench guest)
	// Clock is what ns/op was measured with: "icount" (QEMU's
	// instruction counter), "wall", or "" if the run did not say.
	Clock    string
	Rounds   int    // benchmark processes, one per round
	CPUs     string // CPUs the benchmark process saw
	CPUModel string // Go's "cpu:" line
	Baseline Estimate
	HasBase  bool
	Cases    []string // in the order of the benchmark's table
	Rows     []Row    // by case, then mechanism
	// Skipped and Failed say which sub-benchmarks were skipped or failed
	// and why, one Outcome per mechanism.
	Skipped, Failed []Outcome
	// Drops are the sub-benchmarks that dropped events in some round: their
	// mechanisms then skipped work the others did, so the run is no
	// comparison.
	Drops []Drop
	// Missing are the sub-benchmarks without a result in some round and
	// no skip or failure saying why, by name.
	Missing []Missing
	// Floors are the empty programs per attach kind, in suite.Floors' order.
	Floors []Floor
	// Costs are the mechanisms' costs beyond time (CostCase's rows).
	Costs []Cost
	// Peers are BenchmarkPeers' sub-benchmarks but its baseline, by name;
	// PeerVersions the tools' "tracebench-peer-<package>" lines.
	Peers        []Peer
	PeerBaseline Estimate
	PeerVersions []string
}

// Peer is one sub-benchmark of BenchmarkPeers: a peer tool, or a
// tracebench mechanism in the peers' mode.
type Peer struct {
	Name    string
	NsPerOp Estimate
	// Overhead is ns/op above BenchmarkPeers/baseline, paired by round.
	Overhead    Shift
	HasOverhead bool
}

// Floor is one floor: empty programs of some attach kinds on vfs_read.
type Floor struct {
	Name    string   // attach kinds joined with "+", e.g. "fentry+fexit"
	NsPerOp Estimate // median per read(2) with them attached
	// Overhead is ns/op above baseline, paired by round.
	Overhead    Shift
	HasOverhead bool
}

// CostCase is the case whose sub-benchmarks report the cost beyond time.
const CostCase = "below-threshold"

// Cost is a mechanism's cost beyond time, medians over the rounds.
type Cost struct {
	Mechanism string
	// Units holds start-ns, map-bytes, xlated-bytes, jited-bytes and
	// verified-insns, those the benchmark reported.
	Units map[string]Estimate
}

// CostUnits are the units of Cost, in the report's order.
var CostUnits = []string{"start-ns", "map-bytes", "xlated-bytes", "jited-bytes", "verified-insns"}

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

// Outcome is why sub-benchmarks of one mechanism were skipped (or
// failed): a mechanism the kernel lacks is skipped for the same reason in
// every case, but BenchmarkVFSRead and BenchmarkBPFStats may give
// different reasons (ftrace-graph: no tracefs; no BPF programs).
type Outcome struct {
	// Who is the mechanism, or the whole benchmark ("BenchmarkVFSRead")
	// when it was skipped or failed as a whole.
	Who string
	// N counts the sub-benchmarks.
	N int
	// Reasons are the distinct messages, BenchmarkVFSRead's first.
	Reasons []Reason
}

// Reason is one message and the sub-benchmarks that gave it.
type Reason struct {
	Msg string
	N   int
	// Benchmarks are those the sub-benchmarks belong to, like
	// "BenchmarkVFSRead".
	Benchmarks []string
}

// Row is one mechanism in one case.
type Row struct {
	Mechanism, Case string
	// NsPerOp is the median ns per read(2) with the mechanism attached.
	NsPerOp Estimate
	// Overhead is ns/op above baseline; HasOverhead is false without
	// baseline samples.
	Overhead    Shift
	HasOverhead bool
	// VsReference is ns/op above Reference in the same case; absent for
	// Reference itself.
	VsReference    Shift
	HasVsReference bool
	// Ratio is Overhead / Reference's Overhead in the same case, from the
	// two point estimates; NaN when either is missing or not
	// significantly above zero (NoRatio says which).
	Ratio   float64
	NoRatio string
	// Every-call only: events consumed per second and events dropped per
	// second (ring buffer full), medians.
	Events, Dropped       Estimate
	HasEvents, HasDropped bool
	// BPFStats: program body time per read(2), all programs together,
	// with run-time statistics on.
	Body    Estimate
	HasBody bool
	// Floor names the floor of the mechanism's attach kinds ("" without
	// one); AboveFloor is ns/op above that floor, paired by round: what
	// the program bodies (and maps, ring buffer) add to the kinds'
	// dispatch.
	Floor         string
	AboveFloor    Shift
	HasAboveFloor bool
	// Every-call only: the consumer's ns per event, reading them after
	// the loop.
	Consumer    Estimate
	HasConsumer bool
	// BodySkipped is why BenchmarkBPFStats skipped this mechanism and
	// case (e.g. a mechanism without BPF programs), "" if it did not.
	BodySkipped string
	// Programs are the per-program statistics, by program name.
	Programs []ProgramRow
}

// ProgramRow is one BPF program's run-time statistics.
type ProgramRow struct {
	Name      string
	RunsPerOp Estimate // runs per read(2)
	// NsPerRun is the median run time per run; absent for a program that
	// never ran in the loop (one not attached to vfs_read).
	NsPerRun    Estimate
	HasNsPerRun bool
}

// Summarize computes the summary of run.
func Summarize(run *Run) *Summary {
	s := &Summary{
		Kernel:    run.Config["tracebench-kernel"],
		Emulation: run.Config["tracebench-emulation"],
		Clock:     run.Config["tracebench-clock"],
		Rounds:    run.Rounds,
		CPUs:      run.Config["tracebench-cpus"],
		CPUModel:  run.Config["cpu"],
		Skipped:   outcomes(run.Skipped),
		Failed:    outcomes(run.Failed),
	}
	base := run.Values(Key{Bench: VFSRead, Mechanism: Baseline}, "ns/op")
	s.Baseline, s.HasBase = Median(base)
	s.Cases = cases(run)
	s.Floors = floors(run)
	for _, c := range s.Cases {
		refKey := Key{VFSRead, Reference, c}
		refOverhead, refOK := ComparePaired(run.Paired(refKey, baseKey, "ns/op"))
		for _, m := range mechanisms(run, c) {
			r := row(run, m, c, refOverhead, refOK)
			s.Rows = append(s.Rows, r)
			if d, ok := drops(run, Key{VFSRead, m, c}); ok {
				s.Drops = append(s.Drops, d)
			}
		}
	}
	s.Costs = costs(run, s.Rows)
	s.Missing = missing(run, s.Cases)
	s.Peers, s.PeerBaseline = peerRows(run)
	for _, k := range slices.Sorted(maps.Keys(run.Config)) {
		if strings.HasPrefix(k, "tracebench-peer-") {
			s.PeerVersions = append(s.PeerVersions, strings.TrimPrefix(k, "tracebench-peer-")+" "+run.Config[k])
		}
	}
	return s
}

// peerRows compares each BenchmarkPeers sub-benchmark with that
// benchmark's baseline, round by round.
func peerRows(run *Run) ([]Peer, Estimate) {
	base := Key{Bench: Peers, Mechanism: Baseline}
	var out []Peer
	for k := range run.Samples {
		if k.Bench != Peers || k.Mechanism == Baseline {
			continue
		}
		p := Peer{Name: k.Mechanism}
		p.NsPerOp, _ = Median(run.Values(k, "ns/op"))
		p.Overhead, p.HasOverhead = ComparePaired(run.Paired(k, base, "ns/op"))
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Peer) int { return cmp.Compare(a.Name, b.Name) })
	baseline, _ := Median(run.Values(base, "ns/op"))
	return out, baseline
}

var baseKey = Key{Bench: VFSRead, Mechanism: Baseline}

// row compares mechanism m in case c with baseline and Reference, round by
// round.
func row(run *Run, m, c string, refOverhead Shift, refOK bool) Row {
	key := Key{VFSRead, m, c}
	r := Row{Mechanism: m, Case: c, Ratio: math.NaN()}
	r.NsPerOp, _ = Median(run.Values(key, "ns/op"))
	r.Overhead, r.HasOverhead = ComparePaired(run.Paired(key, baseKey, "ns/op"))
	if m != Reference {
		r.VsReference, r.HasVsReference = ComparePaired(run.Paired(key, Key{VFSRead, Reference, c}, "ns/op"))
	}
	r.Ratio, r.NoRatio = ratio(r, refOverhead, refOK)
	if r.Floor = run.Config["tracebench-floor-"+m]; r.Floor != "" {
		r.AboveFloor, r.HasAboveFloor = ComparePaired(run.Paired(key, Key{VFSRead, r.Floor, suite.FloorCase}, "ns/op"))
	}
	r.Consumer, r.HasConsumer = Median(run.Values(key, "consumer-ns/event"))
	r.Events, r.HasEvents = Median(run.Values(key, "events/s"))
	r.Dropped, r.HasDropped = Median(run.Values(key, "dropped/s"))
	stats := Key{BPFStats, m, c}
	r.Body, r.HasBody = Median(run.Values(stats, "bpf-ns/op"))
	r.BodySkipped = run.Skipped[stats]
	r.Programs = programs(run.Samples[stats])
	return r
}

// floors returns the floors measured, in suite.Floors' order, then others by
// name.
func floors(run *Run) []Floor {
	var out []Floor
	for _, name := range mechanisms(run, suite.FloorCase) {
		key := Key{VFSRead, name, suite.FloorCase}
		f := Floor{Name: name}
		f.NsPerOp, _ = Median(run.Values(key, "ns/op"))
		f.Overhead, f.HasOverhead = ComparePaired(run.Paired(key, baseKey, "ns/op"))
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Floor) int { return cmp.Compare(floorRank(a.Name), floorRank(b.Name)) })
	return out
}

func floorRank(name string) int {
	if i := slices.Index(suite.Floors, name); i >= 0 {
		return i
	}
	return len(suite.Floors)
}

// Floor returns the floor named name.
func (s *Summary) Floor(name string) (Floor, bool) {
	i := slices.IndexFunc(s.Floors, func(f Floor) bool { return f.Name == name })
	if i < 0 {
		return Floor{}, false
	}
	return s.Floors[i], true
}

// costs returns each mechanism's cost beyond time, in the rows' order.
func costs(run *Run, rows []Row) []Cost {
	var out []Cost
	for _, r := range rows {
		if r.Case != CostCase {
			continue
		}
		c := Cost{Mechanism: r.Mechanism, Units: map[string]Estimate{}}
		for _, u := range CostUnits {
			if e, ok := Median(run.Values(Key{VFSRead, r.Mechanism, CostCase}, u)); ok {
				c.Units[u] = e
			}
		}
		if len(c.Units) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// ratio divides r's overhead by Reference's, or says why not: a ratio of
// an overhead that may be zero means nothing.
func ratio(r Row, ref Shift, refOK bool) (float64, string) {
	switch {
	case !r.HasOverhead || !refOK:
		return math.NaN(), "n/a"
	case !r.Overhead.Significant() || r.Overhead.Center <= 0:
		return math.NaN(), "overhead n.s."
	case !ref.Significant() || ref.Center <= 0:
		return math.NaN(), Reference + "'s overhead n.s."
	}
	return r.Overhead.Center / ref.Center, ""
}

// drops reports whether sub-benchmark k dropped events in some round.
func drops(run *Run, k Key) (Drop, bool) {
	values := run.Values(k, "dropped/s")
	d := Drop{Mechanism: k.Mechanism, Case: k.Case, Of: len(values)}
	for _, v := range values {
		if v > 0 {
			d.Rounds++
			d.Max = max(d.Max, v)
		}
	}
	return d, d.Rounds > 0
}

// missing lists the sub-benchmarks absent from some round, and those of a
// mechanism measured in some case that are absent from every round of
// another, unless a skip or failure says why.
func missing(run *Run, cases []string) []Missing {
	keys := map[Key]bool{}
	for k := range run.Samples {
		keys[k] = true
	}
	for _, c := range cases {
		for _, m := range mechanisms(run, "") {
			keys[Key{VFSRead, m, c}] = true
		}
	}
	var out []Missing
	for k := range keys {
		_, skipped := run.Skipped[k]
		_, failed := run.Failed[k]
		if rounds := run.MissingRounds(k); len(rounds) > 0 && !skipped && !failed {
			out = append(out, Missing{Key: k, Rounds: rounds})
		}
	}
	slices.SortFunc(out, func(a, b Missing) int { return cmp.Compare(a.Key.String(), b.Key.String()) })
	return out
}

// programs reads the <name>-runs/op and <name>-ns/run units.
func programs(units map[string][]float64) []ProgramRow {
	var rows []ProgramRow
	for unit, values := range units {
		name, ok := strings.CutSuffix(unit, "-runs/op")
		if !ok {
			continue
		}
		p := ProgramRow{Name: name}
		p.RunsPerOp, _ = Median(values)
		p.NsPerRun, p.HasNsPerRun = Median(units[name+"-ns/run"])
		rows = append(rows, p)
	}
	slices.SortFunc(rows, func(a, b ProgramRow) int { return cmp.Compare(a.Name, b.Name) })
	return rows
}

// HasOverhead reports whether some mechanism has an overhead over
// baseline: what the chart draws and benchstat compares. Without one the
// report has neither (NoOverhead says why).
func (s *Summary) HasOverhead() bool { return len(chartMechanisms(s.Rows)) > 0 }

// PeersOnly reports whether the run measured BenchmarkPeers alone
// (BENCH_SUITE=peers).
func (s *Summary) PeersOnly() bool { return len(s.Rows) == 0 && !s.HasBase && len(s.Peers) > 0 }

// NoOverhead says why no mechanism has an overhead over baseline, as a
// lower-case clause; "" if one has.
func (s *Summary) NoOverhead() string {
	switch {
	case s.HasOverhead():
		return ""
	case s.PeersOnly():
		return "this run measured the peer tools only (BENCH_SUITE=peers); the mechanisms' overheads are in the report one directory up"
	case len(s.Rows) > 0:
		// A row has the mechanism's samples, so the baseline's are missing.
		return "no baseline was measured"
	case len(s.Failed) > 0:
		return "no mechanism was measured on this kernel"
	}
	return "no mechanism ran on this kernel"
}

// Dispatch is the overhead not spent in the program bodies: Overhead minus
// Body, a difference of two point estimates from different benchmarks
// (Body with statistics on), so derived, not measured; ok is false when
// either is missing.
func (r Row) Dispatch() (ns float64, ok bool) {
	if !r.HasBody || !r.HasOverhead {
		return 0, false
	}
	return r.Overhead.Center - r.Body.Center, true
}

// knownCases orders the cases as package bench does; others follow by name.
var knownCases = []string{"tgid-miss", "below-threshold", "every-call"}

func cases(run *Run) []string {
	seen := map[string]bool{}
	for k := range run.Samples {
		if k.Case != "" && k.Case != suite.FloorCase {
			seen[k.Case] = true
		}
	}
	for k := range run.Skipped {
		if k.Case != "" && k.Case != suite.FloorCase {
			seen[k.Case] = true
		}
	}
	return ordered(seen, knownCases)
}

// mechanisms returns the mechanisms measured in case c, Reference first;
// with c "", those measured in any of the report's cases.
func mechanisms(run *Run, c string) []string {
	seen := map[string]bool{}
	for k := range run.Samples {
		if k.Bench == VFSRead && k.Case != "" && (k.Case == c || c == "" && k.Case != suite.FloorCase) {
			seen[k.Mechanism] = true
		}
	}
	return ordered(seen, []string{Reference})
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
func outcomes(m map[Key]string) []Outcome {
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
		benches[g]["Benchmark"+k.Bench] = true
	}
	var out []Outcome
	for g, n := range count {
		i := slices.IndexFunc(out, func(o Outcome) bool { return o.Who == g.who })
		if i < 0 {
			i = len(out)
			out = append(out, Outcome{Who: g.who})
		}
		out[i].N += n
		out[i].Reasons = append(out[i].Reasons, Reason{Msg: g.msg, N: n, Benchmarks: ordered(benches[g], benchmarkOrder)})
	}
	for _, o := range out {
		slices.SortFunc(o.Reasons, func(a, b Reason) int {
			return cmp.Or(
				cmp.Compare(benchmarkRank(a.Benchmarks[0]), benchmarkRank(b.Benchmarks[0])),
				cmp.Compare(a.Benchmarks[0], b.Benchmarks[0]),
				cmp.Compare(a.Msg, b.Msg))
		})
	}
	slices.SortFunc(out, func(a, b Outcome) int { return cmp.Compare(a.Who, b.Who) })
	return out
}

// benchmarkOrder is the order of package bench's benchmarks.
var benchmarkOrder = []string{"Benchmark" + VFSRead, "Benchmark" + BPFStats, "Benchmark" + Peers}

// benchmarkRank orders name as benchmarkOrder does, others after.
func benchmarkRank(name string) int {
	if i := slices.Index(benchmarkOrder, name); i >= 0 {
		return i
	}
	return len(benchmarkOrder)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
