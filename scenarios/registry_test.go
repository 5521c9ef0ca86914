package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
	var names, bpfSources []string
	for _, m := range tracers.Mechanisms() {
		names = append(names, m.Name)
		if m.Can.BPF {
			bpfSources = append(bpfSources, strings.ReplaceAll(m.Name, "-", "_")+".bpf.c")
		}
	}
	root := sourceTree(t)
	f, err := os.Open(filepath.Join(root, "matrix/kernels.tsv"))
	require.NoError(t, err)
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	require.NoError(t, err)
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

	for name := range declaredUnknowns {
		assert.Contains(t, names, name, "declaredUnknowns names a registered mechanism")
	}
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

// The independent copy in declaredUnknowns agrees with the declarations.
func TestDeclaredUnknownsMatchCapabilities(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		for _, cfg := range []tracers.Config{{}, {Threshold: 1000}} {
			stats, event := m.Can.Blind.Under(cfg)
			u := unknownsOf(m.Name, cfg)
			assert.Equal(t, stats.String(), u.stats.String(), "%s %+v: Stats", m.Name, cfg)
			assert.Equal(t, event.String(), u.event.String(), "%s %+v: Event", m.Name, cfg)
			assert.Equal(t, m.Can.Blind.EventMay.String(), u.eventMay.String(), "%s: Event at times", m.Name)
		}
	}
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
