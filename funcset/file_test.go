package funcset

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetFileRoundTrip(t *testing.T) {
	inv := recordedInventory(t)
	readpath := recordedReadpath(t, inv)
	n5, err := inv.Draw(5, Kinds, readpath)
	require.NoError(t, err)
	for _, s := range []*Set{readpath, n5} {
		path := filepath.Join(t.TempDir(), s.Name+".txt")
		require.NoError(t, WriteFile(path, s))
		again, err := ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, s, again)
	}

	var b strings.Builder
	require.NoError(t, Write(&b, n5))
	lines := strings.Split(b.String(), "\n")
	assert.Equal(t, []string{magic, "# name: n5", "# kernel: 7.2.13+deb14-amd64",
		"# kinds: fentry fexit kprobe kretprobe kprobe.multi function_graph"}[:3], lines[:3])
	assert.Equal(t, "# kinds: fentry fexit kprobe kprobe.multi function_graph", lines[3])
	assert.Equal(t, "+\t"+n5.Members[0].Name+"\trank 1 of 21 candidates", lines[6])
}

func TestReadRefusesMalformedFiles(t *testing.T) {
	header := magic + "\n# name: n1\n# kernel: 7.2\n# kinds: fentry\n# method: m\n# inputs: i\n"
	for in, want := range map[string]string{
		"":                            "empty function set file",
		"# tracebench function set\n": `line 1: "# tracebench function set" is not "# tracebench function set, format 1"`,
		header + "+\tvfs_read\n":      `line 7: "+\tvfs_read" is not "+|-<tab>function<tab>reason"`,
		header + "+\tvfs read\tx\n":   `line 7: "+\tvfs read\tx" is not "+|-<tab>function<tab>reason"`,
		header + "+\t\tx\n":           `line 7: "+\t\tx" is not "+|-<tab>function<tab>reason"`,
		header + "*\tvfs_read\tx\n":   `line 7: "*" is neither + (member) nor - (excluded) in "*\tvfs_read\tx"`,
		header + "+\ta\tx\n-\ta\ty\n": "line 8: function a listed twice",
		header + "-\ta\tx\n+\tb\ty\n": "line 8: member b after excluded functions",
		header + "# name: n2\n":       `line 7: header key "name" given twice`,
		header + "# size: 3\n":        `line 7: unknown header key "size"`,
		header + "#name: n2\n":        `line 7: header "#name: n2" is not "# key: value"`,
		strings.Replace(header, "# kinds: fentry", "# kinds: fentry kretprobe", 1): `line 4: unknown attach kind "kretprobe" (known: fentry fexit kprobe kprobe.multi function_graph)`,
		strings.Replace(header, "# kinds: fentry", "# kinds: fentry fentry", 1):    `line 4: attach kind "fentry" given twice`,
		strings.Replace(header, "# inputs: i\n", "", 1):                            `function set "n1" has no "inputs" header line`,
	} {
		_, err := Read(strings.NewReader(in))
		assert.EqualError(t, err, want, "%q", in)
	}
	_, err := ReadFile(filepath.Join(t.TempDir(), "missing.txt"))
	assert.ErrorContains(t, err, "missing.txt: no such file or directory")
}

func TestWriteRefusesWhatCannotReadBack(t *testing.T) {
	ok := Set{Name: "n1", Kernel: "7.2", Kinds: []Kind{Fentry}, Method: "m", Inputs: "i",
		Members: []Entry{{Name: "vfs_read", Reason: "r"}}}
	for _, c := range []struct {
		edit func(s *Set)
		want string
	}{
		{func(s *Set) { s.Name = "n 1" }, `function set name "n 1" is empty or holds blanks`},
		{func(s *Set) { s.Name = "" }, `function set name "" is empty or holds blanks`},
		{func(s *Set) { s.Method = "a\nb" }, `function set "n1": method "a\nb" holds a line break`},
		{func(s *Set) { s.Members[0].Name = "vfs read" }, `function set n1: function name "vfs read" is empty or holds blanks`},
		{func(s *Set) { s.Members[0].Reason = "a\nb" }, `function set n1: reason "a\nb" of vfs_read holds a line break`},
		{func(s *Set) { s.Excluded = []Entry{{Name: "vfs_read", Reason: "x"}} }, "function set n1: function vfs_read listed twice"},
	} {
		s := ok
		s.Members = []Entry{ok.Members[0]}
		c.edit(&s)
		assert.EqualError(t, Write(&strings.Builder{}, &s), c.want)
	}
}
