package scenarios

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
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

// goGenerate matches a BPF object's go:generate line of tracers/
// (internal/bpfgen) and the source it compiles.
var goGenerate = regexp.MustCompile(`(?m)^//go:generate go run tracebench/internal/bpfgen .*\.\./bpf/(\S+)\.bpf\.c\b`)

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
		if _, ok := keepsEntry[m.Can.State]; !ok {
			t.Errorf("%s declares state %v, which keepsEntry does not describe", m.Name, m.Can.State)
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
// and the needs column (the where column after it is package matrix's).
// mechanismNames returns the registry's names, best first.
func mechanismNames() []string {
	var names []string
	for _, m := range tracers.Mechanisms() {
		names = append(names, m.Name)
	}
	return names
}

// sourceTree returns the repository's root: the parent of this package's
// directory, where `go test` runs it, the working directory (a guest runs
// the binary in the root), or where it was compiled (without -trimpath).
// It skips t, saying so, when none holds the sources.
func sourceTree(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	for _, root := range []string{"..", ".", filepath.Dir(filepath.Dir(file))} {
		if _, err := os.Stat(filepath.Join(root, "matrix/kernels.tsv")); err == nil {
			return root
		}
	}
	t.Skipf("checks the source tree, which is not at .., . or %s", filepath.Dir(filepath.Dir(file)))
	return ""
}

// namedByData are the files outside a mechanism's own that may name one in
// a string literal, and why.
var namedByData = map[string]string{
	"bench/suite/suite.go":   "floors are attach kinds, one of which, fsession, is also a mechanism's name",
	"bench/floors/floors.go": "floors are attach kinds, one of which, fsession, is also a mechanism's name",
	"funcset/kinds.go":       "attach kinds by section, one of which, fsession, is also a mechanism's name",
	"bench/report/kernelchanges.go": "kernel changes act on attach kinds, one of which, fsession, is also a" +
		" mechanism's name",
	"bench/report/overhead.go": "the report reads mechanisms from benchmark output; fentry-fexit is its" +
		" Reference, which the report divides by",
}

// namedByDataDirs are packages that take mechanism names from data
// (outcome JSON, kernels.tsv, benchmark output) and never from the
// registry: names in their tests are sample data.
var namedByDataDirs = []string{"matrix", "cmd/matrix", "bench/report", "cmd/bench"}

// No Go file but a mechanism's own (tracers/<name>.go, tracers/<name>_*.go)
// names it in a string literal, alone or among others: whatever is known
// of a mechanism is in its declaration, which every consumer reads, so
// adding one touches the places the README lists and nothing else.
func TestMechanismsNamedOnlyInTheirFiles(t *testing.T) {
	root := sourceTree(t)
	byName := map[string]bool{}
	for _, m := range tracers.Mechanisms() {
		byName[m.Name] = true
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_bpfel.go") || namedByData[rel] != "" ||
			strings.HasSuffix(rel, "_test.go") && slices.Contains(namedByDataDirs, filepath.Dir(rel)) {
			return nil
		}
		for _, lit := range stringLiterals(t, path) {
			for _, name := range mechanismsIn(lit.value, byName) {
				if owner(rel) != name {
					t.Errorf("%s:%d names mechanism %s (%q): read its declaration instead", rel, lit.line, name, lit.value)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}

type literal struct {
	value string
	line  int
}

// stringLiterals returns the string literals of the Go file at path.
func stringLiterals(t *testing.T, path string) []literal {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var lits []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
			v, err := strconv.Unquote(b.Value)
			require.NoError(t, err)
			lits = append(lits, literal{v, fset.Position(b.Pos()).Line})
		}
		return true
	})
	return lits
}

// mechanismWord is a word of a mechanism name's alphabet.
var mechanismWord = regexp.MustCompile(`[a-z0-9-]+`)

// mechanismsIn returns the mechanisms s names: s itself, or two or more
// names among its words (a list of them).
func mechanismsIn(s string, byName map[string]bool) []string {
	if byName[s] {
		return []string{s}
	}
	var names []string
	for _, w := range mechanismWord.FindAllString(s, -1) {
		if byName[w] && !slices.Contains(names, w) {
			names = append(names, w)
		}
	}
	if len(names) < 2 {
		return nil
	}
	return names
}

// owner returns the mechanism whose own file rel is, or "": the one whose
// name (with _ for -) is the longest prefix of a file of tracers/.
func owner(rel string) string {
	dir, base := filepath.Split(rel)
	if dir != "tracers/" {
		return ""
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".go"), "_test")
	var best string
	for _, m := range tracers.Mechanisms() {
		own := strings.ReplaceAll(m.Name, "-", "_")
		if (stem == own || strings.HasPrefix(stem, own+"_")) && len(m.Name) > len(best) {
			best = m.Name
		}
	}
	return best
}
