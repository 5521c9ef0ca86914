package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tracebench/bench/suite"
)

// growthFamily is the family a perf-matrix column's growth run is of.
var growthFamily = mustFamily("growth")

func mustFamily(name string) *Family {
	f, err := LookupFamily(name)
	if err != nil {
		panic(err)
	}
	return f
}

// startChartFile is the perf matrix's plot of Start at the largest size.
const startChartFile = "start.svg"

// GrowthMeasure is a figure of BenchmarkMultiStart the perf matrix
// follows across kernels: one sample per kernel and size (guest ns).
type GrowthMeasure struct{ Name, unit string }

// growthMeasures are Start and Close, idle and with the CPUs busy.
var growthMeasures = []GrowthMeasure{
	{"Start", "start-ns"}, {"Close", "close-ns"}, {"Start, CPUs busy", "start-busy-ns"}, {"Close, CPUs busy", "close-busy-ns"},
}

// loadGrowth reads the growth run in c.Dir/growth/ into c, if there is
// one: a run of the growth family under icount on c's kernel and CPUs,
// else an error naming the directory.
func loadGrowth(c *Column) error {
	dir := filepath.Join(c.Dir, growthFamily.Dir)
	if _, err := os.Stat(filepath.Join(dir, RawFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l, err := Load(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	p, ok := l.Summary.Part(growthFamily).(*multiPart)
	switch f := l.Summary.RunFamily(l.Meta); {
	case f != growthFamily || !ok:
		return fmt.Errorf("%s: a run of the %s family, not of %s", dir, f.Name, growthFamily.Name)
	case !l.Summary.Icount():
		return fmt.Errorf("%s: its clock is %q, not icount: kernels compare only by instructions", dir, l.Summary.clock)
	case l.Summary.Kernel != c.Kernel:
		return fmt.Errorf("%s: a run on %s, not on %s as %s", dir, l.Summary.Kernel, c.Kernel, c.Dir)
	}
	if err := sameCPUs(dir, l.Summary, c.Dir, c.Summary); err != nil {
		return err
	}
	c.growth, c.GrowthMeta, c.GrowthSummary = p, l.Meta, l.Summary
	return nil
}

// GrowthColumns are the columns with a growth run.
func (pm *PerfMatrix) GrowthColumns() []*Column {
	return slices.DeleteFunc(slices.Clone(pm.Columns), func(c *Column) bool { return c.growth == nil })
}

// GrowthMechanisms are the mechanisms tracing many functions that a
// growth run measured (its read path or its sizes), in the first run's
// order.
func (pm *PerfMatrix) GrowthMechanisms() []string {
	var out []string
	add := func(name string, skip bool) {
		if !skip && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, c := range pm.GrowthColumns() {
		for _, r := range c.growth.Readpath {
			add(r.Name, r.Peer)
		}
		for _, g := range c.growth.Growth {
			add(g.Name, g.Peer || g.Single)
		}
	}
	return out
}

// GrowthSize is the largest set every growth run measured, by name: the
// one the matrix shows ("" where the runs share none).
func (pm *PerfMatrix) GrowthSize() string {
	var common []string
	for i, c := range pm.GrowthColumns() {
		var names []string
		for _, s := range c.growth.Sizes() {
			names = append(names, s.Name)
		}
		if i == 0 {
			common = names
		}
		common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(names, n) })
	}
	if len(common) == 0 {
		return ""
	}
	return common[len(common)-1]
}

// Measures are the figures the matrix shows of the growth runs.
func (*PerfMatrix) Measures() []GrowthMeasure { return growthMeasures }

// growthOf is mechanism m's growth in column c, nil without one.
func (c *Column) growthOf(m string) *Growth {
	if c.growth == nil {
		return nil
	}
	i := slices.IndexFunc(c.growth.Growth, func(g Growth) bool { return g.Name == m && !g.Peer && !g.Single })
	if i < 0 {
		return nil
	}
	return &c.growth.Growth[i]
}

// GrowthValue is measure u of mechanism m at size on column c, guest ns;
// ok is false where c did not measure it there.
func (c *Column) GrowthValue(m, size string, u GrowthMeasure) (float64, bool) {
	g := c.growthOf(m)
	if g == nil {
		return 0, false
	}
	for _, cell := range g.Cells {
		if cell.Size == size && cell.Measured {
			v, ok := cell.units[u.unit]
			return v, ok
		}
	}
	return 0, false
}

// GrowthTable is measure u of every mechanism on the largest set per
// kernel with a growth run, guest s; where a mechanism has none, why: it
// stopped before (its report says why), or the run's reason.
func (pm *PerfMatrix) GrowthTable(u GrowthMeasure) kernelTable {
	size := pm.GrowthSize()
	return newKernelTable("mechanism", pm.GrowthMechanisms(), pm.GrowthColumns(), func(c *Column, m string) (string, string) {
		if v, ok := c.GrowthValue(m, size, u); ok {
			return fmtSeconds(v), ""
		}
		if g := c.growthOf(m); g != nil && g.stop != nil {
			return "stops at " + g.stop.Size, ""
		}
		return "–", whyNot(c.GrowthSummary, m)
	})
}

// readpath is m's overhead per read(2) on the readpath set in c's growth
// run; ok is false without one.
func (c *Column) readpath(m string) (shift, bool) {
	if c.growth != nil {
		for _, r := range c.growth.Readpath {
			if r.Name == m && !r.Peer && r.hasOverhead {
				return r.Overhead, true
			}
		}
	}
	return shift{}, false
}

// ReadpathTable is every mechanism's overhead per read(2) on the readpath
// set per kernel with a growth run, guest instructions [95% CI].
func (pm *PerfMatrix) ReadpathTable() kernelTable {
	return newKernelTable("mechanism", pm.GrowthMechanisms(), pm.GrowthColumns(), func(c *Column, m string) (string, string) {
		s := Series{m, suite.ReadpathCase}
		if o, ok := c.Overhead(s); ok {
			return fmtShift(o), ""
		}
		return "–", c.Why(s)
	})
}

// ReadpathFunctions is the readpath set's size in c, 0 without one.
func (c *Column) ReadpathFunctions() int {
	if c.growth != nil {
		for _, s := range c.growth.Sets {
			if s.Name == suite.ReadpathCase {
				return s.Functions
			}
		}
	}
	return 0
}

// kinds are the attach kinds mechanism m uses on column c, as its runs
// name its floor (the overhead run's, else the growth run's).
func (c *Column) kinds(m string) []string {
	for _, s := range []*Summary{c.Summary, c.GrowthSummary} {
		if s != nil && s.floors[m] != "" {
			return suite.FloorKinds(s.floors[m])
		}
	}
	return nil
}

// AttachStep is a growth measure of one mechanism at one size in the two
// kernels that bracket a change of attaching: one sample each, no
// interval.
type AttachStep struct {
	Mechanism, Size string
	Measure         GrowthMeasure
	Before, After   float64 // guest ns
}

// Share is After relative to Before.
func (s AttachStep) Share() float64 { return s.After/s.Before - 1 }

// attachSteps are the measures of the mechanisms attaching with one of
// k's kinds at the largest size both from and to measured.
func (pm *PerfMatrix) attachSteps(k kernelChange, from, to *Column) []AttachStep {
	var out []AttachStep
	for _, m := range pm.GrowthMechanisms() {
		if !k.actsOnKinds(from.kinds(m)) {
			continue
		}
		for _, u := range growthMeasures[:2] {
			var step *AttachStep
			for _, s := range from.growth.Sizes() {
				before, okA := from.GrowthValue(m, s.Name, u)
				after, okB := to.GrowthValue(m, s.Name, u)
				if okA && okB && before > 0 {
					step = &AttachStep{Mechanism: m, Size: s.Name, Measure: u, Before: before, After: after}
				}
			}
			if step != nil {
				out = append(out, *step)
			}
		}
	}
	return out
}

// AttachAgreement compares a step's direction with that of the authors'
// attach time, where they measured one before and after; a step within
// changeShare is no change (one sample each side, no interval).
func (a AnchorAnswer) AttachAgreement(s AttachStep) string {
	switch {
	case a.AttachBefore == 0:
		return "their figure has no before"
	case s.Measure.Name != "Start":
		return "they measured attach"
	case math.Abs(s.Share()) <= changeShare:
		return fmt.Sprintf("not resolved: within %.0f%%", 100*changeShare)
	case (s.Share() < 0) == (a.AttachAfter < a.AttachBefore):
		return "same direction"
	}
	return "opposite direction"
}

// AttachShare is the change of the authors' attach time, relative.
func (k kernelChange) AttachShare() float64 { return k.AttachAfter/k.AttachBefore - 1 }

// growthJSON is a growth run's figures for the JSON file.
type growthJSON struct {
	Dir, Commit, DateStart string
	Rounds                 int
	// Baseline is the run's read(2) with nothing attached, guest
	// instructions (0 where it has none): the read path's reference.
	Baseline float64
	// Sizes: per mechanism and size, each measure in guest ns (the
	// readpath overheads are among the column's figures).
	Sizes []growthFigure
}

type growthFigure struct {
	Mechanism, Size, Measure string
	GuestNs                  float64
}

func (c *Column) growthJSON() *growthJSON {
	if c.growth == nil {
		return nil
	}
	out := &growthJSON{Dir: filepath.Base(c.Dir) + "/" + growthFamily.Dir, Commit: c.GrowthMeta.get("commit"),
		DateStart: c.GrowthMeta.get("date-start"), Rounds: c.GrowthSummary.Rounds, Baseline: c.growth.Baseline.Center}
	for _, g := range c.growth.Growth {
		for _, cell := range g.Cells {
			for _, u := range growthMeasures {
				if v, ok := cell.units[u.unit]; ok && cell.Measured && !g.Single {
					out.Sizes = append(out.Sizes, growthFigure{Mechanism: g.Name, Size: cell.Size, Measure: u.Name, GuestNs: v})
				}
			}
		}
	}
	return out
}

// startColumns are the generic kernels with a growth run: start.svg's.
func (pm *PerfMatrix) startColumns() []*Column {
	return slices.DeleteFunc(pm.chartColumns(), func(c *Column) bool { return c.growth == nil })
}

// startChart draws Start at the largest size against startColumns, a
// line per mechanism.
func (pm *PerfMatrix) startChart(w io.Writer, format string) error {
	size := pm.GrowthSize()
	return pm.drawLines(w, format, pm.startColumns(), lines{
		title: fmt.Sprintf("Start (load, verify, attach) on %s functions per kernel\nQEMU TCG guest, icount clock (guest time = instructions)", size),
		y:     "Start, guest s (one sample per kernel)", names: pm.GrowthMechanisms(),
		value: func(c *Column, m string) (float64, bool) {
			v, ok := c.GrowthValue(m, size, growthMeasures[0])
			return v / 1e9, ok && !math.IsNaN(v)
		},
	})
}

// GrowthRun is the column's growth run for the runs table: its commit,
// duration and exit status, "none" without one.
func (c *Column) GrowthRun() string {
	if c.growth == nil {
		return "none"
	}
	return strings.Join([]string{orUnknown(c.GrowthMeta.get("commit")), orUnknown(c.GrowthMeta.get("duration-s")) + " s",
		"exit " + orUnknown(c.GrowthMeta.get("exit-status"))}, ", ")
}
