package report

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

const (
	// Confidence is the level of every interval in the report.
	Confidence = 0.95
	// Alpha is the significance level of every comparison.
	Alpha = 0.05
)

// Estimate is a median with its distribution-free confidence interval
// (benchstat's summary). Lo and Hi are infinite when there are too few
// samples for an interval at level Confidence (fewer than 6).
type Estimate struct {
	Center, Lo, Hi float64
	N              int // samples
}

// HasCI reports whether the interval is finite.
func (e Estimate) HasCI() bool { return !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) }

// Median estimates values' median; ok is false without values.
func Median(values []float64) (e Estimate, ok bool) {
	if len(values) == 0 {
		return Estimate{}, false
	}
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Estimate{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, N: len(values)}, true
}

// Shift is how much larger sample a is than sample b.
type Shift struct {
	// Estimate is the Hodges-Lehmann shift (the median of all pairwise
	// differences a[i]-b[j]) with its exact distribution-free interval.
	Estimate
	// P is the two-sided Mann-Whitney U test's p-value (as benchstat
	// computes it) for "a and b come from the same distribution".
	P float64
}

// Significant reports whether P is below Alpha.
func (s Shift) Significant() bool { return s.P < Alpha }

// Compare returns the shift of a over b; ok is false if either is empty.
func Compare(a, b []float64) (s Shift, ok bool) {
	if len(a) == 0 || len(b) == 0 {
		return Shift{}, false
	}
	th := &benchmath.DefaultThresholds
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th))
	return Shift{Estimate: hodgesLehmann(a, b, Confidence), P: cmp.P}, true
}

// hodgesLehmann returns the median of the pairwise differences a[i]-b[j]
// and the interval [d(k), d(mn+1-k)] of the sorted differences, with k the
// largest order whose coverage 1-2*P(U <= k-1) is at least confidence,
// where U is the Mann-Whitney statistic for sizes len(a), len(b) without
// ties (Hollander & Wolfe, Nonparametric Statistical Methods, 4.3). The
// interval is infinite when the samples are too small for it.
func hodgesLehmann(a, b []float64, confidence float64) Estimate {
	m, n := len(a), len(b)
	diffs := make([]float64, 0, m*n)
	for _, x := range a {
		for _, y := range b {
			diffs = append(diffs, x-y)
		}
	}
	slices.Sort(diffs)
	est := Estimate{Center: sortedMedian(diffs), Lo: math.Inf(-1), Hi: math.Inf(1), N: min(m, n)}
	if k := shiftCIOrder(m, n, confidence); k > 0 {
		est.Lo, est.Hi = diffs[k-1], diffs[m*n-k]
	}
	return est
}

// shiftCIOrder returns the order k of the Hodges-Lehmann interval's lower
// bound (1-based), or 0 if no interval reaches confidence.
func shiftCIOrder(m, n int, confidence float64) int {
	u := stats.UDist{N1: m, N2: n}
	k := 0
	for k+1 <= m*n/2 && 1-2*u.CDF(float64(k)) >= confidence {
		k++
	}
	return k
}

func sortedMedian(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
