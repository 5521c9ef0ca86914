package report

import (
	"cmp"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"tracebench/bench/suite"
)

// reference is the mechanism the others are compared with: the
// established trampoline design.
const reference = "fentry-fexit"

// overheadPart is the overhead family's share of a report:
// BenchmarkVFSRead (each mechanism in each case and each floor against
// baseline) and BenchmarkBPFStats (the program bodies).
type overheadPart struct {
	Baseline estimate
	HasBase  bool
	cases    []string // in the order of the benchmark's table
	Rows     []Row    // by case, then mechanism
	// Floors are the empty programs per attach kind, in suite.Floors' order.
	Floors []Floor
	// Costs are the mechanisms' costs beyond time (costCase's rows).
	Costs []cost
	// failed: some sub-benchmark failed (NoOverhead says so).
	failed bool
}

// Floor is one floor: empty programs of some attach kinds on vfs_read.
type Floor struct {
	Name    string   // attach kinds joined with "+", e.g. "fentry+fexit"
	NsPerOp estimate // median per read(2) with them attached
	// Overhead is ns/op above baseline, paired by round.
	Overhead    shift
	hasOverhead bool
}

// costCase is the case whose sub-benchmarks report the cost beyond time.
const costCase = "below-threshold"

// cost is a mechanism's cost beyond time, medians over the rounds.
type cost struct {
	Mechanism string
	// units holds start-ns, map-bytes, xlated-bytes, jited-bytes and
	// verified-insns, those the benchmark reported.
	units map[string]estimate
}

// costUnits are the units of cost, in the report's order.
var costUnits = []string{"start-ns", "map-bytes", "xlated-bytes", "jited-bytes", "verified-insns"}

// Row is one mechanism in one case.
type Row struct {
	Mechanism, Case string
	// NsPerOp is the median ns per read(2) with the mechanism attached.
	NsPerOp estimate
	// Overhead is ns/op above baseline; hasOverhead is false without
	// baseline samples.
	Overhead    shift
	hasOverhead bool
	// VsReference is ns/op above reference in the same case; absent for
	// reference itself.
	VsReference    shift
	HasVsReference bool
	// Ratio is Overhead / reference's Overhead in the same case, from the
	// two point estimates; NaN when either is missing or not
	// significantly above zero (noRatio says which).
	Ratio   float64
	noRatio string
	// Every-call only: events consumed per second and events dropped per
	// second (ring buffer full), medians.
	Events, Dropped       estimate
	HasEvents, HasDropped bool
	// bpfStats: program body time per read(2), all programs together,
	// with run-time statistics on.
	Body    estimate
	hasBody bool
	// Floor names the floor of the mechanism's attach kinds ("" without
	// one); AboveFloor is ns/op above that floor, paired by round: what
	// the program bodies (and maps, ring buffer) add to the kinds'
	// dispatch.
	Floor         string
	AboveFloor    shift
	HasAboveFloor bool
	// Every-call only: the consumer's ns per event, reading them after
	// the loop.
	Consumer    estimate
	HasConsumer bool
	// BodySkipped is why BenchmarkBPFStats skipped this mechanism and
	// case (e.g. a mechanism without BPF programs), "" if it did not.
	BodySkipped string
	// Programs are the per-program statistics, by program name.
	Programs []programRow
}

// programRow is one BPF program's run-time statistics.
type programRow struct {
	Name      string
	RunsPerOp estimate // runs per read(2)
	// NsPerRun is the median run time per run; absent for a program that
	// never ran in the loop (one not attached to vfs_read).
	NsPerRun    estimate
	HasNsPerRun bool
}

var baseKey = Key{bench: vfsRead, Mechanism: Baseline}

// summarizeOverhead compares every mechanism and floor with baseline and
// reference, round by round.
func summarizeOverhead(run *run) Part {
	o := &overheadPart{failed: len(run.Failed) > 0}
	o.Baseline, o.HasBase = median(run.values(baseKey, "ns/op"))
	o.cases = cases(run)
	o.Floors = floors(run)
	for _, c := range o.cases {
		refOverhead, refOK := comparePaired(run.paired(Key{vfsRead, reference, c}, baseKey, "ns/op"))
		for _, m := range mechanisms(run, c) {
			o.Rows = append(o.Rows, row(run, m, c, refOverhead, refOK))
		}
	}
	o.Costs = costs(run, o.Rows)
	return o
}

// Measured: a baseline, a mechanism or a floor was measured.
func (o *overheadPart) Measured() bool { return o.HasBase || len(o.Rows) > 0 || len(o.Floors) > 0 }

// expected: a mechanism measured in some case is expected in every case.
func (o *overheadPart) expected() []Key {
	var keys []Key
	for _, c := range o.cases {
		for _, r := range o.Rows {
			keys = append(keys, Key{vfsRead, r.Mechanism, c})
		}
	}
	return keys
}

// Charts: the overhead of every mechanism in every case.
func (o *overheadPart) Charts(s *Summary) []Chart {
	return []Chart{{File: ChartFile, What: "the chart above", Draw: func(w io.Writer, format string) error {
		return o.writeChart(w, s, format)
	}}}
}

// Comparisons: benchstat's comparison of every mechanism with baseline
// (ns/op only: baseline has no events) and with reference. Rows are cases,
// columns mechanisms; benchstat compares each column with the first, which
// the inputs put first.
func (o *overheadPart) Comparisons() []Comparison {
	return []Comparison{
		{File: BenchstatBaselineFile, Args: []string{"-filter", ".name:" + vfsRead + " .unit:sec/op", "-row", "/case", "-col", "/mechanism"},
			Input: func(w io.Writer, raw io.Reader) error { return writeBenchstatInput(w, raw, Baseline) }},
		{File: BenchstatReferenceFile, Args: []string{"-row", ".name,/case", "-col", "/mechanism"},
			Input: func(w io.Writer, raw io.Reader) error { return writeBenchstatInput(w, raw, reference, Baseline) }},
	}
}

// Without is NoOverhead: without an overhead there is nothing to draw or
// compare.
func (o *overheadPart) Without() string { return o.NoOverhead() }

// row compares mechanism m in case c with baseline and reference, round by
// round.
func row(run *run, m, c string, refOverhead shift, refOK bool) Row {
	key := Key{vfsRead, m, c}
	r := Row{Mechanism: m, Case: c, Ratio: math.NaN()}
	r.NsPerOp, _ = median(run.values(key, "ns/op"))
	r.Overhead, r.hasOverhead = comparePaired(run.paired(key, baseKey, "ns/op"))
	if m != reference {
		r.VsReference, r.HasVsReference = comparePaired(run.paired(key, Key{vfsRead, reference, c}, "ns/op"))
	}
	r.Ratio, r.noRatio = ratio(r, refOverhead, refOK)
	if r.Floor = run.config[suite.FloorKeyPrefix+m]; r.Floor != "" {
		r.AboveFloor, r.HasAboveFloor = comparePaired(run.paired(key, Key{vfsRead, r.Floor, suite.FloorCase}, "ns/op"))
	}
	r.Consumer, r.HasConsumer = median(run.values(key, "consumer-ns/event"))
	r.Events, r.HasEvents = median(run.values(key, "events/s"))
	r.Dropped, r.HasDropped = median(run.values(key, "dropped/s"))
	stats := Key{bpfStats, m, c}
	r.Body, r.hasBody = median(run.values(stats, "bpf-ns/op"))
	r.BodySkipped = run.Skipped[stats]
	r.Programs = programs(run.samples[stats])
	return r
}

// floors returns the floors measured, in suite.Floors' order, then others
// by name.
func floors(run *run) []Floor {
	var out []Floor
	for _, name := range ordered(setOf(slices.Values(mechanisms(run, suite.FloorCase))), suite.Floors) {
		key := Key{vfsRead, name, suite.FloorCase}
		f := Floor{Name: name}
		f.NsPerOp, _ = median(run.values(key, "ns/op"))
		f.Overhead, f.hasOverhead = comparePaired(run.paired(key, baseKey, "ns/op"))
		out = append(out, f)
	}
	return out
}

// Floor returns the floor named name.
func (o *overheadPart) Floor(name string) (Floor, bool) {
	i := slices.IndexFunc(o.Floors, func(f Floor) bool { return f.Name == name })
	if i < 0 {
		return Floor{}, false
	}
	return o.Floors[i], true
}

// FloorOverhead is floor name's overhead over baseline, nil without one.
func (o *overheadPart) FloorOverhead(name string) *shift {
	if f, ok := o.Floor(name); ok && f.hasOverhead {
		return &f.Overhead
	}
	return nil
}

// costs returns each mechanism's cost beyond time, in the rows' order.
func costs(run *run, rows []Row) []cost {
	var out []cost
	for _, r := range rows {
		if r.Case != costCase {
			continue
		}
		c := cost{Mechanism: r.Mechanism, units: map[string]estimate{}}
		for _, u := range costUnits {
			if e, ok := median(run.values(Key{vfsRead, r.Mechanism, costCase}, u)); ok {
				c.units[u] = e
			}
		}
		if len(c.units) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// ratio divides r's overhead by reference's, or says why not: a ratio of
// an overhead that may be zero means nothing.
func ratio(r Row, ref shift, refOK bool) (float64, string) {
	switch {
	case !r.hasOverhead || !refOK:
		return math.NaN(), "n/a"
	case !r.Overhead.significant() || r.Overhead.Center <= 0:
		return math.NaN(), "overhead n.s."
	case !ref.significant() || ref.Center <= 0:
		return math.NaN(), reference + "'s overhead n.s."
	}
	return r.Overhead.Center / ref.Center, ""
}

// programs reads the <name>-runs/op and <name>-ns/run units.
func programs(units map[string][]float64) []programRow {
	var rows []programRow
	for unit, values := range units {
		name, ok := strings.CutSuffix(unit, "-runs/op")
		if !ok {
			continue
		}
		p := programRow{Name: name}
		p.RunsPerOp, _ = median(values)
		p.NsPerRun, p.HasNsPerRun = median(units[name+"-ns/run"])
		rows = append(rows, p)
	}
	slices.SortFunc(rows, func(a, b programRow) int { return cmp.Compare(a.Name, b.Name) })
	return rows
}

// hasOverhead reports whether some mechanism has an overhead over
// baseline: what the chart draws and benchstat compares. Without one the
// report has neither (NoOverhead says why).
func (o *overheadPart) hasOverhead() bool { return len(chartMechanisms(o.Rows)) > 0 }

// NoOverhead says why no mechanism has an overhead over baseline, as a
// lower-case clause; "" if one has.
func (o *overheadPart) NoOverhead() string {
	switch {
	case o.hasOverhead():
		return ""
	case len(o.Rows) > 0:
		// A row has the mechanism's samples, so the baseline's are missing.
		return "no baseline was measured"
	case o.failed:
		return "no mechanism was measured on this kernel"
	}
	return "no mechanism ran on this kernel"
}

// dispatch is the overhead not spent in the program bodies: Overhead minus
// Body, a difference of two point estimates from different benchmarks
// (Body with statistics on), so derived, not measured; ok is false when
// either is missing.
func (r Row) dispatch() (ns float64, ok bool) {
	if !r.hasBody || !r.hasOverhead {
		return 0, false
	}
	return r.Overhead.Center - r.Body.Center, true
}

// knownCases orders the cases as package bench does; others follow by name.
var knownCases = []string{"tgid-miss", "below-threshold", "every-call"}

func cases(run *run) []string {
	seen := map[string]bool{}
	for _, keys := range []iter.Seq[Key]{maps.Keys(run.samples), maps.Keys(run.Skipped)} {
		for k := range keys {
			if k.Case != "" && k.Case != suite.FloorCase {
				seen[k.Case] = true
			}
		}
	}
	return ordered(seen, knownCases)
}

// mechanisms returns the mechanisms measured in case c, reference first;
// with c "", those measured in any of the report's cases.
func mechanisms(run *run, c string) []string {
	seen := map[string]bool{}
	for k := range run.samples {
		if k.bench == vfsRead && k.Case != "" && (k.Case == c || c == "" && k.Case != suite.FloorCase) {
			seen[k.Mechanism] = true
		}
	}
	return ordered(seen, []string{reference})
}

// Targets of the benchmark (issue 11): enough rounds, a short run, and
// overheads known to within a few percent where nothing is reported.
const (
	TargetRounds    = 6
	TargetDurationS = 600
	TargetCIShare   = 0.03
)

// targetCases are the cases whose overheads must be that precise.
var targetCases = []string{"tgid-miss", "below-threshold"}

// target is one row of the targets table; Met is "n/a" where the run
// did not record what it needs.
type target struct{ What, Got, Met string }

// Targets says for each target whether a run of rounds rounds, meta and
// drops met it.
func (o *overheadPart) Targets(rounds int, meta Meta, drops []Drop) []target {
	var out []target
	add := func(what, got string, met bool) { out = append(out, target{what, got, yesNo(met)}) }
	add(fmt.Sprintf("≥ %d rounds", TargetRounds), fmt.Sprint(rounds), rounds >= TargetRounds)
	duration := fmt.Sprintf("one run ≤ %d s, boot included", TargetDurationS)
	if d := meta.get("duration-s"); d != "" {
		secs, err := strconv.Atoi(d)
		add(duration, d+" s", err == nil && secs <= TargetDurationS)
	} else {
		out = append(out, target{duration, "not recorded", "n/a"})
	}
	for _, r := range o.Rows {
		if !slices.Contains(targetCases, r.Case) || !r.hasOverhead {
			continue
		}
		share, ok := ciShare(r.Overhead.estimate)
		got := fmt.Sprintf("no interval (n=%d)", r.Overhead.N)
		if ok {
			got = fmt.Sprintf("±%.1f%%", 100*share)
		}
		add(fmt.Sprintf("%s/%s overhead: 95%% CI within ±%.0f%%", r.Mechanism, r.Case, 100*TargetCIShare), got, ok && share <= TargetCIShare)
	}
	for _, r := range o.Rows {
		if !r.HasDropped {
			continue
		}
		i := slices.IndexFunc(drops, func(d Drop) bool { return d.Mechanism == r.Mechanism && d.Case == r.Case })
		got := "0 in every round"
		if i >= 0 {
			got = fmt.Sprintf("dropped in %d of %d rounds", drops[i].Rounds, drops[i].Of)
		}
		add(fmt.Sprintf("%s/%s: no event dropped", r.Mechanism, r.Case), got, i < 0)
	}
	return out
}

// ciShare is the larger distance from e's center to a bound, as a share of
// the center; ok is false without an interval or with a zero center.
func ciShare(e estimate) (float64, bool) {
	if !e.hasCI() || e.Center == 0 {
		return 0, false
	}
	return max(e.hi-e.Center, e.Center-e.lo) / math.Abs(e.Center), true
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// EventRows are the rows with events or drops (every-call).
func (o *overheadPart) EventRows() []Row {
	return filterRows(o.Rows, func(r Row) bool { return r.HasEvents || r.HasDropped })
}

// BodyRows are the rows with BPF statistics.
func (o *overheadPart) BodyRows() []Row {
	return filterRows(o.Rows, func(r Row) bool { return r.hasBody })
}

// FloorRows are the rows of mechanisms with a floor.
func (o *overheadPart) FloorRows() []Row {
	return filterRows(o.Rows, func(r Row) bool { return r.Floor != "" })
}

// BodySkipped lists the mechanisms with an overhead row that
// BenchmarkBPFStats skipped, one line per mechanism and reason:
// "<mechanism> (<cases>): <reason>".
func (o *overheadPart) BodySkipped() []string {
	type group struct{ mechanism, reason string }
	var order []group
	cases := map[group][]string{}
	for _, r := range o.Rows {
		if r.hasBody || r.BodySkipped == "" {
			continue
		}
		g := group{r.Mechanism, r.BodySkipped}
		if cases[g] == nil {
			order = append(order, g)
		}
		cases[g] = append(cases[g], r.Case)
	}
	var lines []string
	for _, g := range order {
		lines = append(lines, fmt.Sprintf("%s (%s): %s", g.mechanism, strings.Join(cases[g], ", "), g.reason))
	}
	return lines
}

func filterRows(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// RowsOf are the rows of case c, in the table's order.
func (o *overheadPart) RowsOf(c string) []Row {
	return filterRows(o.Rows, func(r Row) bool { return r.Case == c })
}

// RowOf is mechanism m's row in case c, nil without one.
func (o *overheadPart) RowOf(m, c string) *Row {
	for i := range o.Rows {
		if o.Rows[i].Mechanism == m && o.Rows[i].Case == c {
			return &o.Rows[i]
		}
	}
	return nil
}
