package matrix

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhere(t *testing.T) {
	exp, err := ParseExpectations(strings.NewReader("kernel\tpackages\told\tnew\tx86\tsome\tnone\n" +
		"a:6.1\tfull\tyes\tno\tyes\tno\tno\n" +
		"b:7.0\tfull\tyes\tno\tyes\tyes\tno\n" +
		"c:7\tfull\tyes\tyes\tyes\tno\tno\n" +
		"d:7:arm64\tinitramfs\tyes\tyes\tno\tno\tno\n" +
		"e:7:powerpc64le\tinitramfs\tyes\tyes\tno\tyes\tno\n" +
		"f:7:powerpc64le-64k\tinitramfs\tyes\tyes\tno\tno\tno\n"))
	require.NoError(t, err)
	abis := []string{"6.1.0-47-amd64", "7.0.13+deb13-amd64", "7.2.13+deb14-amd64", "7.2.13+deb14-arm64",
		"7.2.13+deb14-powerpc64le", "7.2.13+deb14-powerpc64le-64k"}
	rep := Report{Expect: exp}
	for i, k := range exp.Kernels {
		rep.Runs = append(rep.Runs, Run{Kernel: k, ABI: abis[i]})
	}
	for mechanism, want := range map[string]string{
		"old":  "amd64 ≥ 6.1, arm64 7.2, ppc64el 7.2",
		"new":  "amd64 ≥ 7.2, arm64 7.2, ppc64el 7.2",
		"x86":  "amd64 ≥ 6.1; not arm64, ppc64el",
		"some": "amd64 (`b:7.0`), ppc64el (`e:7:powerpc64le`); not arm64",
		"none": "not amd64, arm64, ppc64el",
	} {
		got, err := rep.Where(mechanism)
		require.NoError(t, err)
		assert.Equal(t, want, got, mechanism)
	}
	rep.Runs[1].ABI = ""
	_, err = rep.Where("old")
	assert.EqualError(t, err, `b:7.0: no kernel release in its run's ABI "" (no outcome file?)`)
}

// readmeWhere matches a row of the README's mechanism table: the name and
// the last column, where the matrix ran it.
var readmeWhere = regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|.*\\| ([^|]*) \\|$")

// The README's mechanism table says where each mechanism runs as Where
// says it of kernels.tsv and the committed outcome files
// (results/matrix/*.json): a row is not left behind when a column or an
// expectation changes, nor when a run brings another kernel release.
func TestREADMEWhere(t *testing.T) {
	rep := committedReport(t)
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "| mechanism | how it keeps the entry time | needs | where (`make matrix`) |\n")
	require.True(t, ok, "README.md has the mechanism table with its where column")
	table, _, _ = strings.Cut(table, "\n\n")
	rows := readmeWhere.FindAllStringSubmatch(table, -1)
	require.NotEmpty(t, rows, "rows of README's mechanism table")
	for _, row := range rows {
		want, err := rep.Where(row[1])
		require.NoError(t, err)
		assert.Equal(t, want, row[2], "README's where of %s", row[1])
	}
}

// committedReport merges the committed outcome files with kernels.tsv, as
// `make matrix-merge` does.
func committedReport(t *testing.T) Report {
	paths, err := filepath.Glob("../results/matrix/*.json")
	require.NoError(t, err)
	var runs []Run
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		r, err := ReadShard(f)
		f.Close()
		require.NoError(t, err, p)
		runs = append(runs, r)
	}
	rep, err := Merge(committedTable(t), runs, paths)
	require.NoError(t, err)
	return rep
}
