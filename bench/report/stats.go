package report

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

const (
	// Confidence is the level of every interval in the report.
	Confidence = 0.95
	// alpha is the significance level of every comparison.
	alpha = 0.05
)

// estimate is a median with its distribution-free confidence interval
// (benchstat's summary). lo and hi are infinite when there are too few
// samples for an interval at level confidence (fewer than 6).
type estimate struct {
	Center, lo, hi float64
	N              int // samples
}

// hasCI reports whether the interval is finite.
func (e estimate) hasCI() bool { return !math.IsInf(e.lo, 0) && !math.IsInf(e.hi, 0) }

// median estimates values' median; ok is false without values.
func median(values []float64) (e estimate, ok bool) {
	if len(values) == 0 {
		return estimate{}, false
	}
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return estimate{Center: sum.Center, lo: sum.Lo, hi: sum.Hi, N: len(values)}, true
}

// shift is how much larger sample a is than sample b.
type shift struct {
	// estimate is the Hodges-Lehmann estimate of the paired differences
	// with its exact distribution-free interval (comparePaired); N counts
	// the pairs.
	estimate
	// P is the two-sided Wilcoxon signed-rank test's p-value for "the
	// differences are symmetric about 0".
	P float64
}

// significant reports whether P is below alpha.
func (s shift) significant() bool { return s.P < alpha }

func sortedMedian(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// comparePaired returns the shift of a over b from paired samples:
// a[i] and b[i] come from the same round (one process, one host load), so
// the round's own level cancels in d[i] = a[i]-b[i]. The estimate is the
// one-sample Hodges-Lehmann estimate of d (the median of the Walsh
// averages (d[i]+d[j])/2, i <= j) with its exact interval, P the exact
// two-sided Wilcoxon signed-rank test. ok is false without pairs.
//
// go-moremath, gonum and x/perf have no signed-rank test, hence this one.
func comparePaired(a, b []float64) (s shift, ok bool) {
	if len(a) != len(b) || len(a) == 0 {
		return shift{}, false
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return shift{estimate: walshEstimate(d, Confidence), P: signedRankP(d)}, true
}

// walshEstimate returns the median of d's Walsh averages and the interval
// [w(k), w(M+1-k)] of the M = n(n+1)/2 sorted averages, k the largest order
// whose coverage 1-2*P(T <= k-1) is at least confidence, T the signed-rank
// statistic without ties (Hollander & Wolfe, Nonparametric Statistical
// Methods, 3.2). The interval is infinite for fewer than 6 pairs at 95%.
func walshEstimate(d []float64, confidence float64) estimate {
	n := len(d)
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	est := estimate{Center: sortedMedian(walsh), lo: math.Inf(-1), hi: math.Inf(1), N: n}
	if k := signedRankCIOrder(n, confidence); k > 0 {
		est.lo, est.hi = walsh[k-1], walsh[len(walsh)-k]
	}
	return est
}

// signedRankCIOrder returns the order k (1-based) of the lower bound of the
// Walsh-average interval, or 0 if no interval reaches confidence.
func signedRankCIOrder(n int, confidence float64) int {
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i + 1
	}
	cdf := cumulative(subsetSums(ranks))
	k := 0
	for k+1 <= n*(n+1)/4 && 1-2*cdf[k] >= confidence {
		k++
	}
	return k
}

// signedRankP is the exact two-sided p-value of the Wilcoxon signed-rank
// test of "d is symmetric about 0". Zero differences are dropped
// (Wilcoxon's method) and tied |d| get their mean rank; the null
// distribution is enumerated over those ranks, so ties keep it exact.
// Without a non-zero difference p is 1.
func signedRankP(d []float64) float64 {
	var nonzero []float64
	for _, x := range d {
		if x != 0 {
			nonzero = append(nonzero, x)
		}
	}
	if len(nonzero) == 0 {
		return 1
	}
	// Doubled mid-ranks are integers, so the statistic is one too.
	ranks2 := doubledRanks(nonzero)
	plus := 0
	for i, x := range nonzero {
		if x > 0 {
			plus += ranks2[i]
		}
	}
	counts := subsetSums(ranks2)
	var total, below, above float64
	for sum, c := range counts {
		total += c
		if sum <= plus {
			below += c
		}
		if sum >= plus {
			above += c
		}
	}
	return min(1, 2*min(below, above)/total)
}

// doubledRanks returns twice the mid-rank of each |x| among |xs|.
func doubledRanks(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmpAbs(xs[i], xs[j]) })
	out := make([]int, len(xs))
	for lo := 0; lo < len(idx); {
		hi := lo
		for hi+1 < len(idx) && cmpAbs(xs[idx[hi+1]], xs[idx[lo]]) == 0 {
			hi++
		}
		// Ranks lo+1..hi+1 share their mean; doubled: lo+hi+2.
		for i := lo; i <= hi; i++ {
			out[idx[i]] = lo + hi + 2
		}
		lo = hi + 1
	}
	return out
}

func cmpAbs(a, b float64) int {
	switch a, b = math.Abs(a), math.Abs(b); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// subsetSums returns, for every s, how many subsets of values sum to s:
// the null distribution of the signed-rank statistic times 2^n.
func subsetSums(values []int) []float64 {
	total := 0
	for _, v := range values {
		total += v
	}
	counts := make([]float64, total+1)
	counts[0] = 1
	top := 0
	for _, v := range values {
		for s := top; s >= 0; s-- {
			counts[s+v] += counts[s]
		}
		top += v
	}
	return counts
}

// cumulative turns counts into the distribution function P(X <= s).
func cumulative(counts []float64) []float64 {
	var total float64
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	var acc float64
	for s, c := range counts {
		acc += c
		cdf[s] = acc / total
	}
	return cdf
}
