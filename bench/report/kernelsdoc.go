package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"tracebench/bench/suite"
)

// Files the perf matrix writes in its runs' directory.
const (
	PerfMatrixJSON      = "perf-matrix.json"
	floorsChartFile     = "floors.svg"
	mechanismsChartFile = "mechanisms.svg"
	chartCase           = "below-threshold"
)

// kernelFuncs are the perf matrix template's functions.
var kernelFuncs = template.FuncMap{
	"meta":          func(m Meta, key string) string { return orUnknown(m.get(key)) },
	"changeShare":   func() float64 { return changeShare },
	"targetCIShare": func() float64 { return TargetCIShare },
	"percent":       func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
	"signed":        func(v float64) string { return fmt.Sprintf("%+.0f", v) },
	"signedPercent": func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) },
}

// perfPage is what the template is given: the matrix, with paths relative
// to the Markdown file's directory.
type perfPage struct {
	*PerfMatrix
	Dir string // the runs' directory
	md  string // the Markdown file's directory
}

func (p perfPage) Rel(c *Column) string {
	rel, err := filepath.Rel(p.md, c.Dir)
	if err != nil {
		return c.Dir
	}
	return filepath.ToSlash(rel)
}

func (perfPage) FloorsChart() string     { return floorsChartFile }
func (perfPage) MechanismsChart() string { return mechanismsChartFile }

// StartChart is start.svg's file name, "" where Charts draws none.
func (p perfPage) StartChart() string {
	if len(p.startColumns()) == 0 {
		return ""
	}
	return startChartFile
}

// WriteMarkdown writes the perf matrix to w for a file in directory md;
// runs is the directory of the runs (where Charts go).
func (pm *PerfMatrix) WriteMarkdown(w io.Writer, md, runs string) error {
	p := perfPage{PerfMatrix: pm, md: md}
	if rel, err := filepath.Rel(md, runs); err == nil {
		p.Dir = filepath.ToSlash(rel)
	}
	s, err := execute("kernels", p)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.TrimRight(s, "\n")+"\n")
	return err
}

// Headline is the short table other documents show (the top README):
// per kernel, the single-function mechanisms' overhead in chartCase and
// the cheapest of them.
func (pm *PerfMatrix) Headline() (string, error) {
	s, err := execute("kernels.headline", pm)
	return strings.TrimRight(s, "\n"), err
}

// HeadlineMechanisms are the mechanisms Headline shows: those that trace
// one function with one program design each (no -multi or -each variant).
func (pm *PerfMatrix) HeadlineMechanisms() []string {
	return slices.DeleteFunc(slices.Clone(pm.Mechanisms), func(m string) bool {
		return strings.HasSuffix(m, "-multi") || strings.HasSuffix(m, "-each")
	})
}

// Cheapest is the mechanism of HeadlineMechanisms with the least overhead
// in case k on column c, with it; "–" if none was measured.
func (pm *PerfMatrix) Cheapest(c *Column, k string) string {
	best, bestOverhead := "", shift{}
	for _, m := range pm.HeadlineMechanisms() {
		if o, ok := c.Overhead(Series{m, k}); ok && (best == "" || o.Center < bestOverhead.Center) {
			best, bestOverhead = m, o
		}
	}
	if best == "" {
		return "–"
	}
	return best + " (" + fmtNs(bestOverhead.Center) + ")"
}

// Cell is s's overhead on column c, "–" without one.
func (pm *PerfMatrix) Cell(c *Column, m, k string) string {
	if o, ok := c.Overhead(Series{m, k}); ok {
		return fmtShift(o)
	}
	return "–"
}

// ChartCase is the case Headline and the mechanisms chart show.
func (*PerfMatrix) ChartCase() string { return chartCase }

// Imprecise lists the figures whose 95% interval reaches further than
// TargetCIShare from their estimate, each "<series> on <kernel> (±x%)".
func (pm *PerfMatrix) Imprecise() []string {
	var list []string
	pm.eachFigure(func(c *Column, s Series, o shift) {
		switch share, ok := ciShare(o.estimate); {
		case !ok:
			list = append(list, fmt.Sprintf("%s on %s (no interval: n=%d)", s, c.Name(), o.N))
		case share > TargetCIShare:
			list = append(list, fmt.Sprintf("%s on %s (±%.1f%%)", s, c.Name(), 100*share))
		}
	})
	return list
}

// Figures counts the overheads measured, every kernel's.
func (pm *PerfMatrix) Figures() int {
	n := 0
	pm.eachFigure(func(*Column, Series, shift) { n++ })
	return n
}

func (pm *PerfMatrix) eachFigure(f func(*Column, Series, shift)) {
	for _, c := range pm.Columns {
		for _, s := range pm.series() {
			if o, ok := c.Overhead(s); ok {
				f(c, s, o)
			}
		}
	}
}

// Part is the column's overhead figures.
func (c *Column) Part() *overheadPart { return c.part }

// kernelTable is one table of the matrix: a row per mechanism (or floor),
// a column per kernel.
type kernelTable struct {
	What    string
	Columns []*Column
	Rows    []kernelRow
	// Why lists the figures no kernel gave, with the run's reason.
	Why []string
}

type kernelRow struct {
	Name  string
	Cells []string
}

// Table is the table of case c ("floor": the floors).
func (pm *PerfMatrix) Table(c string) kernelTable {
	what, names := "mechanism", pm.Mechanisms
	if c == suite.FloorCase {
		what, names = "attach kinds", pm.Floors
	}
	return newKernelTable(what, names, pm.Columns, func(col *Column, name string) (string, string) {
		s := Series{name, c}
		if o, ok := col.Overhead(s); ok {
			return fmtShift(o), ""
		}
		return "–", col.Why(s)
	})
}

// newKernelTable is a row per name, a column per kernel of cols: cell
// gives each cell's text, and why it has no figure ("" where it has).
func newKernelTable(what string, names []string, cols []*Column, cell func(*Column, string) (text, why string)) kernelTable {
	t := kernelTable{What: what, Columns: cols}
	type gap struct{ name, why string }
	var gaps []gap
	missing := map[gap][]string{}
	for _, name := range names {
		row := kernelRow{Name: name}
		for _, col := range cols {
			text, why := cell(col, name)
			row.Cells = append(row.Cells, text)
			if why == "" {
				continue
			}
			g := gap{name, why}
			if missing[g] == nil {
				gaps = append(gaps, g)
			}
			missing[g] = append(missing[g], col.Name())
		}
		t.Rows = append(t.Rows, row)
	}
	for _, g := range gaps {
		t.Why = append(t.Why, fmt.Sprintf("%s on %s: %s", g.name, strings.Join(missing[g], ", "), g.why))
	}
	return t
}

// ratioPair is a ratio the matrix shows per kernel: the floor of a
// one-program session design over that of the two-program design it
// replaces (sessionPairs).
type ratioPair struct{ Num, Den string }

// Ratios are the ratios shown.
func (pm *PerfMatrix) Ratios() []ratioPair { return sessionPairs }

// Ratio is r.Num's floor overhead over r.Den's in column c, "–" where
// either is missing or not significantly above zero.
func (pm *PerfMatrix) Ratio(c *Column, r ratioPair) string {
	num, okN := c.Overhead(Series{r.Num, suite.FloorCase})
	den, okD := c.Overhead(Series{r.Den, suite.FloorCase})
	if v, _ := ratio(Row{Overhead: num, hasOverhead: okN}, den, okD); !math.IsNaN(v) {
		return fmt.Sprintf("%.2f×", v)
	}
	return "–"
}

// VsReference is mechanism m's overhead over the reference's in case k
// on column c (Row.Ratio), "–" without one.
func (pm *PerfMatrix) VsReference(c *Column, m, k string) string {
	r := c.part.RowOf(m, k)
	if r == nil || math.IsNaN(r.Ratio) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", r.Ratio)
}

// Reference is the mechanism VsReference divides by.
func (*PerfMatrix) Reference() string { return reference }

// chartColumns are the generic kernels, in release order: a line per
// mechanism over them.
func (pm *PerfMatrix) chartColumns() []*Column {
	return slices.DeleteFunc(slices.Clone(pm.Columns), func(c *Column) bool { return c.flavour != "" })
}

// Charts are the matrix's plots, written into the runs' directory: cost
// against kernel release, a line per floor, and one per mechanism in
// chartCase.
func (pm *PerfMatrix) Charts() []Chart {
	charts := []Chart{
		{File: floorsChartFile, What: "floors per kernel", Draw: func(w io.Writer, format string) error {
			return pm.writeLines(w, format, "Empty programs per attach kind on vfs_read", pm.Floors, suite.FloorCase)
		}},
		{File: mechanismsChartFile, What: "mechanisms per kernel (" + chartCase + ")", Draw: func(w io.Writer, format string) error {
			return pm.writeLines(w, format, "Mechanisms, case "+chartCase, pm.Mechanisms, chartCase)
		}},
	}
	if len(pm.startColumns()) > 0 {
		charts = append(charts, Chart{File: startChartFile, What: "Start on the largest set per kernel", Draw: pm.startChart})
	}
	return charts
}

// writeLines draws each of names in case k against the generic kernels.
func (pm *PerfMatrix) writeLines(w io.Writer, format, title string, names []string, k string) error {
	return pm.drawLines(w, format, pm.chartColumns(), lines{
		title: title + ": overhead over baseline per kernel\nQEMU TCG guest, icount clock (guest instructions)",
		y:     "overhead, guest instructions per read(2) (estimate; intervals in the tables)", names: names,
		value: func(c *Column, name string) (float64, bool) {
			o, ok := c.Overhead(Series{name, k})
			return o.Center, ok
		},
	})
}

// lines is one chart of the perf matrix: a line per name over the columns.
type lines struct {
	title, y string
	names    []string
	value    func(c *Column, name string) (float64, bool)
}

func (pm *PerfMatrix) drawLines(w io.Writer, format string, cols []*Column, l lines) error {
	p := plot.New()
	p.Title.Text = l.title
	p.Y.Label.Text = l.y
	p.X.Label.Text = "kernel release"
	var ticks plot.ConstantTicks
	for i, c := range cols {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: c.Version()})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.5, float64(len(cols))-0.5
	p.Add(plotter.NewGrid())
	for i, name := range l.names {
		var xy plotter.XYs
		for j, c := range cols {
			if v, ok := l.value(c, name); ok {
				xy = append(xy, plotter.XY{X: float64(j), Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		line.Color, points.Color, points.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
		line.Dashes = plotutil.Dashes(i / 7)
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	// The lines in the lower part, the legend above them.
	p.Y.Min, p.Y.Max = 0, 1.7*p.Y.Max
	p.Legend.Top, p.Legend.Left = true, true
	return writePlot(w, p, format)
}
