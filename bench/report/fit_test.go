package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFitPowerLawExact(t *testing.T) {
	// y = 3·x^1.5 exactly: slope 1.5, no residual, so a zero-width interval.
	xs := []float64{1, 10, 100, 1000}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3 * math.Pow(x, 1.5)
	}
	f, ok := fitPowerLaw(xs, ys)
	require.True(t, ok)
	assert.InDelta(t, 1.5, f.slope, 1e-12)
	assert.InDelta(t, math.Log10(3), f.intercept, 1e-12)
	assert.True(t, f.hasCI())
	assert.InDelta(t, 1.5, f.lo, 1e-9)
	assert.InDelta(t, 1.5, f.hi, 1e-9)
	assert.InDelta(t, 3*math.Pow(10000, 1.5), f.Predict(10000), 1e-3)
	assert.Equal(t, "1.50 [1.50, 1.50]", f.String())
}

// Against a hand computation: log10 x = 0, 1, 2, log10 y = 0, 1.2, 1.8:
// slope 0.9, intercept 0.1, residuals -0.1, 0.2, -0.1, s² = 0.06/1,
// SE = sqrt(0.06/2), t(0.975, 1) = 12.7062.
func TestFitPowerLawInterval(t *testing.T) {
	f, ok := fitPowerLaw([]float64{1, 10, 100}, []float64{1, math.Pow(10, 1.2), math.Pow(10, 1.8)})
	require.True(t, ok)
	assert.InDelta(t, 0.9, f.slope, 1e-12)
	assert.InDelta(t, 0.1, f.intercept, 1e-12)
	half := 12.7062 * math.Sqrt(0.06/2)
	assert.InDelta(t, 0.9-half, f.lo, 1e-3)
	assert.InDelta(t, 0.9+half, f.hi, 1e-3)
	assert.Equal(t, 3, f.N)
}

func TestFitPowerLawTwoPointsHasNoInterval(t *testing.T) {
	f, ok := fitPowerLaw([]float64{10, 100}, []float64{2, 20})
	require.True(t, ok)
	assert.InDelta(t, 1, f.slope, 1e-12)
	assert.False(t, f.hasCI())
	assert.Equal(t, "1.00 [no CI: 2 points]", f.String())
}

func TestFitPowerLawRefuses(t *testing.T) {
	for name, pts := range map[string][2][]float64{
		"one point":     {{10}, {2}},
		"one x":         {{10, 10}, {2, 3}},
		"zero":          {{0, 10}, {2, 3}},
		"negative":      {{1, 10}, {-2, 3}},
		"NaN":           {{1, 10}, {math.NaN(), 3}},
		"infinite":      {{1, math.Inf(1)}, {2, 3}},
		"uneven points": {{1, 10, 100}, {2, 3}},
	} {
		_, ok := fitPowerLaw(pts[0], pts[1])
		assert.False(t, ok, name)
	}
}
