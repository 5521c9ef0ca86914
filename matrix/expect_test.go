package matrix

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
)

// The table must state an expectation for every registered mechanism and
// nothing else, or the matrix cannot judge a run.
func TestKernelsTSVCoversTheRegistry(t *testing.T) {
	f, err := os.Open("kernels.tsv")
	require.NoError(t, err)
	defer f.Close()
	exp, err := ParseExpectations(f)
	require.NoError(t, err)

	var registered []string
	for _, m := range tracers.Mechanisms() {
		registered = append(registered, m.Name)
	}
	assert.ElementsMatch(t, registered, exp.Mechanisms, "kernels.tsv columns vs tracers' registry")
	// The issue asks for at least 6.12, 6.18, 7.0, the newest stable and
	// the newest release candidate.
	assert.GreaterOrEqual(t, len(exp.Kernels), 5, "kernels")
}

const header = "kernel\tpackages\tfsession\tfentry-fexit\n"

func TestParseExpectations(t *testing.T) {
	exp, err := ParseExpectations(strings.NewReader("# comment\n\n" + header +
		"trixie:6.12\tfull\tno\tyes\n# between\nexperimental:7\tbinary-only\tyes\tyes\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"fsession", "fentry-fexit"}, exp.Mechanisms)
	assert.Equal(t, []Kernel{
		{Selector: "trixie:6.12", Packages: Full, Supports: map[string]bool{"fsession": false, "fentry-fexit": true}},
		{Selector: "experimental:7", Packages: BinaryOnly, Supports: map[string]bool{"fsession": true, "fentry-fexit": true}},
	}, exp.Kernels)
}

func TestParseExpectationsRefuses(t *testing.T) {
	for _, tc := range []struct{ name, input, err string }{
		{"empty", "# only comments\n", "no kernel rows"},
		{"header only", header, "no kernel rows"},
		{"bad header", "selector\tpackages\tfsession\n", "line 1: header must be kernel, packages"},
		{"no mechanisms", "kernel\tpackages\n", "header must be"},
		{"repeated mechanism", "kernel\tpackages\tfsession\tfsession\n", `mechanism column 2 is empty or repeated: "fsession"`},
		{"short row", header + "trixie:6.12\tfull\tno\n", "line 2: 3 tab-separated fields, want 4"},
		{"spaces not tabs", header + "trixie:6.12 full no yes\n", "1 tab-separated fields, want 4"},
		{"no version", header + "trixie\tfull\tno\tyes\n", `kernel "trixie" is not SUITE:VERSION`},
		{"bad packages", header + "trixie:6.12\tsplit\tno\tyes\n", `packages "split" is none of full, binary-only, initramfs`},
		{"bad value", header + "trixie:6.12\tfull\tmaybe\tyes\n", `trixie:6.12 for fsession is "maybe", want yes or no`},
		{"twice", header + "trixie:6.12\tfull\tno\tyes\ntrixie:6.12\tfull\tno\tyes\n", "line 3: kernel trixie:6.12 listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseExpectations(strings.NewReader(tc.input))
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

func TestSelect(t *testing.T) {
	exp, err := ParseExpectations(strings.NewReader(header +
		"a:1\tfull\tno\tyes\nb:2\tfull\tno\tyes\nc:3\tfull\tno\tyes\n"))
	require.NoError(t, err)
	selectors := func(ks []Kernel) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.Selector)
		}
		return out
	}

	all, err := exp.Select(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a:1", "b:2", "c:3"}, selectors(all))

	some, err := exp.Select([]string{"c:3", "a:1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a:1", "c:3"}, selectors(some), "in the table's order")

	_, err = exp.Select([]string{"a:1", "d:4"})
	assert.EqualError(t, err, `kernel "d:4" is not in the table`)
	assert.True(t, slices.Equal(selectors(exp.Kernels), []string{"a:1", "b:2", "c:3"}), "Select leaves the table alone")
}

func TestKernelArch(t *testing.T) {
	for selector, want := range map[string]string{
		"sid:7": "amd64", "sid:7:rt-amd64": "amd64", "sid:7:cloud-amd64": "amd64", "sid:7:arm64": "arm64", "sid:7:rt-arm64": "arm64",
	} {
		assert.Equal(t, want, Kernel{Selector: selector}.Arch(), selector)
	}
}
