package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracebench/bench/suite"
)

// Benchmark names of the multi family.
const (
	multiRead  = "MultiRead"  // the readpath set's cost per read(2), every round
	multiStart = "MultiStart" // Start, Close and memory by set size, once per run
	traceExit  = "TraceExit"  // the CLI's exit after SIGINT, CPUs busy, once per run
)

// growthChartFile is the multi family's log-log plot of Start against
// the number of functions.
const growthChartFile = "growth.svg"

// multiPart is the multi family's share of a report: BenchmarkMultiRead,
// each mechanism's and peer's overhead per read(2) on the readpath set
// over the baseline, and BenchmarkMultiStart, its Start, Close and kernel
// memory against the number of functions traced.
type multiPart struct {
	Baseline estimate
	HasBase  bool
	// Readpath are BenchmarkMultiRead's rows, mechanisms first.
	Readpath []ReadpathRow
	// Growth are BenchmarkMultiStart's rows: the mechanisms tracing
	// many functions, the peers, the vfs_read-only mechanisms.
	Growth []Growth
	// Sets are the function sets, readpath first, then by size.
	Sets []functionSet
	// Kinds are the attach kinds the sets were built for; SetsBuilt how
	// long building them took (guest s, "" if the run did not say);
	// Budget the time budget of one Start, CloseBudget that of one Close
	// ("" where the run had none); PeerLimit how long a peer's
	// Start may take before it is killed (both Go durations, "" if the
	// run did not say).
	Kinds, SetsBuilt, Budget, CloseBudget, PeerLimit string
	// Preload: the peers' programs were in RAM for their Starts.
	Preload bool
	// Apart: BenchmarkMultiStart ran in processes of its own (a fresh
	// guest each), not in the first round.
	Apart bool
	// Versions are the peers' "package version".
	Versions []string
	// Exits are BenchmarkTraceExit's rows, in the run's mechanism order.
	Exits []ExitRow
}

// ExitRow is one mechanism's `tracebench trace` run of BenchmarkTraceExit:
// Attach (exec to its banner) and Exit (SIGINT to exit), guest ns, on
// the function set Set, the CPUs busy.
type ExitRow struct {
	Name, Set    string
	Attach, Exit float64
}

// functionSet is a set's name and size; its file is sets/<name>.txt.
type functionSet struct {
	Name      string
	Functions int
}

// File is the set's file, relative to the report.
func (s functionSet) File() string { return "sets/" + s.Name + ".txt" }

// ReadpathRow is one mechanism or peer tracing the readpath set.
type ReadpathRow struct {
	Name, Design string
	Peer         bool
	// NsPerOp is the median ns/op over the rounds, HasNsPerOp false when
	// no round measured it (every round failed or skipped it).
	NsPerOp    estimate
	HasNsPerOp bool
	// Overhead is ns/op above BenchmarkMultiRead/baseline, paired by round.
	Overhead    shift
	hasOverhead bool
	// Ratio is Overhead over the lowest significant overhead of the
	// rows, NaN where either is not significant.
	Ratio float64
	// Start is the median start-ns: Start on the readpath set.
	Start    estimate
	HasStart bool
}

// Growth is one mechanism or peer in BenchmarkMultiStart.
type Growth struct {
	Name, Design string
	Peer         bool
	// Single: a mechanism tracing vfs_read alone, measured there only.
	Single bool
	// Cells are its sizes, in the sets' order: measured, extrapolated
	// or neither.
	Cells []growthCell
	// stop is where it stops, nil if it ran every size.
	stop *suite.Stop
	// Skipped says why every size was skipped, "" if one was measured.
	Skipped string
	// StartFit, CloseFit and BusyCloseFit are the power laws of
	// start-ns, close-ns and close-busy-ns against functions over the
	// sizes measured; tailFit is FitTail's of Start, which extrapolates
	// beyond a stop as the stop rule predicted.
	StartFit, CloseFit, BusyCloseFit, tailFit             Fit
	HasStartFit, HasCloseFit, HasBusyCloseFit, hasTailFit bool
}

// growthCell is one size of one mechanism or peer.
type growthCell struct {
	Size      string
	Functions float64
	// units are its figures as BenchmarkMultiStart printed them (one
	// round), Measured true; without a measurement, extrapolated says
	// Start is tailFit's prediction (beyond a budget stop).
	units                  map[string]float64
	Measured, extrapolated bool
	// refused: Start failed at this size (stop says why).
	refused bool
	// cut: the read loop with this size traced passed the budget, so the
	// size has no figures (stop gives its Start and the reads done).
	cut bool
	// killed: the peer did not attach within the peer limit, so its
	// Start at this size is only known to exceed that limit.
	killed bool
	// notAttempted: past a refusal or a kill, where no fit may
	// extrapolate (a kill's lower bound lies above the fit).
	notAttempted bool
	// Waits is what its Close with the CPUs busy waited in, as sampled
	// (suite.MultiCloseWaitsPrefix); "" where not printed.
	Waits string
	// LostFunctions are the functions that lost the most calls
	// (suite.MultiLostFunctionsPrefix); "" where none lost one.
	LostFunctions string
}

// predictedStart is the extrapolated Start at the cell's size (tailFit),
// guest ns.
func (g Growth) predictedStart(c growthCell) float64 { return g.tailFit.Predict(c.Functions) }

// FitTail is the line (log-log) through the two largest sizes measured,
// x functions ascending and y their Start: what BenchmarkMultiStart
// predicts the next size's Start by, and the report extrapolates with. A
// fit of every size bends toward the small sizes' fixed cost and predicts
// too little (fentry-fexit-multi, 7.2 guest: 3.5 s at 10000 functions,
// then a Start at 44591 not ended after 20 minutes of host time).
func FitTail(x, y []float64) (Fit, bool) {
	last := max(0, len(x)-2)
	return fitPowerLaw(x[last:], y[last:])
}

var multiBase = Key{bench: multiRead, Mechanism: Baseline}

// summarizeMulti reads the multi family's figures and configuration lines.
func summarizeMulti(run *run) Part {
	p := &multiPart{Kinds: run.config[suite.MultiKinds], SetsBuilt: run.config[suite.MultiSetsBuilt],
		Budget: run.config[suite.MultiBudget], CloseBudget: run.config[suite.MultiCloseBudget], PeerLimit: run.config[suite.MultiPeerLimit],
		Apart: run.onceProcesses > 0, Preload: run.config[suite.MultiPeerPreload] == "true"}
	p.Baseline, p.HasBase = median(run.values(multiBase, "ns/op"))
	for key, v := range run.config {
		if name, ok := strings.CutPrefix(key, suite.MultiSetPrefix); ok {
			n, _ := strconv.Atoi(v)
			p.Sets = append(p.Sets, functionSet{Name: name, Functions: n})
		}
		if pkg, ok := strings.CutPrefix(key, "tracebench-peer-"); ok {
			p.Versions = append(p.Versions, pkg+" "+v)
		}
	}
	// readpath first, then by size.
	notReadpath := func(s functionSet) int {
		if s.Name == suite.ReadpathCase {
			return 0
		}
		return 1
	}
	slices.SortFunc(p.Sets, func(a, b functionSet) int {
		return cmp.Or(cmp.Compare(notReadpath(a), notReadpath(b)), cmp.Compare(a.Functions, b.Functions), cmp.Compare(a.Name, b.Name))
	})
	slices.Sort(p.Versions)
	peersOf := setOf(slices.Values(strings.Fields(run.config[suite.MultiPeers])))
	single := setOf(slices.Values(strings.Fields(run.config[suite.MultiSingle])))
	for _, name := range multiNames(run, multiRead) {
		p.Readpath = append(p.Readpath, readpathRow(run, name, peersOf[name]))
	}
	p.ratios()
	for _, name := range multiNames(run, multiStart) {
		p.Growth = append(p.Growth, p.growth(run, name, peersOf[name], single[name]))
	}
	p.Exits = exitRows(run)
	return p
}

// exitRows reads BenchmarkTraceExit's measurements (one sample each), in
// the run's mechanism order, then by set.
func exitRows(run *run) []ExitRow {
	keys := slices.SortedFunc(maps.Keys(run.samples), func(a, b Key) int { return cmp.Compare(a.Case, b.Case) })
	var rows []ExitRow
	for _, name := range multiNames(run, traceExit) {
		for _, key := range keys {
			units := run.samples[key]
			if key.bench == traceExit && key.Mechanism == name && len(units["exit-ns"]) > 0 {
				rows = append(rows, ExitRow{Name: name, Set: key.Case, Attach: units["attach-ns"][0], Exit: units["exit-ns"][0]})
			}
		}
	}
	return rows
}

// multiNames are the names bench's sub-benchmarks have: those the run
// lists (mechanisms, peers, vfs_read-only mechanisms, in that order),
// then any other by name.
func multiNames(run *run, bench string) []string {
	seen := map[string]bool{}
	for _, keys := range [][]Key{slices.Collect(maps.Keys(run.samples)), slices.Collect(maps.Keys(run.Skipped)),
		slices.Collect(maps.Keys(run.Failed))} {
		for _, k := range keys {
			if k.bench == bench && k.Mechanism != Baseline && k.Case != "" {
				seen[k.Mechanism] = true
			}
		}
	}
	var listed []string
	for _, key := range []string{suite.MultiMechanisms, suite.MultiPeers, suite.MultiSingle} {
		listed = append(listed, strings.Fields(run.config[key])...)
	}
	return ordered(seen, listed)
}

func readpathRow(run *run, name string, peer bool) ReadpathRow {
	key := Key{multiRead, name, suite.ReadpathCase}
	r := ReadpathRow{Name: name, Design: run.config[suite.MultiDesignPrefix+name], Peer: peer, Ratio: math.NaN()}
	r.NsPerOp, r.HasNsPerOp = median(run.values(key, "ns/op"))
	r.Overhead, r.hasOverhead = comparePaired(run.paired(key, multiBase, "ns/op"))
	r.Start, r.HasStart = median(run.values(key, "start-ns"))
	return r
}

// ratios divides each significant overhead by the lowest one.
func (p *multiPart) ratios() {
	lowest := math.Inf(1)
	for _, r := range p.Readpath {
		if r.hasOverhead && r.Overhead.significant() && r.Overhead.Center > 0 {
			lowest = min(lowest, r.Overhead.Center)
		}
	}
	for i, r := range p.Readpath {
		if r.hasOverhead && r.Overhead.significant() && r.Overhead.Center > 0 {
			p.Readpath[i].Ratio = r.Overhead.Center / lowest
		}
	}
}

// growth reads name's sizes: the measured ones, where it stops, the fits
// and what they extrapolate beyond a budget.
func (p *multiPart) growth(run *run, name string, peer, single bool) Growth {
	g := Growth{Name: name, Design: run.config[suite.MultiDesignPrefix+name], Peer: peer, Single: single}
	if v, ok := run.config[suite.MultiStopPrefix+name]; ok {
		if stop, err := suite.ParseStop(v); err == nil {
			g.stop = &stop
		} else {
			g.stop = &suite.Stop{Reason: suite.StopRefused, Text: err.Error()}
		}
	}
	sizes := slices.DeleteFunc(slices.Clone(p.Sets), func(s functionSet) bool { return s.Name == suite.ReadpathCase })
	if single {
		sizes = []functionSet{{Name: suite.VFSReadCase, Functions: 1}}
	}
	var fns, starts, closes, busyFns, busyCloses []float64
	for _, s := range sizes {
		key := Key{multiStart, name, s.Name}
		c := growthCell{Size: s.Name, Functions: float64(s.Functions),
			Waits:         run.config[suite.MultiCloseWaitsPrefix+name+"/"+s.Name],
			LostFunctions: run.config[suite.MultiLostFunctionsPrefix+name+"/"+s.Name]}
		if units := run.samples[key]; len(units) > 0 {
			c.Measured, c.units = true, map[string]float64{}
			for u, vs := range units {
				c.units[u] = vs[0]
			}
			if f, ok := c.units["functions"]; ok {
				c.Functions = f
			}
			fns, starts, closes = append(fns, c.Functions), append(starts, c.units["start-ns"]), append(closes, c.units["close-ns"])
			if busy, ok := c.units["close-busy-ns"]; ok {
				busyFns, busyCloses = append(busyFns, c.Functions), append(busyCloses, busy)
			}
		}
		if msg, ok := run.Skipped[key]; ok && g.Skipped == "" && !c.Measured && g.stop == nil {
			g.Skipped = msg
		}
		g.Cells = append(g.Cells, c)
	}
	g.StartFit, g.HasStartFit = fitPowerLaw(fns, starts)
	g.CloseFit, g.HasCloseFit = fitPowerLaw(fns, closes)
	g.BusyCloseFit, g.HasBusyCloseFit = fitPowerLaw(busyFns, busyCloses)
	g.tailFit, g.hasTailFit = FitTail(fns, starts)
	if len(fns) > 0 {
		g.Skipped = ""
	}
	g.mark()
	return g
}

// HasWaits reports whether a size has what its busy Close waited in.
func (g Growth) HasWaits() bool {
	return slices.ContainsFunc(g.Cells, func(c growthCell) bool { return c.Waits != "" })
}

// HasLostFunctions reports whether a cell names the functions that lost
// calls.
func (g Growth) HasLostFunctions() bool {
	return slices.ContainsFunc(g.Cells, func(c growthCell) bool { return c.LostFunctions != "" })
}

// mark sets each cell's refused, cut, killed, notAttempted and
// extrapolated from the stop: beyond a budget or a cut loop (and at a
// predicted stop's size) Start is extrapolated by the fit; a refusal or a
// kill marks its size, and the sizes beyond are not attempted.
func (g *Growth) mark() {
	if g.stop == nil {
		return
	}
	after := false
	for i := range g.Cells {
		c := &g.Cells[i]
		at := c.Size == g.stop.Size
		switch {
		case at && g.stop.Reason == suite.StopRefused:
			c.refused = true
		case at && g.stop.Reason == suite.StopLoop:
			c.cut = true
		case at && g.stop.Reason == suite.StopKilled:
			c.killed = true
		case after && (g.stop.Reason == suite.StopRefused || g.stop.Reason == suite.StopKilled):
			c.notAttempted = true
		case !c.Measured && (after || at):
			c.extrapolated = g.hasTailFit
		}
		after = after || at
	}
}

// StopRow says where a mechanism or peer stopped growing and why: the
// size, the kind of stop, the text.
func (g Growth) StopRow() [3]string {
	switch {
	case g.Skipped != "":
		return [3]string{"every size", "skipped", g.Skipped}
	case g.stop == nil && g.Single:
		return [3]string{"n/a", "traces vfs_read alone", ""}
	case g.stop == nil && g.measured() < len(g.Cells):
		return [3]string{g.firstUnmeasured(), "not measured there (see Failed or Missing)", ""}
	case g.stop == nil:
		return [3]string{"none", "every size measured", ""}
	}
	why := map[string]string{
		suite.StopRefused:        "Start failed there",
		suite.StopBudget:         "Start passed the time budget there; the larger sizes are extrapolated",
		suite.StopPredicted:      "the fit predicted a Start beyond the time budget there; extrapolated from there on",
		suite.StopCloseBudget:    "Close passed the close budget there; the larger sizes are extrapolated",
		suite.StopClosePredicted: "the fit predicted a Close beyond the close budget there; extrapolated from there on",
		suite.StopLoop:           "the read loop with it traced passed the time budget there; the larger sizes are extrapolated",
		suite.StopKilled:         "not attached within the peer's start limit, so killed: its Start there is longer; the larger sizes are not attempted",
	}[g.stop.Reason]
	return [3]string{g.stop.Size, why, g.stop.Text}
}

// Sizes are the sets of BenchmarkMultiStart: all but readpath.
func (p *multiPart) Sizes() []functionSet {
	return slices.DeleteFunc(slices.Clone(p.Sets), func(s functionSet) bool { return s.Name == suite.ReadpathCase })
}

// GrowthCells are g's Start per size, aligned with Sizes: measured,
// extrapolated, refused or not measured; a vfs_read-only mechanism's in
// the first column.
func (p *multiPart) GrowthCells(g Growth) []string {
	out := make([]string, max(len(p.Sizes()), 1))
	if g.Single {
		if len(g.Cells) > 0 && g.Cells[0].Measured {
			out[0] = fmtSeconds(g.Cells[0].units["start-ns"]) + " (vfs_read)"
		}
		return out
	}
	for i, c := range g.Cells {
		switch {
		case c.Measured:
			out[i] = fmtSeconds(c.units["start-ns"])
		case c.extrapolated:
			out[i] = "≈ " + fmtSeconds(g.predictedStart(c)) + " (extrapolated)"
		case c.refused:
			out[i] = "refused"
		case c.cut:
			out[i] = "loop cut"
		case c.killed && p.PeerLimit != "":
			out[i] = "> " + p.PeerLimit + " (killed)"
		case c.killed:
			out[i] = "killed"
		case c.notAttempted:
			out[i] = "not attempted"
		case g.Skipped != "":
			out[i] = "skipped"
		default:
			out[i] = "not measured"
		}
	}
	return out
}

// multiFuncs are the multi templates' functions.
var multiFuncs = map[string]any{
	"multiRatio": func(r float64) string {
		if math.IsNaN(r) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f×", r)
	},
	"seconds":   fmtSeconds,
	"unit":      func(c growthCell, unit string) string { return cellValue(c, unit, fmtCount) },
	"secondsOf": func(c growthCell, unit string) string { return cellValue(c, unit, fmtSeconds) },
	"millionsOf": func(c growthCell, unit string) string {
		return cellValue(c, unit, func(v float64) string { return fmtSignificant(v / 1e6) })
	},
	"bytesOf": func(c growthCell, unit string) string { return cellValue(c, unit, fmtBytes) },
}

// cellValue formats c's unit, "n/a" where it has none.
func cellValue(c growthCell, unit string, format func(float64) string) string {
	v, ok := c.units[unit]
	if !ok {
		return "n/a"
	}
	s := format(v)
	if strings.HasSuffix(unit, DeltaSuffix) && v > 0 {
		s = "+" + s
	}
	return s
}

// fmtSeconds prints ns as seconds, three significant digits.
func fmtSeconds(ns float64) string { return fmtSignificant(ns / 1e9) }

// fmtSignificant prints v with three significant digits, no exponent
// from 0.001 on.
func fmtSignificant(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtCount prints a count, a whole number where it is one.
func fmtCount(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return fmtNs(v)
}

// fmtBytes prints bytes in B, KiB or MiB.
func fmtBytes(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1<<20:
		return fmtNs(v/(1<<20)) + " MiB"
	case a >= 1<<10:
		return fmtNs(v/(1<<10)) + " KiB"
	}
	return fmtCount(v) + " B"
}

// Measured: a baseline, a readpath row or a size was measured.
func (p *multiPart) Measured() bool {
	if p.HasBase || len(p.Readpath) > 0 {
		return true
	}
	return slices.ContainsFunc(p.Growth, func(g Growth) bool { return g.HasStartFit || g.measured() > 0 })
}

// firstUnmeasured is the first size g has no measurement of.
func (g Growth) firstUnmeasured() string {
	for _, c := range g.Cells {
		if !c.Measured {
			return c.Size
		}
	}
	return ""
}

func (g Growth) measured() int {
	n := 0
	for _, c := range g.Cells {
		if c.Measured {
			n++
		}
	}
	return n
}

// expected: every readpath row in every round, with its baseline.
func (p *multiPart) expected() []Key {
	if len(p.Readpath) == 0 {
		return nil
	}
	keys := []Key{multiBase}
	for _, r := range p.Readpath {
		keys = append(keys, Key{multiRead, r.Name, suite.ReadpathCase})
	}
	return keys
}

// Charts: the log-log plot of Start against functions.
func (p *multiPart) Charts(s *Summary) []Chart {
	return []Chart{{File: growthChartFile, What: "the plot above", Draw: func(w io.Writer, format string) error {
		return p.writeGrowthChart(w, s, format)
	}}}
}

func (p *multiPart) Comparisons() []Comparison { return nil }

// Without: nothing to plot without a size measured twice.
func (p *multiPart) Without() string {
	if slices.ContainsFunc(p.Growth, func(g Growth) bool { return g.HasStartFit }) {
		return ""
	}
	return "no mechanism or peer was measured at two sizes, so there is no growth to plot"
}

// Targets of the multi family (issue 19).
const (
	targetMultiSize      = 10000
	TargetMultiDurationS = 30 * 60
)

// Targets says for each target whether the run met it.
func (p *multiPart) Targets(meta Meta) []target {
	var out []target
	add := func(what, got string, met bool) { out = append(out, target{what, got, yesNo(met)}) }
	for _, g := range p.Growth {
		if g.Single {
			continue
		}
		got, met := g.reach()
		add(fmt.Sprintf("%s: every size up to n%d, or to where the kernel refuses it or the budget stops it", g.Name, targetMultiSize), got, met)
	}
	duration := fmt.Sprintf("one run ≤ %d min, boot included", TargetMultiDurationS/60)
	if d := meta.get("duration-s"); d != "" {
		secs, err := strconv.Atoi(d)
		add(duration, fmt.Sprintf("%s s (%s)", d, time.Duration(secs)*time.Second), err == nil && secs <= TargetMultiDurationS)
	} else {
		out = append(out, target{duration, "not recorded", "n/a"})
	}
	for _, r := range p.Readpath {
		if !r.hasOverhead {
			continue
		}
		share, ok := ciShare(r.Overhead.estimate)
		got := fmt.Sprintf("no interval (n=%d)", r.Overhead.N)
		if ok {
			got = fmt.Sprintf("±%.1f%%", 100*share)
		}
		add(fmt.Sprintf("%s/readpath overhead: 95%% CI within ±%.0f%%", r.Name, 100*TargetCIShare), got, ok && share <= TargetCIShare)
	}
	return out
}

// reach says how far g got: every size up to targetMultiSize measured,
// or ended there by a stop.
func (g Growth) reach() (string, bool) {
	if g.Skipped != "" {
		return "skipped: " + g.Skipped, false
	}
	for _, c := range g.Cells {
		switch {
		case c.Measured && c.Functions >= targetMultiSize:
			return "measured to " + c.Size, true
		case c.refused:
			return "refused at " + c.Size, true
		case c.cut:
			return "read loop over the budget at " + c.Size, true
		case c.killed:
			return "killed at " + c.Size + ", not attached within the peer's start limit", true
		case c.extrapolated || !c.Measured && g.stop != nil && g.stop.Reason != suite.StopRefused:
			return "budget stop at " + g.stop.Size + ", extrapolated beyond", true
		case !c.Measured:
			return "not measured at " + c.Size + " (see Failed or Missing)", false
		}
	}
	last := "no size"
	if len(g.Cells) > 0 {
		last = g.Cells[len(g.Cells)-1].Size
	}
	return "measured to " + last + " (the run's largest size)", g.measured() == len(g.Cells) && len(g.Cells) > 0
}
