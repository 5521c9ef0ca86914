package report

import (
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Fit is a power law y = C·x^slope fitted by least squares to (log10 x,
// log10 y): the slope of the line on a log-log plot. A slope of 1 is a
// cost linear in x, 0 one that does not grow.
type Fit struct {
	slope, intercept float64 // log10 y = Intercept + Slope·log10 x
	// lo and hi bound slope's 95% interval (Student's t with N-2 degrees
	// of freedom); infinite with fewer than 3 points, where no interval
	// exists.
	lo, hi float64
	N      int // points
}

// hasCI reports whether the slope has a finite interval.
func (f Fit) hasCI() bool { return !math.IsInf(f.lo, 0) && !math.IsInf(f.hi, 0) }

// Predict returns the fitted y at x.
func (f Fit) Predict(x float64) float64 { return math.Pow(10, f.intercept+f.slope*math.Log10(x)) }

// String prints the slope with its interval, e.g. "1.02 [0.95, 1.09]".
func (f Fit) String() string {
	if !f.hasCI() {
		return fmt.Sprintf("%.2f [no CI: %d points]", f.slope, f.N)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", f.slope, f.lo, f.hi)
}

// fitPowerLaw fits a power law to the points (xs[i], ys[i]), all
// positive. ok is false with fewer than 2 points, points of one x only,
// or a value that is not positive (its logarithm does not exist).
func fitPowerLaw(xs, ys []float64) (f Fit, ok bool) {
	n := len(xs)
	if n != len(ys) || n < 2 {
		return Fit{}, false
	}
	lx, ly := make([]float64, n), make([]float64, n)
	for i := range xs {
		if !(xs[i] > 0) || !(ys[i] > 0) || math.IsInf(xs[i], 0) || math.IsInf(ys[i], 0) {
			return Fit{}, false
		}
		lx[i], ly[i] = math.Log10(xs[i]), math.Log10(ys[i])
	}
	mx, my := mean(lx), mean(ly)
	var sxx, sxy float64
	for i := range lx {
		sxx += (lx[i] - mx) * (lx[i] - mx)
		sxy += (lx[i] - mx) * (ly[i] - my)
	}
	if sxx == 0 {
		return Fit{}, false
	}
	f = Fit{slope: sxy / sxx, N: n, lo: math.Inf(-1), hi: math.Inf(1)}
	f.intercept = my - f.slope*mx
	if n < 3 {
		return f, true
	}
	var sse float64
	for i := range lx {
		r := ly[i] - (f.intercept + f.slope*lx[i])
		sse += r * r
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	t := stats.InvCDF(stats.TDist{V: float64(n - 2)})(1 - (1-Confidence)/2)
	f.lo, f.hi = f.slope-t*se, f.slope+t*se
	return f, true
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
