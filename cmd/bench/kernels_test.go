package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/report"
)

// committedPerfMatrix is make bench-kernels' committed output.
const committedPerfMatrix = "results/perf-matrix"

// TestCommittedPerfMatrix writes the perf matrix of the committed runs
// again, beside copies of them, and compares every file with the
// committed one: make docs renders it from them.
func TestCommittedPerfMatrix(t *testing.T) {
	t.Chdir("../..") // kernels.tsv is read from the module root
	runs, err := report.PerfMatrixRuns(committedPerfMatrix)
	require.NoError(t, err)
	tmp := filepath.Join(t.TempDir(), filepath.Base(committedPerfMatrix))
	growth, err := report.LookupFamily("growth")
	require.NoError(t, err)
	for _, run := range runs {
		copyRun(t, run, filepath.Join(tmp, filepath.Base(run)))
		if _, err := os.Stat(filepath.Join(run, growth.Dir, report.RawFile)); err == nil {
			copyRun(t, filepath.Join(run, growth.Dir), filepath.Join(tmp, filepath.Base(run), growth.Dir))
		}
	}
	require.NoError(t, kernelsMain(tmp, tmp+".md"))
	pm, err := report.LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	files := []string{".md", "/" + report.PerfMatrixJSON}
	for _, c := range pm.Charts() {
		files = append(files, "/"+c.File)
	}
	for _, f := range files {
		want, err := os.ReadFile(committedPerfMatrix + f)
		require.NoError(t, err)
		got, err := os.ReadFile(tmp + f)
		require.NoError(t, err)
		assert.True(t, string(want) == string(got), "%s%s differs from what bench kernels writes: make docs", committedPerfMatrix, f)
	}
}

// copyRun copies a run's raw.txt and meta.txt from dir to a new dir to.
func copyRun(t *testing.T, dir, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(to, 0o755))
	for _, name := range []string{report.RawFile, report.MetaFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, name), b, 0o644))
	}
}

func TestKernelsCommandRefusesBadArguments(t *testing.T) {
	t.Chdir(".") // the command moves to the module root: back after the test
	assert.Equal(t, 2, kernelsCommand([]string{"one"}, os.Stdout))
	assert.Equal(t, 1, kernelsCommand([]string{t.TempDir(), filepath.Join(t.TempDir(), "out.md")}, os.Stdout),
		"a directory without runs")
}

// A kernels.tsv row with a run is not listed as unmeasured, whatever its
// row says; one without a run is, with why.
func TestUnmeasured(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	for _, k := range []string{"6.1.0-50-amd64", "7.2.13+deb14-rt-amd64"} {
		run := filepath.Join(dir, k)
		require.NoError(t, os.MkdirAll(run, 0o755))
		raw := "tracebench-kernel: " + k + "\ntracebench-emulation: tcg\ntracebench-cpus: 2\ntracebench-clock: icount\n" +
			"BenchmarkVFSRead/baseline-2 20000 1000 ns/op\nPASS\n"
		require.NoError(t, os.WriteFile(filepath.Join(run, report.RawFile), []byte(raw), 0o644))
	}
	runs, err := report.PerfMatrixRuns(dir)
	require.NoError(t, err)
	pm, err := report.LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	list, err := unmeasured(pm)
	require.NoError(t, err)
	joined := strings.Join(list, "\n")
	assert.NotContains(t, joined, "bookworm:6.1 ", "measured, though its row says it hangs")
	assert.NotContains(t, joined, "sid:7:rt-amd64 ")
	assert.Contains(t, joined, "trixie:6.12 (no run of it in the directory)")
	assert.Contains(t, joined, "bullseye:5.10 (under icount")
	assert.Contains(t, joined, "sid:7:arm64 (packages initramfs")
}
