package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
	"tracebench/tracers"
)

// goGenerate matches a bpf2go line of tracers/ and the source it compiles.
var goGenerate = regexp.MustCompile(`(?m)^//go:generate go tool bpf2go .* \.\./bpf/(\S+)\.bpf\.c `)

// A mechanism is added in 4 places (README): bpf/<name>.bpf.c, its Go file
// with its declaration, its registry line and its kernels.tsv column. This
// checks that the rest is derived or names the same mechanisms.
func TestOneDeclarationPerMechanism(t *testing.T) {
	names := mechanismNames()
	var bpfSources []string
	for _, m := range tracers.Mechanisms() {
		if m.Can.BPF {
			bpfSources = append(bpfSources, strings.ReplaceAll(m.Name, "-", "_")+".bpf.c")
		}
	}
	root := sourceTree(t)
	exp := kernelExpectations(t, root)
	assert.Equal(t, names, exp.Mechanisms, "kernels.tsv columns vs tracers' registry")

	var generated []string
	files, err := filepath.Glob(filepath.Join(root, "tracers/*.go"))
	require.NoError(t, err)
	for _, file := range files {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range goGenerate.FindAllStringSubmatch(string(src), -1) {
			assert.Equal(t, strings.ReplaceAll(m[1], "_", "-")+".go", strings.ReplaceAll(filepath.Base(file), "_", "-"),
				"the go:generate line of bpf/%s.bpf.c is in its mechanism's file", m[1])
			if !slices.Contains(generated, m[1]+".bpf.c") {
				generated = append(generated, m[1]+".bpf.c")
			}
		}
	}
	assert.ElementsMatch(t, bpfSources, generated, "go:generate sources in tracers/ vs the registry's BPF mechanisms")

	for _, m := range tracers.Mechanisms() {
		for loss := tracers.Loss(1); loss != 0; loss <<= 1 {
			if _, ok := lossEffects[loss]; m.Can.Loses.Has(loss) && !ok {
				t.Errorf("%s declares loss %v, which lossEffects does not describe", m.Name, loss)
			}
		}
		e := expectOf(m.Can, m.Can.Loses, load{inFlight: 1})
		loses := m.Can.Loses.OnRunningKernel()
		assert.Equal(t, loses.ShowsIn(m.Can.State).Has(tracers.FieldMissed), e.mayMiss, "%s: may miss", m.Name)
	}
}

// kernelExpectations parses root's matrix/kernels.tsv.
func kernelExpectations(t *testing.T, root string) matrix.Expectations {
	f, err := os.Open(filepath.Join(root, "matrix/kernels.tsv"))
	require.NoError(t, err)
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	require.NoError(t, err)
	return exp
}

// kernels.tsv expects every mechanism to skip on a kernel older than its
// Needs.Since; a selector's VERSION without a minor (sid:7) is any 7.x.
func TestKernelsBeforeNeedsSkip(t *testing.T) {
	older := 0
	for _, k := range kernelExpectations(t, sourceTree(t)).Kernels {
		v, exact := selectorVersion(t, k.Selector)
		for _, m := range tracers.Mechanisms() {
			since := m.Needs.Since
			if v.Major < since.Major || exact && v.Before(since) {
				older++
				assert.False(t, k.Supports[m.Name], "kernels.tsv says %s runs %s, which needs %s", k.Selector, m.Name, m.Needs)
			}
		}
	}
	assert.NotZero(t, older, "kernels.tsv has kernels older than some mechanism's Needs.Since")
}

// selectorVersion parses VERSION of SUITE:VERSION[:FLAVOUR]; exact is false
// when it has no minor.
func selectorVersion(t *testing.T, selector string) (v tracers.KernelVersion, exact bool) {
	parts := strings.Split(selector, ":")
	require.GreaterOrEqual(t, len(parts), 2, "selector %q", selector)
	major, minor, exact := strings.Cut(parts[1], ".")
	var err error
	v.Major, err = strconv.Atoi(major)
	require.NoError(t, err, "selector %q", selector)
	if exact {
		v.Minor, err = strconv.Atoi(minor)
		require.NoError(t, err, "selector %q", selector)
	}
	return v, exact
}

// mechanismRow matches a row of the README's mechanism table: the name
// and the needs column.
var mechanismRow = regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| [^|]* \\| ([^|]*) \\|$")

// The README's mechanism table has one row per registered mechanism, in
// registry order, and its needs column names the declared first release.
func TestREADMEMechanismTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(sourceTree(t), "README.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "| mechanism | how it keeps the entry time | needs |\n")
	require.True(t, ok, "README.md has the mechanism table")
	table, _, _ = strings.Cut(table, "\n\n")
	rows := mechanismRow.FindAllStringSubmatch(table, -1)
	var names []string
	for _, row := range rows {
		names = append(names, row[1])
	}
	require.Equal(t, mechanismNames(), names, "README's mechanism table vs tracers' registry")
	for i, m := range tracers.Mechanisms() {
		assert.Contains(t, rows[i][2], "Linux "+m.Needs.Since.String(), "README's needs of %s (%s)", m.Name, m.Needs)
	}
}

// mechanismNames returns the registry's names, best first.
func mechanismNames() []string {
	var names []string
	for _, m := range tracers.Mechanisms() {
		names = append(names, m.Name)
	}
	return names
}

// sourceTree returns the repository's root: the parent of this package's
// directory, where `go test` runs it, or where it was compiled (a test
// binary run elsewhere, e.g. in a guest sharing the host's /). It skips t,
// saying so, when neither holds the sources.
func sourceTree(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	for _, root := range []string{"..", filepath.Dir(filepath.Dir(file))} {
		if _, err := os.Stat(filepath.Join(root, "matrix/kernels.tsv")); err == nil {
			return root
		}
	}
	t.Skipf("checks the source tree, which is neither at .. nor at %s", filepath.Dir(filepath.Dir(file)))
	return ""
}
