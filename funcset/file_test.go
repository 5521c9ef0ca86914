package funcset

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

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
		"":                                      "empty: want function names, one a line, or a function set",
		"# tracebench function set, format 2\n": `line 1: a function set of another format: this tracebench reads "# tracebench function set, format 1"`,
		header + "+\tvfs_read\n":                `line 7: an entry is "+|-<tab>function<tab>reason"`,
		header + "+\tvfs read\tx\n":             "line 7: the function name is not a kernel symbol (letters, digits, _ and the . of compiler clones, not starting with a digit)",
		header + "+\t\tx\n":                     "line 7: the function name is empty",
		header + "+\t" + strings.Repeat("f", 512) + "\tx\n":                          "line 7: the function name is 512 bytes or longer (KSYM_NAME_LEN)",
		header + "*\tvfs_read\tx\n":                                                  "line 7: an entry starts with + (a member) or - (excluded), then a tab",
		header + "+\ta\tx\n-\ta\ty\n":                                                "line 8: the function (a) is listed twice, first on line 7",
		header + "+\ta.isra.0\tx\n-\ta.isra.0\ty\n":                                  "line 8: the function (not shown: not a C identifier) is listed twice, first on line 7",
		header + "-\ta\tx\n+\tb\ty\n":                                                "line 8: the member (b) comes after the excluded ones (from line 7): members come first",
		header + "+\ta\tx\n# name: n2\n":                                             `line 8: a "#" line after the entries: the header comes first`,
		header + "# name: n2\n":                                                      "line 7: header key name given twice (first on line 2)",
		header + "# size: 3\n":                                                       "line 7: the key (size) is unknown (known: name, kernel, kinds, method, inputs)",
		header + "# si-ze: 3\n":                                                      "line 7: the key (not shown: not a C identifier) is unknown (known: name, kernel, kinds, method, inputs)",
		header + "#name: n2\n":                                                       `line 7: a header line is "# key: value"`,
		strings.Replace(header, "# name: n1", "# name: n 1", 1):                      "line 2: the name is empty or holds blanks",
		strings.Replace(header, "# kinds: fentry", "# kinds: fentry kretprobe", 1):   "line 4: kind 2 (kretprobe) is not an attach kind (known: fentry fexit kprobe kprobe.multi function_graph)",
		strings.Replace(header, "# kinds: fentry", "# kinds: fentry kprobe.mult", 1): "line 4: kind 2 (not shown: not a C identifier) is not an attach kind (known: fentry fexit kprobe kprobe.multi function_graph)",
		strings.Replace(header, "# kinds: fentry", "# kinds: fentry fentry", 1):      "line 4: attach kind fentry given twice",
		strings.Replace(header, "# kinds: fentry", "# kinds: ", 1):                   "line 4: no attach kind",
		strings.Replace(header, "# inputs: i\n", "", 1):                              `line 5: the header has no "# inputs: " line (it gives each of name, kernel, kinds, method, inputs once, before the entries)`,
		strings.Replace(header, "# inputs: i\n", "", 1) + "+\tvfs_read\tx\n":         `line 6: the header has no "# inputs: " line (it gives each of name, kernel, kinds, method, inputs once, before the entries)`,
		"# nothing\n\n  # here\n":                                                    "lines 1-3 name no function (blank and # lines only)",
		"vfs_read\nvfs_read # again\n":                                               "line 2: the function (vfs_read) is listed twice, first on line 1",
		"vfs_read ksys_read\n":                                                       "line 1: 2 words: a list holds one function a line",
		"ext4_file_read_iter [ext4]\n":                                               `line 1: the function (ext4_file_read_iter) is a module's ("function [module]"): function sets hold vmlinux functions only`,
		"vfs_read\n1st\n":                                                            "line 2: the function name is not a kernel symbol (letters, digits, _ and the . of compiler clones, not starting with a digit)",
		"vfs_read\n\x00\n":                                                           "line 2: binary content (a NUL byte or invalid UTF-8), not text",
		"vfs_read\n\xff\xfe\n":                                                       "line 2: binary content (a NUL byte or invalid UTF-8), not text",
		"vfs_read\n" + strings.Repeat("x", maxLine+1):                                "line 2: longer than 1048576 bytes",
	} {
		_, err := Read(strings.NewReader(in))
		assert.EqualError(t, err, want, "%.200q", in)
	}
}

// The header may be read without entries: Write writes an empty set so.
func TestReadEmptySet(t *testing.T) {
	s := &Set{Name: "n0", Kernel: "7.2", Kinds: []Kind{Fentry}, Method: "m", Inputs: "i"}
	var b strings.Builder
	require.NoError(t, Write(&b, s))
	again, err := Read(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, s, again)
}

func TestReadList(t *testing.T) {
	s, err := Read(strings.NewReader("# grep vfs_ available_filter_functions\r\n  vfs_read\t\n\nksys_read # the syscall's\n" +
		"dput.part.0\n"))
	require.NoError(t, err)
	assert.Equal(t, &Set{Name: "list", Method: "the functions listed, in order", Members: []Entry{
		{Name: "vfs_read", Reason: "line 2"}, {Name: "ksys_read", Reason: "line 4"}, {Name: "dput.part.0", Reason: "line 5"}}}, s)
}

// Read's doc shows both formats: each of its examples reads, and holds
// the functions its lines name.
func TestReadDocExamples(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "file.go", nil, parser.ParseComments)
	require.NoError(t, err)
	var readDoc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Read" {
			readDoc = fn.Doc.Text()
		}
	}
	require.NotEmpty(t, readDoc, "Read's doc comment")
	var examples []string
	for _, b := range new(comment.Parser).Parse(readDoc).Content {
		if code, ok := b.(*comment.Code); ok {
			examples = append(examples, code.Text)
		}
	}
	require.Len(t, examples, 2, "a set file and a list")
	for i, ex := range examples {
		s, err := Read(strings.NewReader(ex))
		require.NoError(t, err, "example %d:\n%s", i+1, ex)
		var names []string
		for line := range strings.Lines(ex) {
			if text, _, _ := strings.Cut(line, "#"); strings.TrimSpace(text) != "" {
				fields := strings.Fields(text)
				names = append(names, fields[min(1, len(fields)-1)])
			}
		}
		got := s.Functions()
		for _, e := range s.Excluded {
			got = append(got, e.Name)
		}
		assert.Equal(t, names, got, "example %d", i+1)
	}
	set, err := Read(strings.NewReader(examples[0]))
	require.NoError(t, err)
	assert.Equal(t, Kinds, set.Kinds, "the set example names every kind")
}

// An error about a file shows its path and the line, never the line:
// tracebench runs as root, and its user may not read the file.
func TestReadFileShowsNoContent(t *testing.T) {
	const shadow = "root:$6$abcdefgh$Zq0nT3Wx9yLkPq:19000:0:99999:7:::"
	header := magic + "\n# name: n1\n# kernel: 7.2\n# kinds: fentry\n# method: m\n# inputs: i\n"
	long := strings.Repeat("secretsecret", maxLine/12+1)
	for _, c := range []struct {
		content, secret string
		line            string // "line N: "
	}{
		{shadow + "\n", shadow, "line 1: "},
		{"vfs_read\n" + shadow + "\n", shadow, "line 2: "},
		{"daemon:*:19000:0:99999:7:::\n" + shadow + "\n", "daemon:*", "line 1: "},
		{"correct horse battery staple\n", "horse", "line 1: "},
		{"pass word\tsecret\n", "secret", "line 1: "},
		{"h\xffunter2\n", "unter2", "line 1: "},
		{"vfs_read\n" + long, "secretsecret", "line 2: "},
		{"vfs_read\n" + strings.Repeat("s", ksymNameLen) + "\n", "sss", "line 2: "},
		{"p4ss.w0rd\np4ss.w0rd\n", "p4ss", "line 2: "},
		{"vfs_read [p4ss-w0rd]\n", "p4ss", "line 1: "},
		{"# tracebench function set, format 1 " + shadow + "\n", "abcdefgh", "line 1: "},
		{"# tracebench function set " + shadow + "\n", "abcdefgh", "line 1: "},
		{magic + "\n# " + shadow + "\n", "abcdefgh", "line 2: "},
		{magic + "\n# pass-word: " + shadow + "\n", "pass", "line 2: "},
		{magic + "\n# name: hunter 2\n", "hunter", "line 2: "},
		{magic + "\n# kinds: fentry hunter$2\n", "hunter", "line 2: "},
		{magic + "\n# kinds:\n", "kinds:", "line 2: "},
		{header + shadow + "\n", "abcdefgh", "line 7: "},
		{header + "+\t" + shadow + "\treason\n", "abcdefgh", "line 7: "},
		{header + "+\tvfs_read\tx\n# " + shadow + "\n", "abcdefgh", "line 8: "},
		{header + "-\tvfs_read\tx\n+\tp4ss.w0rd\t" + shadow + "\n", "p4ss", "line 8: "},
		{header + "+\tvfs_read\t\xff" + shadow + "\n", "abcdefgh", "line 7: "},
		{strings.Replace(header, "# inputs: i\n", "", 1) + "+\tvfs_read\t" + shadow + "\n", "abcdefgh", "line 6: "},
	} {
		path := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(path, []byte(c.content), 0o600))
		_, err := ReadFile(path)
		require.Error(t, err, "%.100q", c.content)
		assert.True(t, strings.HasPrefix(err.Error(), path+": "+c.line), "%.100q: %v", c.content, err)
		assert.NotContains(t, err.Error(), c.secret, "%.100q", c.content)
		assert.Less(t, len(err.Error()), len(path)+300, "%.100q: %v", c.content, err)
	}
}

// ReadFile's errors about the file itself name it and the rule.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("vfs_read\n"), 0o644))
	for path, want := range map[string]string{
		dir:                           dir + ": a directory, not a file of function names",
		empty:                         empty + ": empty: want function names, one a line, or a function set",
		filepath.Join(dir, "missing"): filepath.Join(dir, "missing") + ": cannot open: no such file or directory",
		filepath.Join(file, "x"):      filepath.Join(file, "x") + ": cannot open: not a directory",
	} {
		_, err := ReadFile(path)
		assert.EqualError(t, err, want)
	}
	_, err := ReadFile(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = Read(io.MultiReader(strings.NewReader("vfs_read\nksys_read\n"), iotest.ErrReader(syscall.EIO)))
	assert.EqualError(t, err, "line 3: reading: input/output error")
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
		{func(s *Set) { s.Method = "a\nb" }, `function set "n1": method "a\nb" holds a line break, a NUL byte or invalid UTF-8`},
		{func(s *Set) { s.Kernel = "7.2\xff" }, `function set "n1": kernel "7.2\xff" holds a line break, a NUL byte or invalid UTF-8`},
		{func(s *Set) { s.Members[0].Name = "vfs read" }, `function set n1: function name "vfs read" is not a kernel symbol (letters, digits, _ and the . of compiler clones, not starting with a digit)`},
		{func(s *Set) { s.Members[0].Name = "" }, `function set n1: function name "" is empty`},
		{func(s *Set) { s.Members[0].Reason = "a\nb" }, `function set n1: reason "a\nb" of vfs_read holds a line break, a NUL byte or invalid UTF-8`},
		{func(s *Set) { s.Members[0].Reason = "a\x00b" }, `function set n1: reason "a\x00b" of vfs_read holds a line break, a NUL byte or invalid UTF-8`},
		{func(s *Set) { s.Excluded = []Entry{{Name: "vfs_read", Reason: "x"}} }, "function set n1: function vfs_read listed twice"},
	} {
		s := ok
		s.Members = []Entry{ok.Members[0]}
		c.edit(&s)
		assert.EqualError(t, Write(&strings.Builder{}, &s), c.want)
	}
}
