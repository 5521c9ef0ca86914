package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/report"
)

// committedReports are the directories of every committed report, as
// make bench-report finds them (bench.mk's BENCH_RAW).
func committedReports(t *testing.T) []string {
	var dirs []string
	for _, pattern := range []string{"../../results/*/" + report.RawFile, "../../results/*/*/" + report.RawFile, "../../results/*/*/*/" + report.RawFile} {
		raws, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, raw := range raws {
			dirs = append(dirs, filepath.Dir(raw))
		}
	}
	require.NotEmpty(t, dirs, "committed reports")
	return dirs
}

// baselineOnly is a round on a kernel that lacks every mechanism.
const baselineOnly = `tracebench-kernel: 6.18.44-fc-v595
tracebench-emulation: none
BenchmarkVFSRead/baseline-2 100 310.3 ns/op
BenchmarkVFSRead/fsession/tgid-miss
    bench_test.go:345: fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is 6.18.44-fc-v595
--- SKIP: BenchmarkVFSRead/fsession/tgid-miss
PASS
`

func TestRunNoMechanismRan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "6.18.44-fc-v595")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, report.RawFile), []byte(baselineOnly), 0o644))
	// Left by an earlier run of the same kernel, which had a chart.
	for _, name := range []string{report.ChartFile, report.BenchstatBaselineFile, report.BenchstatReferenceFile} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644))
	}
	var stderr strings.Builder
	require.NoError(t, writeReport(dir, &stderr))

	readme := filepath.Join(dir, "README.md")
	assert.Equal(t, "bench: no mechanism ran on this kernel; see "+readme+"\n", stderr.String())
	md, err := os.ReadFile(readme)
	require.NoError(t, err)
	assert.Contains(t, string(md), "> **No mechanism ran on this kernel** (*Skipped* below says why)")
	assert.Contains(t, string(md), "- fsession (1 sub-benchmark): fsession needs BPF_TRACE_FSESSION")
	assert.NotContains(t, string(md), "meta.txt", "there is none")
	assert.Contains(t, string(md), "Regenerate with `make bench-report BENCH_RESULTS="+filepath.Dir(dir)+"`")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"README.md", report.RawFile}, names, "the old chart and comparisons removed, nothing else written")
}

// TestRunCommittedResults regenerates every committed report on a copy:
// every file must come out byte for byte but the README's regenerate
// command, which names the copy. No event was dropped in them, so
// writeReport succeeds.
func TestRunCommittedResults(t *testing.T) {
	for _, src := range committedReports(t) {
		rel, err := filepath.Rel("../../results", src)
		require.NoError(t, err)
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), rel)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			for _, name := range []string{report.RawFile, report.MetaFile} {
				b, err := os.ReadFile(filepath.Join(src, name))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
			}
			var stderr strings.Builder
			require.NoError(t, writeReport(dir, &stderr))
			assert.Empty(t, stderr.String())

			entries, err := os.ReadDir(src)
			require.NoError(t, err)
			for _, e := range entries {
				if e.IsDir() || slices.Contains(notBenchReports, e.Name()) {
					continue
				}
				want, err := os.ReadFile(filepath.Join(src, e.Name()))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dir, e.Name()))
				require.NoError(t, err, "%s not written", e.Name())
				if e.Name() == "README.md" {
					want = regenerateLine.ReplaceAll(want, nil)
					got = regenerateLine.ReplaceAll(got, nil)
				}
				assert.True(t, string(want) == string(got), "%s differs from the committed one", e.Name())
			}
			md, err := os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			assert.Contains(t, string(md), "\nRegenerate with `make bench-report BENCH_RESULTS="+filepath.Dir(dir)+"`; how to read it: bench/README.md.\n")
		})
	}
}

// notBenchReports are files of a results directory that bench report does
// not write: the peers' conformance table and its numbers, which peers'
// TestCommittedConformance regenerates and checks.
var notBenchReports = []string{"CONFORMANCE.md", "conformance.json"}

// regenerateLine is the README's line naming its directory.
var regenerateLine = regexp.MustCompile("(?m)^Regenerate with `.*`; how to read it: bench/README.md.$")

func TestRegenerateCommand(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	for _, tt := range []struct{ dir, want string }{
		{"results/7.2.13+deb14-amd64", "make bench-report"},
		{"./results/7.2.13+deb14-amd64/", "make bench-report"},
		{filepath.Join(root, "results", "7.2.13+deb14-amd64"), "make bench-report"},
		{"out/7.2", "make bench-report BENCH_RESULTS=out"},
		{"7.2", "make bench-report BENCH_RESULTS=."},
		{"/tmp/bh/6.18.44-fc-v595", "make bench-report BENCH_RESULTS=/tmp/bh"},
		{"/tmp/my results/6.18", "make bench-report BENCH_RESULTS='/tmp/my results'"},
	} {
		got, err := regenerateCommand(tt.dir)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.dir)
	}
}

// TestRunDrops: a run whose every-call case dropped events in one round
// gets its whole report, and an error naming the sub-benchmark.
func TestRunDrops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "7.2")
	require.NoError(t, os.Mkdir(dir, 0o755))
	var raw strings.Builder
	for r := range 6 {
		fmt.Fprintf(&raw, "tracebench-kernel: 7.2\ntracebench-emulation: tcg\ntracebench-clock: icount\n")
		fmt.Fprintf(&raw, "BenchmarkVFSRead/baseline-2 100 %d ns/op\n", 1000+r)
		dropped := 0
		if r == 4 {
			dropped = 250
		}
		fmt.Fprintf(&raw, "BenchmarkVFSRead/fsession/every-call-2 100 %d ns/op %d dropped/s 9000 events/s\n", 2000+r, dropped)
		fmt.Fprintf(&raw, "BenchmarkVFSRead/fentry-fexit/every-call-2 100 %d ns/op 0 dropped/s 9000 events/s\n", 3000+r)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, report.RawFile), []byte(raw.String()), 0o644))
	err := writeReport(dir, io.Discard)
	var drops *dropsError
	require.ErrorAs(t, err, &drops)
	assert.EqualError(t, err, "events were dropped, so the mechanisms did different work and the run is no comparison: "+
		"fsession/every-call (1 of 6 rounds, up to 250/s); see "+filepath.Join(dir, "README.md"))
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "> - fsession/every-call: dropped in 1 of 6 rounds, up to 250 events/s\n")
	assert.Contains(t, string(md), "| fentry-fexit/every-call: no event dropped | 0 in every round | yes |\n")
	assert.FileExists(t, filepath.Join(dir, report.ChartFile), "the report is written in full")
	assert.FileExists(t, filepath.Join(dir, report.BenchstatBaselineFile))
}

func TestRunNaNWritesNothing(t *testing.T) {
	dir := t.TempDir()
	raw := strings.Replace(baselineOnly, "310.3 ns/op", "NaN ns/op", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, report.RawFile), []byte(raw), 0o644))
	err := writeReport(dir, io.Discard)
	assert.ErrorContains(t, err, "raw.txt:3: BenchmarkVFSRead/baseline: NaN ns/op is not a measured value")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only raw.txt")
}

func TestRunRefusesRawWithoutRounds(t *testing.T) {
	for raw, want := range map[string]string{
		"":                               "meta.txt says 3 rounds were run, but raw.txt has no round (no tracebench-kernel: line)",
		"garbage\n":                      "meta.txt says 3 rounds were run, but raw.txt has no round (no tracebench-kernel: line)",
		"tracebench-kernel: 7.2\nPASS\n": "meta.txt says 3 rounds were run, but raw.txt has no benchmark result, skip or failure",
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, report.RawFile), []byte(raw), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, report.MetaFile), []byte("rounds: 3\n"), 0o644))
		assert.EqualError(t, writeReport(dir, io.Discard), want, "raw.txt %q", raw)
		_, err := os.Stat(filepath.Join(dir, "README.md"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	}
}
