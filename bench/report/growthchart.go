package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writeGrowthChart draws Start against the number of functions on
// log-log axes: each mechanism's and peer's measured sizes as points, its
// fitted power law as a line over them, dashed where it extrapolates
// beyond a budget stop; the vfs_read-only mechanisms as points at one
// function.
func (p *multiPart) writeGrowthChart(w io.Writer, s *Summary, format string) error {
	if p.Without() != "" {
		return errors.New("growth chart: " + p.Without())
	}
	pl := plot.New()
	pl.Title.Text = "Start (load + verify + attach) against functions traced\n" + s.Label()
	pl.X.Label.Text = "functions traced (log scale)"
	pl.Y.Label.Text = fmt.Sprintf("Start, %s (log scale)", s.TimeUnit())
	pl.X.Scale, pl.Y.Scale = plot.LogScale{}, plot.LogScale{}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	pl.Add(plotter.NewGrid())
	for i, g := range p.Growth {
		if err := addGrowth(pl, g, i); err != nil {
			return fmt.Errorf("growth chart: %s: %w", g.Name, err)
		}
	}
	pl.Legend.Top, pl.Legend.Left = true, true
	return writePlot(w, pl, format)
}

// addGrowth draws g, the i-th row: points, fit, extrapolation.
func addGrowth(pl *plot.Plot, g Growth, i int) error {
	var measured, extrapolated plotter.XYs
	for _, c := range g.Cells {
		switch {
		case c.Measured:
			measured = append(measured, plotter.XY{X: c.Functions, Y: c.units["start-ns"] / 1e9})
		case c.extrapolated:
			extrapolated = append(extrapolated, plotter.XY{X: c.Functions, Y: g.predictedStart(c) / 1e9})
		}
	}
	if len(measured) == 0 {
		return nil
	}
	color := plotutil.Color(i)
	points, err := plotter.NewScatter(measured)
	if err != nil {
		return err
	}
	points.Color, points.Shape = color, plotutil.Shape(i)
	pl.Add(points)
	label := g.Name
	if g.Single {
		label += " (vfs_read alone)"
	}
	if !g.HasStartFit {
		pl.Legend.Add(label, points)
		return nil
	}
	label += ": slope " + g.StartFit.String()
	xs := func(xy plotter.XYs) []float64 {
		out := make([]float64, len(xy))
		for j := range xy {
			out[j] = xy[j].X
		}
		return out
	}
	fit, err := fitLine(g.StartFit, slices.Min(xs(measured)), slices.Max(xs(measured)))
	if err != nil {
		return err
	}
	fit.Color = color
	pl.Add(fit)
	pl.Legend.Add(label, points, fit)
	if len(extrapolated) == 0 {
		return nil
	}
	beyond, err := fitLine(g.tailFit, slices.Max(xs(measured)), slices.Max(xs(extrapolated)))
	if err != nil {
		return err
	}
	beyond.Color, beyond.Dashes = color, []vg.Length{vg.Points(4), vg.Points(3)}
	pl.Add(beyond)
	marks, err := plotter.NewScatter(extrapolated)
	if err != nil {
		return err
	}
	marks.Color, marks.Shape = color, draw.CrossGlyph{}
	pl.Add(marks)
	return nil
}

// fitLine is f from x lo to hi, evenly spaced on the log scale.
func fitLine(f Fit, lo, hi float64) (*plotter.Line, error) {
	const steps = 20
	var xy plotter.XYs
	for k := 0; k <= steps; k++ {
		x := math.Pow(10, math.Log10(lo)+(math.Log10(hi)-math.Log10(lo))*float64(k)/steps)
		xy = append(xy, plotter.XY{X: x, Y: f.Predict(x) / 1e9})
	}
	return plotter.NewLine(xy)
}
