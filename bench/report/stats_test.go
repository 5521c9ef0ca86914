package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSignedRankPDarwin: Darwin's Zea mays data (Fisher, The Design of
// Experiments, 1935, 3.17), differences of 15 crossed and self-fertilised
// pairs in eighths of an inch. The negative ranks sum to W = 24 (11 + 13);
// the exact two-sided p is 2 * 338/2^15 = 0.041259765625, as tabulated and
// as scipy.stats.wilcoxon's documentation prints it.
func TestSignedRankPDarwin(t *testing.T) {
	d := []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}
	assert.Equal(t, 0.041259765625, signedRankP(d))
	neg := make([]float64, len(d))
	for i, x := range d {
		neg[i] = -x
	}
	assert.Equal(t, 0.041259765625, signedRankP(neg), "two-sided: symmetric in the sign")
}

// TestSignedRankCIOrder checks the interval's order statistic against the
// published critical values T of the two-sided signed-rank test at 0.05
// (the interval is [w(T+1), w(M-T)] of the M Walsh averages).
func TestSignedRankCIOrder(t *testing.T) {
	for _, tt := range []struct{ n, critical int }{
		{6, 0}, {7, 2}, {8, 3}, {9, 5}, {10, 8}, {11, 10}, {12, 13}, {13, 17}, {14, 21}, {15, 25}, {20, 52},
	} {
		assert.Equal(t, tt.critical+1, signedRankCIOrder(tt.n, 0.95), "n=%d", tt.n)
	}
	assert.Equal(t, 0, signedRankCIOrder(5, 0.95), "5 pairs cannot give a 95% interval")
}

// TestSignedRankPSmall: with n pairs all of one sign p = 2/2^n, the
// smallest there is; 5 pairs can never reach 0.05.
func TestSignedRankPSmall(t *testing.T) {
	assert.Equal(t, 2.0/64, signedRankP([]float64{1, 2, 3, 4, 5, 6}))
	assert.Equal(t, 2.0/32, signedRankP([]float64{5, 4, 3, 2, 1}))
	assert.Equal(t, 1.0, signedRankP([]float64{0, 0, 0}), "no non-zero difference")
	assert.Equal(t, 1.0, signedRankP([]float64{-1, 1}), "balanced")
	// Zeros are dropped: the same as {1,2,3,4,5,6}.
	assert.Equal(t, 2.0/64, signedRankP([]float64{0, 1, 2, 0, 3, 4, 5, 6}))
}

// TestSignedRankPTies compares the exact p with ties against a brute force
// over every sign assignment of the mid-ranks. Example from the Wikipedia
// article "Wilcoxon signed-rank test" (10 pairs, one zero, two tied |d|).
func TestSignedRankPTies(t *testing.T) {
	d := []float64{-15, 7, -5, -20, 0, 9, -17, 12, -5, 10}
	got := signedRankP(d)
	assert.InDelta(t, bruteForceP(d), got, 1e-12)
	assert.False(t, got < alpha, "the article's example is not significant")
}

// bruteForceP enumerates the 2^n sign assignments of the non-zero |d|'s
// mid-ranks and counts those whose positive-rank sum is at least as
// extreme as observed, on either side.
func bruteForceP(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	rank := func(i int) float64 { // mid-rank of |nz[i]|
		less, equal := 0, 0
		for _, y := range nz {
			switch {
			case math.Abs(y) < math.Abs(nz[i]):
				less++
			case math.Abs(y) == math.Abs(nz[i]):
				equal++
			}
		}
		return float64(less) + float64(equal+1)/2
	}
	observed := 0.0
	for i, x := range nz {
		if x > 0 {
			observed += rank(i)
		}
	}
	var below, above, total float64
	for mask := 0; mask < 1<<len(nz); mask++ {
		sum := 0.0
		for i := range nz {
			if mask&(1<<i) != 0 {
				sum += rank(i)
			}
		}
		total++
		if sum <= observed {
			below++
		}
		if sum >= observed {
			above++
		}
	}
	return math.Min(1, 2*math.Min(below, above)/total)
}

// TestComparePaired: with 6 pairs the interval is [min, max] of the Walsh
// averages, i.e. of the differences; the estimate is their Walsh median.
func TestComparePaired(t *testing.T) {
	a := []float64{11, 22, 33, 44, 55, 66}
	b := []float64{10, 20, 30, 40, 50, 60} // differences 1..6
	s, ok := comparePaired(a, b)
	require.True(t, ok)
	assert.Equal(t, estimate{Center: 3.5, lo: 1, hi: 6, N: 6}, s.estimate)
	assert.Equal(t, 2.0/64, s.P)
	assert.True(t, s.significant())

	// Differences 1, 2, 3, 10: Walsh averages 1 1.5 2 2 2.5 3 5.5 6 6.5 10,
	// median 2.75; 4 pairs give no interval.
	s, ok = comparePaired([]float64{1, 2, 3, 10}, []float64{0, 0, 0, 0})
	require.True(t, ok)
	assert.Equal(t, 2.75, s.Center)
	assert.False(t, s.hasCI())
	assert.False(t, s.significant(), "p = 2/16")

	_, ok = comparePaired([]float64{1}, []float64{1, 2})
	assert.False(t, ok, "unequal lengths are not pairs")
	_, ok = comparePaired(nil, nil)
	assert.False(t, ok)
}

// TestPairingCancelsRoundLevel: every round shifts all its figures by the
// same amount (a host load), by far more than the overhead of 10. Paired,
// the overhead is exact and significant.
func TestPairingCancelsRoundLevel(t *testing.T) {
	var raw string
	for r, level := range []int{0, 500, -300, 900, 100, -700, 250, 40} {
		raw += "tracebench-kernel: 7.2\n"
		raw += "BenchmarkVFSRead/baseline-2 10 " + strconv.Itoa(1000+level) + " ns/op\n"
		raw += "BenchmarkVFSRead/fsession/tgid-miss-2 10 " + strconv.Itoa(1010+level+r%2) + " ns/op\n"
	}
	s := summaryOf(t, raw)
	require.Len(t, ov(s).Rows, 1)
	o := ov(s).Rows[0].Overhead
	assert.Equal(t, 8, o.N)
	assert.InDelta(t, 10.5, o.Center, 1e-9)
	assert.Equal(t, 10.0, o.lo)
	assert.Equal(t, 11.0, o.hi)
	assert.Equal(t, 2.0/256, o.P)
}

// TestPairedSkipsUnmatchedRounds: a round in which one side failed pairs
// nothing; the others still pair by process, not by position.
func TestPairedSkipsUnmatchedRounds(t *testing.T) {
	raw := "tracebench-kernel: 7.2\nBenchmarkVFSRead/baseline-2 10 100 ns/op\n" +
		"tracebench-kernel: 7.2\nBenchmarkVFSRead/baseline-2 10 200 ns/op\nBenchmarkVFSRead/fsession/tgid-miss-2 10 210 ns/op\n" +
		"tracebench-kernel: 7.2\nBenchmarkVFSRead/baseline-2 10 300 ns/op\nBenchmarkVFSRead/fsession/tgid-miss-2 10 320 ns/op\n"
	run, err := parse(strings.NewReader(raw), "raw.txt")
	require.NoError(t, err)
	assert.Equal(t, 3, run.Rounds)
	x, y := run.paired(Key{vfsRead, "fsession", "tgid-miss"}, Key{vfsRead, Baseline, ""}, "ns/op")
	assert.Equal(t, []float64{210, 320}, x)
	assert.Equal(t, []float64{200, 300}, y)
}
