package report

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchmarkFunc matches a benchmark function of package bench.
var benchmarkFunc = regexp.MustCompile(`(?m)^func Benchmark(\w+)\(b \*testing\.B\)`)

// TestFamiliesAreComplete: every family is documented, has its templates
// and names benchmarks package bench has, each run in every round or, if
// Once, in the first; every benchmark there is in a family (cmd/bench runs
// no other), and a family that shares one with another reads it alike
// (growth is multi reduced) and shows only its own part.
func TestFamiliesAreComplete(t *testing.T) {
	sources, err := filepath.Glob("../*_test.go")
	require.NoError(t, err)
	var src []byte
	for _, f := range sources {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src = append(src, b...)
	}
	seen := map[string]string{}
	for _, f := range Families {
		assert.NotEmpty(t, f.Doc, f.Name)
		assert.NotNil(t, f.summarize, f.Name)
		for _, block := range []string{".lead", ".body"} {
			assert.NotNil(t, templates.Lookup(f.Name+block), "templates/%s.md.tmpl defines %q", f.Name, f.Name+block)
		}
		for _, b := range f.Benchmarks {
			assert.Regexp(t, regexp.MustCompile(`(?m)^func Benchmark`+b+`\(b \*testing\.B\)`), string(src), "package bench has Benchmark%s", b)
			if other, ok := seen[b]; ok {
				g, err := LookupFamily(other)
				require.NoError(t, err)
				assert.Equal(t, reflect.ValueOf(g.summarize).Pointer(), reflect.ValueOf(f.summarize).Pointer(),
					"Benchmark%s in families %s and %s, summarized differently", b, other, f.Name)
				assert.True(t, f.shares(g) && g.shares(f))
			}
			seen[b] = f.Name
			if slices.Contains(f.Once, b) {
				assert.NotRegexp(t, regexp.MustCompile(f.Pattern()), "Benchmark"+b, "the rounds do not run Benchmark%s", b)
			} else {
				assert.Regexp(t, regexp.MustCompile(f.Pattern()), "Benchmark"+b)
			}
		}
		for _, b := range f.Once {
			assert.Contains(t, f.Benchmarks, b, "%s's Once names a benchmark of its Benchmarks", f.Name)
		}
		assert.Equal(t, len(f.Once) > 0, f.Ready != "", "%s: Once processes wait for Ready, and only they", f.Name)
		assert.NotRegexp(t, regexp.MustCompile(f.Pattern()), "BenchmarkOther")
		got, err := LookupFamily(f.Name)
		require.NoError(t, err)
		assert.Same(t, f, got)
	}
	for _, m := range benchmarkFunc.FindAllStringSubmatch(string(src), -1) {
		assert.NotEmpty(t, seen[m[1]], "Benchmark%s of package bench is in no family of Families", m[1])
	}
}
