package matrix

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
)

// committedTable is kernels.tsv, parsed.
func committedTable(t *testing.T) Expectations {
	f, err := os.Open("kernels.tsv")
	require.NoError(t, err)
	defer f.Close()
	exp, err := ParseExpectations(f)
	require.NoError(t, err)
	return exp
}

// The table must state an expectation for every registered mechanism and
// nothing else, or the matrix cannot judge a run.
func TestKernelsTSVCoversTheRegistry(t *testing.T) {
	exp := committedTable(t)
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
		"trixie:6.12\tfull\tno\tyes\n# between\nexperimental:7\tbinary-only\tyes\twarns\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"fsession", "fentry-fexit"}, exp.Mechanisms)
	assert.Equal(t, []Kernel{
		{Selector: "trixie:6.12", Packages: Full, Supports: map[string]bool{"fsession": false, "fentry-fexit": true}},
		{Selector: "experimental:7", Packages: BinaryOnly, Supports: map[string]bool{"fsession": true, "fentry-fexit": true},
			Warns: map[string]bool{"fentry-fexit": true}},
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
		{"bad value", header + "trixie:6.12\tfull\tmaybe\tyes\n", `trixie:6.12 for fsession is "maybe", want yes, no, crashes or warns`},
		{"twice", header + "trixie:6.12\tfull\tno\tyes\ntrixie:6.12\tfull\tno\tyes\n", "line 3: kernel trixie:6.12 listed twice"},
		{"other arch by vm/run.sh", header + "sid:7:arm64\tfull\tno\tyes\n",
			"sid:7:arm64 is an arm64 kernel, which vm/run.sh cannot boot: packages initramfs, not full"},
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
		"sid:7": "amd64", "sid:7:rt-amd64": "amd64", "sid:7:cloud-amd64": "amd64", "sid:7:arm64": "arm64",
		"sid:7:rt-arm64": "arm64", "sid:7:arm64-16k": "arm64", "sid:7:riscv64": "riscv64", "sid:7:s390x": "s390x",
		"sid:7:powerpc64le": "ppc64el", "sid:7:powerpc64le-64k": "ppc64el",
	} {
		assert.Equal(t, want, Kernel{Selector: selector}.Arch().Debian, selector)
	}
	assert.Equal(t, "ppc64le", Kernel{Selector: "sid:7:powerpc64le-64k"}.Arch().GOARCH)
}

func TestFlavourArchRefuses(t *testing.T) {
	for flavour, says := range map[string]string{
		"armmp":       `kernel flavour "armmp" names no architecture tracebench runs on (known: amd64, arm64, powerpc64le`,
		"ppc64el":     `kernel flavour "ppc64el" names no architecture`, // Debian's architecture, not a flavour
		"64k":         `kernel flavour "64k" names no architecture`,
		"amd64-arm64": `kernel flavour "amd64-arm64" names more than one architecture`,
	} {
		_, err := FlavourArch(flavour)
		assert.ErrorContains(t, err, says)
	}
	_, err := ParseExpectations(strings.NewReader("kernel\tpackages\tm\nsid:7:armmp\tinitramfs\tyes\n"))
	assert.ErrorContains(t, err, `line 2: sid:7:armmp: kernel flavour "armmp" names no architecture`)
}

// Every architecture of the table's kernels is one the module has BPF
// objects for (internal/arches' table, which bpfgen reads), or the scenario binary for it
// would not build.
func TestKernelsTSVArchesHaveBPFObjects(t *testing.T) {
	arches := map[Arch]bool{}
	for _, k := range committedTable(t).Kernels {
		arches[k.Arch()] = true
	}
	for arch := range arches {
		cmd := exec.Command("go", "list", "-f", "{{join .GoFiles \" \"}}", "tracebench/tracers/internal/bpfobj")
		cmd.Env = append(os.Environ(), "GOARCH="+arch.GOARCH, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "GOARCH=%s go list: %s", arch.GOARCH, out)
		assert.Regexp(t, `_bpfe[lb]\.go`, string(out), "kernels.tsv has %s kernels, for which tracers has no BPF "+
			"objects (add it to internal/arches/arches.tsv, then make generate)", arch.Debian)
	}
}

// kernelRow matches a row of README.md's table of the kernels: the
// selector.
var kernelRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ")

// README.md's table says why each kernel of the table is in the matrix,
// in the table's order.
func TestREADMEKernelTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "| kernel | why it is in the matrix |\n")
	require.True(t, ok, "README.md has the table of kernels")
	table, _, _ = strings.Cut(table, "\n\n")
	var rows, selectors []string
	for _, m := range kernelRow.FindAllStringSubmatch(table, -1) {
		rows = append(rows, m[1])
	}
	for _, k := range committedTable(t).Kernels {
		selectors = append(selectors, k.Selector)
	}
	assert.Equal(t, selectors, rows, "README.md's kernels vs kernels.tsv's")
}

// `make check ARCH=<arch>` boots every architecture of Arches: the test
// binaries built for its GOARCH into .cache/bin/<arch>/, its QEMU
// installed, its kernels.tsv row (sid's newest 7.x of the architecture's
// flavour) fetched and run by cmd/matrix, which boots it with
// vm/run-initramfs.sh (the row's packages); amd64's by virtme-ng, as CI
// runs it. An architecture the Makefile does not know is refused, naming
// it and the Makefile's ARCHES, read from Arches' table.
func TestMakeCheckBootsEveryArch(t *testing.T) {
	table := committedTable(t)
	for _, a := range Arches {
		t.Run(a.Debian, func(t *testing.T) {
			out, err := exec.Command("make", "-n", "-C", "..", "check", "ARCH="+a.Debian).CombinedOutput()
			require.NoError(t, err, "make -n check ARCH=%s: %s", a.Debian, out)
			selector, bin, build, packages := "sid:7", ".cache/bin", "go test", Full
			if a.Debian != HostArch {
				selector, bin = "sid:7:"+a.Flavour, ".cache/bin/"+a.Debian
				build, packages = "GOARCH="+a.GOARCH+" go test", Initramfs
				assert.Contains(t, string(out), "vm/deps.sh --arch "+a.Debian+"\n")
			}
			assert.Contains(t, string(out), build+" -c -o "+bin+"/scenarios.test ./scenarios\n")
			assert.Contains(t, string(out), build+" -c -o "+bin+"/tracebench.test ./cmd/tracebench\n")
			assert.Contains(t, string(out), "vm/kernel.sh "+selector+" ")
			assert.Contains(t, string(out), "go run ./cmd/matrix -only "+selector+" ")
			i := slices.IndexFunc(table.Kernels, func(k Kernel) bool { return k.Selector == selector })
			require.GreaterOrEqual(t, i, 0, "kernels.tsv has a row %s", selector)
			assert.Equal(t, a, table.Kernels[i].Arch())
			assert.Equal(t, packages, table.Kernels[i].Packages)
		})
	}
	out, err := exec.Command("make", "-n", "-C", "..", "check", "ARCH=ppc64le").CombinedOutput()
	assert.Error(t, err)
	var names []string
	for _, a := range Arches {
		names = append(names, a.Debian)
	}
	assert.Contains(t, string(out), "ARCH=ppc64le is none of "+strings.Join(names, " "), "the Makefile's ARCHES are Arches' table")
}

func TestOnlyKeepsTheNamedColumns(t *testing.T) {
	exp := Expectations{Mechanisms: []string{"a", "b", "c"}, Kernels: []Kernel{{Selector: "sid:7"}}}
	only, err := exp.Only([]string{"c", "a"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c"}, only.Mechanisms, "the table's order")
	assert.Equal(t, exp.Kernels, only.Kernels)
	assert.Equal(t, []string{"a", "b", "c"}, exp.Mechanisms, "the table itself is unchanged")
	_, err = exp.Only([]string{"a", "fsesion"})
	assert.EqualError(t, err, `mechanism "fsesion" is no column of the table (a, b, c)`)
	_, err = exp.Only(nil)
	assert.Error(t, err)
}
