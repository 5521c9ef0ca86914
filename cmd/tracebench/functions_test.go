package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/funcset"
	"tracebench/tracers"
)

func TestParseFunctions(t *testing.T) {
	for arg, want := range map[string]functionsSpec{
		"vfs_read":      {pattern: "vfs_read"},
		"vfs_*":         {pattern: "vfs_*"},
		"*_read[sv]":    {pattern: "*_read[sv]"},
		"@sets/n100":    {file: "sets/n100"},
		"@/abs/n 1.txt": {file: "/abs/n 1.txt"},
	} {
		got, err := parseFunctions(arg)
		require.NoError(t, err, arg)
		assert.Equal(t, want, got, arg)
		assert.Equal(t, arg, got.String(), "printed as given")
		assert.True(t, got.given())
	}
	assert.False(t, functionsSpec{}.given())
}

func TestParseFunctionsRejects(t *testing.T) {
	for arg, want := range map[string]string{
		"":          "want a pattern of kernel function names (e.g. 'vfs_*') or @FILE",
		"@":         "want @FILE, the path of a file of function names, after @",
		"vfs_[read": `pattern "vfs_[read" is malformed (want *, ?, [...] and \ as in shell globs): syntax error in pattern`,
		`vfs_\`:     `pattern "vfs_\\" is malformed`,
		"vfs_read ksys_read": `pattern "vfs_read ksys_read" holds a blank or control character, which no function ` +
			"name has",
		"vfs_read\n": `pattern "vfs_read\n" holds a blank`,
	} {
		_, err := parseFunctions(arg)
		assert.ErrorContains(t, err, want, "%q", arg)
		_, err = parseTrace([]string{"--functions", arg})
		assert.ErrorContains(t, err, "invalid value "+strconv.Quote(arg)+" for flag -functions: ",
			"%q: the flag package names the flag and value", arg)
	}
}

func TestParseTraceFunctions(t *testing.T) {
	o, err := parseTrace([]string{"--functions", "vfs_*"})
	require.NoError(t, err)
	assert.Equal(t, functionsSpec{pattern: "vfs_*"}, o.functions)
	assert.Equal(t, "auto", o.mechanism)
	assert.Nil(t, o.config().Functions, "the functions are built for the mechanism when it is tried")

	for _, m := range tracers.Mechanisms() {
		_, err := parseTrace([]string{"--functions", "vfs_*", "--mechanism", m.Name})
		if m.Can.Functions.Many {
			assert.NoError(t, err, m.Name)
			continue
		}
		assert.EqualError(t, err, "--functions vfs_*: mechanism "+m.Name+" traces vfs_read alone; trace many "+
			"functions with one of "+strings.Join(names(multiMechanisms()), ", ")+", or auto", m.Name)
	}
}

// auto with --functions tries, in registry order, what the declarations
// say traces many functions, counts in BPF and observes every field.
func TestAutoWithFunctionsTriesMulti(t *testing.T) {
	var want []string
	for _, m := range tracers.Mechanisms() {
		b := m.Can.Blind
		if m.Can.Functions.Many && m.Can.BPF && b.Stats == 0 && b.StatsAtZero == 0 && b.Event == 0 {
			want = append(want, m.Name)
		}
	}
	ms, err := mechanisms("auto", functionsSpec{pattern: "vfs_*"})
	if len(want) == 0 {
		assert.EqualError(t, err, "--functions vfs_*: no registered mechanism traces many functions")
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, names(ms))
	for _, m := range ms {
		assert.NotEmpty(t, m.Can.Functions.Kinds, "%s: the kinds its sets are built for", m.Name)
	}
	assert.Contains(t, traceUsage, "or, with --functions, of\n                        "+strings.Join(want, ", ")+"\n")
}

// testInventory is a kernel of a few functions: do_exit never returns
// (the kernel refused fexit), netlbl_init is in BTF alone.
func testInventory() (*funcset.Inventory, error) {
	inv := &funcset.Inventory{Kernel: "7.2.13-test", Refused: map[funcset.Kind]map[string]string{
		funcset.Fexit: {"do_exit": "the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn " +
			"function 'do_exit' is rejected."}}}
	var err error
	inv.BTF, err = funcset.ParseBTFList(strings.NewReader("vfs_read\nvfs_readv\nksys_read\ndo_exit\nnetlbl_init\n"))
	if err != nil {
		return nil, err
	}
	inv.Ftrace, err = funcset.ParseFilterFunctions(strings.NewReader("vfs_read\nvfs_readv\nksys_read\ndo_exit\n"))
	inv.KprobeBlacklist = []funcset.FtraceEntry{}
	return inv, err
}

func multi(kinds ...funcset.Kind) tracers.Mechanism {
	return tracers.Mechanism{Name: "a-multi-mechanism",
		Can: tracers.Capabilities{Functions: tracers.FunctionSupport{Many: true, Kinds: kinds}}}
}

func setsOf(t *testing.T, arg string, verbose *bytes.Buffer) *functionSets {
	spec, err := parseFunctions(arg)
	require.NoError(t, err)
	return newFunctionSets(spec, testInventory, verbose)
}

func TestGlobFunctions(t *testing.T) {
	var notes, verbose bytes.Buffer
	fs := setsOf(t, "vfs_*", &verbose)
	got, err := fs.forMechanism(multi(funcset.Fentry, funcset.Fexit), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"vfs_read", "vfs_readv"}, got)
	assert.Empty(t, notes.String())

	got, err = setsOf(t, "*", &verbose).forMechanism(multi(funcset.Fentry, funcset.Fexit), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"ksys_read", "vfs_read", "vfs_readv"}, got, "netlbl_init is in BTF alone")
	assert.Equal(t, "tracebench: --functions *: 1 of the 4 matching functions left out: a-multi-mechanism cannot "+
		"attach them with fentry and fexit: do_exit (fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret "+
		"to __noreturn function 'do_exit' is rejected.; matches *)\n", notes.String())
	assert.Equal(t, "tracebench: left out do_exit: fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret "+
		"to __noreturn function 'do_exit' is rejected.; matches *\n", verbose.String())

	notes.Reset()
	got, err = setsOf(t, "*", &verbose).forMechanism(multi(funcset.KprobeMulti), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"do_exit", "ksys_read", "vfs_read", "vfs_readv"}, got, "kprobe.multi attaches do_exit")
	assert.Empty(t, notes.String())
}

func TestGlobFunctionsEmpty(t *testing.T) {
	var notes bytes.Buffer
	_, err := setsOf(t, "nfs_*", &notes).forMechanism(multi(funcset.Fentry), &notes)
	assert.EqualError(t, err, "--functions nfs_*: no function of this kernel's BTF and available_filter_functions "+
		"matches")
	_, err = setsOf(t, "netlbl_init", &notes).forMechanism(multi(funcset.KprobeMulti), &notes)
	assert.EqualError(t, err, "--functions netlbl_init: no function of this kernel's BTF and "+
		"available_filter_functions matches", "a function ftrace cannot patch is no candidate")
	_, err = setsOf(t, "do_e?it", &notes).forMechanism(multi(funcset.Fexit), &notes)
	assert.EqualError(t, err, "--functions do_e?it: a-multi-mechanism can attach none of the 1 matching functions "+
		"with fexit: do_exit (fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn "+
		"function 'do_exit' is rejected.; matches do_e?it)")
	assert.Empty(t, notes.String())
}

// writeSet writes a set file of members (and one excluded candidate)
// built on kernel.
func writeSet(t *testing.T, kernel string, members ...string) string {
	s := &funcset.Set{Name: "mine", Kernel: kernel, Kinds: funcset.Kinds, Method: "by hand", Inputs: "none",
		Excluded: []funcset.Entry{{Name: "do_exit", Reason: "never returns"}}}
	for _, m := range members {
		s.Members = append(s.Members, funcset.Entry{Name: m, Reason: "chosen"})
	}
	path := filepath.Join(t.TempDir(), "mine.set")
	require.NoError(t, funcset.WriteFile(path, s))
	return path
}

func TestSetFileFunctions(t *testing.T) {
	var notes bytes.Buffer
	path := writeSet(t, "7.2.13-test", "vfs_readv", "vfs_read")
	got, err := setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fentry, funcset.Fexit), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"vfs_readv", "vfs_read"}, got, "the members, in the file's order; excluded lines ignored")
	assert.Empty(t, notes.String())

	path = writeSet(t, "7.1.0-other", "vfs_read")
	got, err = setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fexit), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"vfs_read"}, got)
	assert.Equal(t, "tracebench: --functions @"+path+": the set was built on 7.1.0-other; this kernel "+
		"(7.2.13-test) has each of its 1 members\n", notes.String())
}

func TestSetFileFunctionsRejects(t *testing.T) {
	var notes bytes.Buffer
	path := writeSet(t, "7.2.13-test", "vfs_read", "do_exit_x", "netlbl_init")
	_, err := setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fentry), &notes)
	assert.EqualError(t, err, "--functions @"+path+": a-multi-mechanism cannot attach 2 of the set's 3 members "+
		"with fentry on this kernel (7.2.13-test): do_exit_x (in neither BTF nor available_filter_functions of the "+
		"inventory), netlbl_init (fentry: not in available_filter_functions: ftrace cannot patch it (notrace, or no "+
		"call site to patch))",
		"never a silent partial trace of a set file; the file's reasons are not shown")

	path = writeSet(t, "7.2.13-test")
	_, err = setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fentry), &notes)
	assert.EqualError(t, err, "--functions @"+path+": the set has no member (1 excluded)")

	missing := filepath.Join(t.TempDir(), "nope")
	_, err = setsOf(t, "@"+missing, &notes).forMechanism(multi(funcset.Fentry), &notes)
	assert.EqualError(t, err, "--functions: "+missing+": cannot open: no such file or directory")
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Empty(t, notes.String())
}

// A plain list of names, as grep of available_filter_functions gives, is
// judged as a set file's members are.
func TestListFileFunctions(t *testing.T) {
	var notes bytes.Buffer
	path := filepath.Join(t.TempDir(), "list")
	require.NoError(t, os.WriteFile(path, []byte("# mine\nvfs_readv\n\nvfs_read  # the entry\n"), 0o644))
	got, err := setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fentry, funcset.Fexit), &notes)
	require.NoError(t, err)
	assert.Equal(t, []string{"vfs_readv", "vfs_read"}, got, "the names, in the file's order")
	assert.Empty(t, notes.String(), "a list names no kernel to compare")

	require.NoError(t, os.WriteFile(path, []byte("vfs_read\ndo_exit\nnetlbl_init\n"), 0o644))
	_, err = setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fexit), &notes)
	assert.EqualError(t, err, "--functions @"+path+": a-multi-mechanism cannot attach 2 of the set's 3 members "+
		"with fexit on this kernel (7.2.13-test): do_exit (fexit: the kernel refuses it: Attaching "+
		"fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.), netlbl_init (fexit: not in "+
		"available_filter_functions: ftrace cannot patch it (notrace, or no call site to patch))")
}

// An error about the file names it and the line, and shows nothing of
// the file but function names: tracebench runs as root (often by sudo),
// its user may not read the file.
func TestFunctionsFileShowsNoContent(t *testing.T) {
	const shadow = "root:$6$abcdefgh$Zq0nT3Wx9yLkPq:19000:0:99999:7:::"
	dir := t.TempDir()
	for content, want := range map[string]string{
		shadow + "\n":                                ": line 1: the function name is not a kernel symbol",
		"vfs_read\n" + shadow + "\n":                 ": line 2: the function name is not a kernel symbol",
		"correct horse battery\n":                    ": line 1: 3 words: a list holds one function a line",
		"vfs_read\n\xff\xfe" + shadow:                ": line 2: binary content",
		strings.Repeat(shadow, 1<<15):                ": line 1: longer than 1048576 bytes",
		"# tracebench function set " + shadow + "\n": ": line 1: a function set of another format",
		"\n# " + shadow + "\n":                       ": lines 1-2 name no function",
		"":                                           ": empty",
	} {
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		var notes bytes.Buffer
		_, err := setsOf(t, "@"+path, &notes).forMechanism(multi(funcset.Fentry), &notes)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "--functions: "+path+want), "%v", err)
		for _, secret := range []string{"$6$", "abcdefgh", "19000", "horse"} {
			assert.NotContains(t, err.Error(), secret)
		}
		assert.Empty(t, notes.String())
	}
	_, err := setsOf(t, "@"+dir, &bytes.Buffer{}).forMechanism(multi(funcset.Fentry), &bytes.Buffer{})
	assert.EqualError(t, err, "--functions: "+dir+": a directory, not a file of function names")
}

// A kernel whose lists cannot be read fails every set, naming --functions.
func TestFunctionsWithoutKernelLists(t *testing.T) {
	spec, err := parseFunctions("vfs_*")
	require.NoError(t, err)
	fs := newFunctionSets(spec, func() (*funcset.Inventory, error) { return nil, os.ErrPermission }, &bytes.Buffer{})
	_, err = fs.forMechanism(multi(funcset.Fentry), &bytes.Buffer{})
	assert.EqualError(t, err, "--functions vfs_*: reading the kernel's functions: permission denied")

	// A bad file is said first: it is bad on any kernel.
	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(bad, []byte("vfs_read\nvfs_read\n"), 0o644))
	spec, err = parseFunctions("@" + bad)
	require.NoError(t, err)
	fs = newFunctionSets(spec, func() (*funcset.Inventory, error) { return nil, os.ErrPermission }, &bytes.Buffer{})
	_, err = fs.forMechanism(multi(funcset.Fentry), &bytes.Buffer{})
	assert.EqualError(t, err, "--functions: "+bad+": line 2: the function (vfs_read) is listed twice, first on line 1")
}

func TestFunctionsText(t *testing.T) {
	glob, file := functionsSpec{pattern: "vfs_*"}, functionsSpec{file: "sets/n6.txt"}
	assert.Equal(t, "vfs_read", functionsText(functionsSpec{}, nil))
	assert.Equal(t, "1 function matching vfs_* (vfs_read)", functionsText(glob, []string{"vfs_read"}))
	assert.Equal(t, "2 functions of sets/n6.txt (vfs_read, ksys_read)", functionsText(file,
		[]string{"vfs_read", "ksys_read"}))
	assert.Equal(t, "6 functions matching vfs_* (a, b, c, d and 2 more)", functionsText(glob,
		[]string{"a", "b", "c", "d", "e", "f"}))
}
