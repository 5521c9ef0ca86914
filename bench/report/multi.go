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
	MultiRead  = "MultiRead"  // the readpath set's cost per read(2), every round
	MultiStart = "MultiStart" // Start, Close and memory by set size, once per run
)

// GrowthChartFile is the multi family's log-log plot of Start against
// the number of functions.
const GrowthChartFile = "growth.svg"

// MultiPart is the multi family's share of a report: BenchmarkMultiRead,
// each mechanism's and peer's overhead per read(2) on the readpath set
// over the baseline, and BenchmarkMultiStart, its Start, Close and kernel
// memory against the number of functions traced.
type MultiPart struct {
	Baseline Estimate
	HasBase  bool
	// Readpath are BenchmarkMultiRead's rows, mechanisms first.
	Readpath []ReadpathRow
	// Growth are BenchmarkMultiStart's rows: the mechanisms tracing
	// many functions, the peers, the vfs_read-only mechanisms.
	Growth []Growth
	// Sets are the function sets, readpath first, then by size.
	Sets []FunctionSet
	// Kinds are the attach kinds the sets were built for; SetsBuilt how
	// long building them took (guest s, "" if the run did not say);
	// Budget the time budget of one Start; PeerLimit how long a peer's
	// Start may take before it is killed (both Go durations, "" if the
	// run did not say).
	Kinds, SetsBuilt, Budget, PeerLimit string
	// Preload: the peers' programs were in RAM for their Starts.
	Preload bool
	// Apart: BenchmarkMultiStart ran in processes of its own (a fresh
	// guest each), not in the first round.
	Apart bool
	// Versions are the peers' "package version".
	Versions []string
}

// FunctionSet is a set's name and size; its file is sets/<name>.txt.
type FunctionSet struct {
	Name      string
	Functions int
}

// File is the set's file, relative to the report.
func (s FunctionSet) File() string { return "sets/" + s.Name + ".txt" }

// ReadpathRow is one mechanism or peer tracing the readpath set.
type ReadpathRow struct {
	Name, Design string
	Peer         bool
	// NsPerOp is the median ns/op over the rounds, HasNsPerOp false when
	// no round measured it (every round failed or skipped it).
	NsPerOp    Estimate
	HasNsPerOp bool
	// Overhead is ns/op above BenchmarkMultiRead/baseline, paired by round.
	Overhead    Shift
	HasOverhead bool
	// Ratio is Overhead over the lowest significant overhead of the
	// rows, NaN where either is not significant.
	Ratio float64
	// Start is the median start-ns: Start on the readpath set.
	Start    Estimate
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
	Cells []GrowthCell
	// Stop is where it stops, nil if it ran every size.
	Stop *suite.Stop
	// Skipped says why every size was skipped, "" if one was measured.
	Skipped string
	// StartFit and CloseFit are the power laws of start-ns and close-ns
	// against functions over the sizes measured; TailFit is FitTail's of
	// Start, which extrapolates beyond a stop as the stop rule predicted.
	StartFit, CloseFit, TailFit          Fit
	HasStartFit, HasCloseFit, HasTailFit bool
}

// GrowthCell is one size of one mechanism or peer.
type GrowthCell struct {
	Size      string
	Functions float64
	// Units are its figures as BenchmarkMultiStart printed them (one
	// round), Measured true; without a measurement, Extrapolated says
	// Start is TailFit's prediction (beyond a budget stop).
	Units                  map[string]float64
	Measured, Extrapolated bool
	// Refused: Start failed at this size (Stop says why).
	Refused bool
	// Cut: the read loop with this size traced passed the budget, so the
	// size has no figures (Stop gives its Start and the reads done).
	Cut bool
	// Killed: the peer did not attach within the peer limit, so its
	// Start at this size is only known to exceed that limit.
	Killed bool
	// NotAttempted: past a refusal or a kill, where no fit may
	// extrapolate (a kill's lower bound lies above the fit).
	NotAttempted bool
}

// PredictedStart is the extrapolated Start at the cell's size (TailFit),
// guest ns.
func (g Growth) PredictedStart(c GrowthCell) float64 { return g.TailFit.Predict(c.Functions) }

// FitTail is the line (log-log) through the two largest sizes measured,
// x functions ascending and y their Start: what BenchmarkMultiStart
// predicts the next size's Start by, and the report extrapolates with. A
// fit of every size bends toward the small sizes' fixed cost and predicts
// too little (fentry-fexit-multi, 7.2 guest: 3.5 s at 10000 functions,
// then a Start at 44591 not ended after 20 minutes of host time).
func FitTail(x, y []float64) (Fit, bool) {
	last := max(0, len(x)-2)
	return FitPowerLaw(x[last:], y[last:])
}

var multiBase = Key{Bench: MultiRead, Mechanism: Baseline}

// summarizeMulti reads the multi family's figures and configuration lines.
func summarizeMulti(run *Run) Part {
	p := &MultiPart{Kinds: run.Config[suite.MultiKinds], SetsBuilt: run.Config[suite.MultiSetsBuilt],
		Budget: run.Config[suite.MultiBudget], PeerLimit: run.Config[suite.MultiPeerLimit],
		Apart: run.OnceProcesses > 0, Preload: run.Config[suite.MultiPeerPreload] == "true"}
	p.Baseline, p.HasBase = Median(run.Values(multiBase, "ns/op"))
	for key, v := range run.Config {
		if name, ok := strings.CutPrefix(key, suite.MultiSetPrefix); ok {
			n, _ := strconv.Atoi(v)
			p.Sets = append(p.Sets, FunctionSet{Name: name, Functions: n})
		}
		if pkg, ok := strings.CutPrefix(key, "tracebench-peer-"); ok {
			p.Versions = append(p.Versions, pkg+" "+v)
		}
	}
	// readpath first, then by size.
	notReadpath := func(s FunctionSet) int {
		if s.Name == suite.ReadpathCase {
			return 0
		}
		return 1
	}
	slices.SortFunc(p.Sets, func(a, b FunctionSet) int {
		return cmp.Or(cmp.Compare(notReadpath(a), notReadpath(b)), cmp.Compare(a.Functions, b.Functions), cmp.Compare(a.Name, b.Name))
	})
	slices.Sort(p.Versions)
	peersOf := setOf(slices.Values(strings.Fields(run.Config[suite.MultiPeers])))
	single := setOf(slices.Values(strings.Fields(run.Config[suite.MultiSingle])))
	for _, name := range multiNames(run, MultiRead) {
		p.Readpath = append(p.Readpath, readpathRow(run, name, peersOf[name]))
	}
	p.ratios()
	for _, name := range multiNames(run, MultiStart) {
		p.Growth = append(p.Growth, p.growth(run, name, peersOf[name], single[name]))
	}
	return p
}

// multiNames are the names bench's sub-benchmarks have: those the run
// lists (mechanisms, peers, vfs_read-only mechanisms, in that order),
// then any other by name.
func multiNames(run *Run, bench string) []string {
	seen := map[string]bool{}
	for _, keys := range [][]Key{slices.Collect(maps.Keys(run.Samples)), slices.Collect(maps.Keys(run.Skipped)),
		slices.Collect(maps.Keys(run.Failed))} {
		for _, k := range keys {
			if k.Bench == bench && k.Mechanism != Baseline && k.Case != "" {
				seen[k.Mechanism] = true
			}
		}
	}
	var listed []string
	for _, key := range []string{suite.MultiMechanisms, suite.MultiPeers, suite.MultiSingle} {
		listed = append(listed, strings.Fields(run.Config[key])...)
	}
	return ordered(seen, listed)
}

func readpathRow(run *Run, name string, peer bool) ReadpathRow {
	key := Key{MultiRead, name, suite.ReadpathCase}
	r := ReadpathRow{Name: name, Design: run.Config[suite.MultiDesignPrefix+name], Peer: peer, Ratio: math.NaN()}
	r.NsPerOp, r.HasNsPerOp = Median(run.Values(key, "ns/op"))
	r.Overhead, r.HasOverhead = ComparePaired(run.Paired(key, multiBase, "ns/op"))
	r.Start, r.HasStart = Median(run.Values(key, "start-ns"))
	return r
}

// ratios divides each significant overhead by the lowest one.
func (p *MultiPart) ratios() {
	lowest := math.Inf(1)
	for _, r := range p.Readpath {
		if r.HasOverhead && r.Overhead.Significant() && r.Overhead.Center > 0 {
			lowest = min(lowest, r.Overhead.Center)
		}
	}
	for i, r := range p.Readpath {
		if r.HasOverhead && r.Overhead.Significant() && r.Overhead.Center > 0 {
			p.Readpath[i].Ratio = r.Overhead.Center / lowest
		}
	}
}

// growth reads name's sizes: the measured ones, where it stops, the fits
// and what they extrapolate beyond a budget.
func (p *MultiPart) growth(run *Run, name string, peer, single bool) Growth {
	g := Growth{Name: name, Design: run.Config[suite.MultiDesignPrefix+name], Peer: peer, Single: single}
	if v, ok := run.Config[suite.MultiStopPrefix+name]; ok {
		if stop, err := suite.ParseStop(v); err == nil {
			g.Stop = &stop
		} else {
			g.Stop = &suite.Stop{Reason: suite.StopRefused, Text: err.Error()}
		}
	}
	sizes := slices.DeleteFunc(slices.Clone(p.Sets), func(s FunctionSet) bool { return s.Name == suite.ReadpathCase })
	if single {
		sizes = []FunctionSet{{Name: suite.VFSReadCase, Functions: 1}}
	}
	var fns, starts, closes []float64
	for _, s := range sizes {
		key := Key{MultiStart, name, s.Name}
		c := GrowthCell{Size: s.Name, Functions: float64(s.Functions)}
		if units := run.Samples[key]; len(units) > 0 {
			c.Measured, c.Units = true, map[string]float64{}
			for u, vs := range units {
				c.Units[u] = vs[0]
			}
			if f, ok := c.Units["functions"]; ok {
				c.Functions = f
			}
			fns, starts, closes = append(fns, c.Functions), append(starts, c.Units["start-ns"]), append(closes, c.Units["close-ns"])
		}
		if msg, ok := run.Skipped[key]; ok && g.Skipped == "" && !c.Measured && g.Stop == nil {
			g.Skipped = msg
		}
		g.Cells = append(g.Cells, c)
	}
	g.StartFit, g.HasStartFit = FitPowerLaw(fns, starts)
	g.CloseFit, g.HasCloseFit = FitPowerLaw(fns, closes)
	g.TailFit, g.HasTailFit = FitTail(fns, starts)
	if len(fns) > 0 {
		g.Skipped = ""
	}
	g.mark()
	return g
}

// mark sets each cell's Refused, Cut, Killed, NotAttempted and
// Extrapolated from the stop: beyond a budget or a cut loop (and at a
// predicted stop's size) Start is extrapolated by the fit; a refusal or a
// kill marks its size, and the sizes beyond are not attempted.
func (g *Growth) mark() {
	if g.Stop == nil {
		return
	}
	after := false
	for i := range g.Cells {
		c := &g.Cells[i]
		at := c.Size == g.Stop.Size
		switch {
		case at && g.Stop.Reason == suite.StopRefused:
			c.Refused = true
		case at && g.Stop.Reason == suite.StopLoop:
			c.Cut = true
		case at && g.Stop.Reason == suite.StopKilled:
			c.Killed = true
		case after && (g.Stop.Reason == suite.StopRefused || g.Stop.Reason == suite.StopKilled):
			c.NotAttempted = true
		case !c.Measured && (after || at):
			c.Extrapolated = g.HasTailFit
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
	case g.Stop == nil && g.Single:
		return [3]string{"n/a", "traces vfs_read alone", ""}
	case g.Stop == nil && g.measured() < len(g.Cells):
		return [3]string{g.firstUnmeasured(), "not measured there (see Failed or Missing)", ""}
	case g.Stop == nil:
		return [3]string{"none", "every size measured", ""}
	}
	why := map[string]string{
		suite.StopRefused:   "Start failed there",
		suite.StopBudget:    "Start passed the time budget there; the larger sizes are extrapolated",
		suite.StopPredicted: "the fit predicted a Start beyond the time budget there; extrapolated from there on",
		suite.StopLoop:      "the read loop with it traced passed the time budget there; the larger sizes are extrapolated",
		suite.StopKilled:    "not attached within the peer's start limit, so killed: its Start there is longer; the larger sizes are not attempted",
	}[g.Stop.Reason]
	return [3]string{g.Stop.Size, why, g.Stop.Text}
}

// Sizes are the sets of BenchmarkMultiStart: all but readpath.
func (p *MultiPart) Sizes() []FunctionSet {
	return slices.DeleteFunc(slices.Clone(p.Sets), func(s FunctionSet) bool { return s.Name == suite.ReadpathCase })
}

// GrowthCells are g's Start per size, aligned with Sizes: measured,
// extrapolated, refused or not measured; a vfs_read-only mechanism's in
// the first column.
func (p *MultiPart) GrowthCells(g Growth) []string {
	out := make([]string, max(len(p.Sizes()), 1))
	if g.Single {
		if len(g.Cells) > 0 && g.Cells[0].Measured {
			out[0] = fmtSeconds(g.Cells[0].Units["start-ns"]) + " (vfs_read)"
		}
		return out
	}
	for i, c := range g.Cells {
		switch {
		case c.Measured:
			out[i] = fmtSeconds(c.Units["start-ns"])
		case c.Extrapolated:
			out[i] = "≈ " + fmtSeconds(g.PredictedStart(c)) + " (extrapolated)"
		case c.Refused:
			out[i] = "refused"
		case c.Cut:
			out[i] = "loop cut"
		case c.Killed && p.PeerLimit != "":
			out[i] = "> " + p.PeerLimit + " (killed)"
		case c.Killed:
			out[i] = "killed"
		case c.NotAttempted:
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
	"unit":      func(c GrowthCell, unit string) string { return cellValue(c, unit, fmtCount) },
	"secondsOf": func(c GrowthCell, unit string) string { return cellValue(c, unit, fmtSeconds) },
	"millionsOf": func(c GrowthCell, unit string) string {
		return cellValue(c, unit, func(v float64) string { return fmtSignificant(v / 1e6) })
	},
	"bytesOf": func(c GrowthCell, unit string) string { return cellValue(c, unit, fmtBytes) },
}

// cellValue formats c's unit, "n/a" where it has none.
func cellValue(c GrowthCell, unit string, format func(float64) string) string {
	v, ok := c.Units[unit]
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
func (p *MultiPart) Measured() bool {
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

// Expected: every readpath row in every round, with its baseline.
func (p *MultiPart) Expected() []Key {
	if len(p.Readpath) == 0 {
		return nil
	}
	keys := []Key{multiBase}
	for _, r := range p.Readpath {
		keys = append(keys, Key{MultiRead, r.Name, suite.ReadpathCase})
	}
	return keys
}

// Charts: the log-log plot of Start against functions.
func (p *MultiPart) Charts(s *Summary) []Chart {
	return []Chart{{File: GrowthChartFile, What: "the plot above", Draw: func(w io.Writer, format string) error {
		return p.writeGrowthChart(w, s, format)
	}}}
}

func (p *MultiPart) Comparisons() []Comparison { return nil }

// Without: nothing to plot without a size measured twice.
func (p *MultiPart) Without() string {
	if slices.ContainsFunc(p.Growth, func(g Growth) bool { return g.HasStartFit }) {
		return ""
	}
	return "no mechanism or peer was measured at two sizes, so there is no growth to plot"
}

// Targets of the multi family (issue 19).
const (
	TargetMultiSize      = 10000
	TargetMultiDurationS = 30 * 60
)

// Targets says for each target whether the run met it.
func (p *MultiPart) Targets(meta Meta) []Target {
	var out []Target
	add := func(what, got string, met bool) { out = append(out, Target{what, got, yesNo(met)}) }
	for _, g := range p.Growth {
		if g.Single {
			continue
		}
		got, met := g.reach()
		add(fmt.Sprintf("%s: every size up to n%d, or to where the kernel refuses it or the budget stops it", g.Name, TargetMultiSize), got, met)
	}
	duration := fmt.Sprintf("one run ≤ %d min, boot included", TargetMultiDurationS/60)
	if d := meta.Get("duration-s"); d != "" {
		secs, err := strconv.Atoi(d)
		add(duration, fmt.Sprintf("%s s (%s)", d, time.Duration(secs)*time.Second), err == nil && secs <= TargetMultiDurationS)
	} else {
		out = append(out, Target{duration, "not recorded", "n/a"})
	}
	for _, r := range p.Readpath {
		if !r.HasOverhead {
			continue
		}
		share, ok := ciShare(r.Overhead.Estimate)
		got := fmt.Sprintf("no interval (n=%d)", r.Overhead.N)
		if ok {
			got = fmt.Sprintf("±%.1f%%", 100*share)
		}
		add(fmt.Sprintf("%s/readpath overhead: 95%% CI within ±%.0f%%", r.Name, 100*TargetCIShare), got, ok && share <= TargetCIShare)
	}
	return out
}

// reach says how far g got: every size up to TargetMultiSize measured,
// or ended there by a stop.
func (g Growth) reach() (string, bool) {
	if g.Skipped != "" {
		return "skipped: " + g.Skipped, false
	}
	for _, c := range g.Cells {
		switch {
		case c.Measured && c.Functions >= TargetMultiSize:
			return "measured to " + c.Size, true
		case c.Refused:
			return "refused at " + c.Size, true
		case c.Cut:
			return "read loop over the budget at " + c.Size, true
		case c.Killed:
			return "killed at " + c.Size + ", not attached within the peer's start limit", true
		case c.Extrapolated || !c.Measured && g.Stop != nil && g.Stop.Reason != suite.StopRefused:
			return "budget stop at " + g.Stop.Size + ", extrapolated beyond", true
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
