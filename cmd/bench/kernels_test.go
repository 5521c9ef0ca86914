package main

import (
	"os"
	"path/filepath"
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
	for _, run := range runs {
		dir := filepath.Join(tmp, filepath.Base(run))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, name := range []string{report.RawFile, report.MetaFile} {
			b, err := os.ReadFile(filepath.Join(run, name))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
	}
	require.NoError(t, kernelsMain(tmp, tmp+".md"))
	files := []string{".md", "/" + report.PerfMatrixJSON}
	for _, c := range (&report.PerfMatrix{}).Charts() {
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

func TestKernelsCommandRefusesBadArguments(t *testing.T) {
	t.Chdir(".") // the command moves to the module root: back after the test
	assert.Equal(t, 2, kernelsCommand([]string{"one"}, os.Stdout))
	assert.Equal(t, 1, kernelsCommand([]string{t.TempDir(), filepath.Join(t.TempDir(), "out.md")}, os.Stdout),
		"a directory without runs")
}
