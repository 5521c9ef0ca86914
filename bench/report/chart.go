package report

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart size and the share of a case's slot the bars fill.
const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5.5 * vg.Inch
	groupWidth  = 0.8
)

// writeChart draws the overhead of every mechanism in every case as
// grouped bars with their 95% intervals, in the given format ("svg" or
// "png"), from the same Summary as the Markdown table.
func (o *overheadPart) writeChart(w io.Writer, s *Summary, format string) error {
	var mechs []string
	if o != nil {
		mechs = chartMechanisms(o.Rows)
	}
	if len(mechs) == 0 {
		return errors.New("chart: no mechanism has an overhead to draw")
	}
	p := plot.New()
	p.Title.Text = "vfs_read: cost per read(2) over baseline\n" + s.Label()
	p.Y.Label.Text = fmt.Sprintf("overhead, %s per read(2) (paired Hodges-Lehmann, 95%% CI)", s.Unit())
	if s.Icount() {
		p.X.Label.Text = "guest instructions (QEMU icount): compare bars with each other, not with bare-metal time"
	} else if s.guest() {
		p.X.Label.Text = "guest figures: compare bars with each other, not with bare-metal nanoseconds"
	}
	p.X.Min, p.X.Max = -0.5, float64(len(o.cases))-0.5
	p.X.Tick.Marker = caseTicks(o.cases)
	p.Add(plotter.NewGrid())
	zero, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 0}, {X: p.X.Max, Y: 0}})
	if err != nil {
		return err
	}
	p.Add(zero)
	barWidth := groupWidth / float64(len(mechs))
	for j, m := range mechs {
		if err := addMechanism(p, o, m, j, len(mechs), barWidth); err != nil {
			return fmt.Errorf("chart: %s: %w", m, err)
		}
	}
	// Headroom above the tallest bar for the legend.
	p.Y.Max += 0.2 * (p.Y.Max - p.Y.Min)
	p.Y.Tick.Marker = nsTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	return writePlot(w, p, format)
}

// writePlot draws p in the reports' chart size in format ("svg", "png").
func writePlot(w io.Writer, p *plot.Plot, format string) error {
	wt, err := p.WriterTo(chartWidth, chartHeight, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// addMechanism draws mechanism m (the j-th of n) in every case: one bar,
// its interval and its value.
func addMechanism(p *plot.Plot, o *overheadPart, m string, j, n int, barWidth float64) error {
	color := plotutil.Color(j)
	var bars bars
	var thumb *plotter.Polygon
	for i, c := range o.cases {
		r, ok := findRow(o.Rows, m, c)
		if !ok || !r.hasOverhead {
			continue
		}
		x := float64(i) + (float64(j)-float64(n-1)/2)*barWidth
		poly, err := plotter.NewPolygon(rectangle(x, 0.9*barWidth, r.Overhead.Center))
		if err != nil {
			return err
		}
		poly.Color = color
		poly.LineStyle.Width = 0
		p.Add(poly)
		thumb = poly
		bars = append(bars, bar{x: x, shift: r.Overhead})
	}
	if thumb == nil {
		return nil
	}
	p.Legend.Add(m, thumb)
	withCI := bars.withCI()
	if len(withCI) > 0 {
		errs, err := plotter.NewYErrorBars(withCI)
		if err != nil {
			return err
		}
		errs.LineStyle.Width = vg.Points(1)
		p.Add(errs)
	}
	labels, err := plotter.NewLabels(valueLabels(bars))
	if err != nil {
		return err
	}
	labels.Offset = vg.Point{Y: vg.Points(3)}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = draw.XCenter
		labels.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(labels)
	return nil
}

func rectangle(x, width, height float64) plotter.XYs {
	l, r := x-width/2, x+width/2
	return plotter.XYs{{X: l, Y: 0}, {X: r, Y: 0}, {X: r, Y: height}, {X: l, Y: height}}
}

// bar is one drawn overhead; bars serve the error bars (XYer, YErrorer)
// and the value labels (XYLabeller), placed above the interval.
type bar struct {
	x     float64
	shift shift
}

type bars []bar

func (b bars) Len() int                    { return len(b) }
func (b bars) XY(i int) (float64, float64) { return b[i].x, b[i].shift.Center }
func (b bars) YError(i int) (float64, float64) {
	return b[i].shift.Center - b[i].shift.lo, b[i].shift.hi - b[i].shift.Center
}

func (b bars) withCI() bars {
	var out bars
	for _, x := range b {
		if x.shift.hasCI() {
			out = append(out, x)
		}
	}
	return out
}

// valueLabels print each bar's value above its interval (or above the
// bar when it has none).
type valueLabels bars

func (v valueLabels) Len() int { return len(v) }
func (v valueLabels) XY(i int) (float64, float64) {
	top := max(v[i].shift.Center, 0)
	if v[i].shift.hasCI() {
		top = max(top, v[i].shift.hi)
	}
	return v[i].x, top
}
func (v valueLabels) Label(i int) string { return fmtNs(v[i].shift.Center) }

func chartMechanisms(rows []Row) []string {
	var mechs []string
	for _, r := range rows {
		if r.hasOverhead && !slices.Contains(mechs, r.Mechanism) {
			mechs = append(mechs, r.Mechanism)
		}
	}
	return mechs
}

func findRow(rows []Row, m, c string) (Row, bool) {
	for _, r := range rows {
		if r.Mechanism == m && r.Case == c {
			return r, true
		}
	}
	return Row{}, false
}

// nsTicks are gonum's default ticks labelled like the table's figures.
type nsTicks struct{}

func (nsTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = fmtNs(ticks[i].Value)
		}
	}
	return ticks
}

func caseTicks(cases []string) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(cases))
	for i, c := range cases {
		ticks[i] = plot.Tick{Value: float64(i), Label: c}
	}
	return ticks
}
