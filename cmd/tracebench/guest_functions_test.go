package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/funcset"
	"tracebench/tracers"
)

// multiChoice returns the mechanism --mechanism auto must choose with
// --functions, skipping t if none runs here.
func multiChoice(t *testing.T) tracers.Mechanism {
	t.Helper()
	var reasons []string
	for _, m := range multiMechanisms() {
		_, err := traceable(m)
		if err == nil {
			return m
		}
		if !errors.Is(err, tracers.ErrUnsupported) && !errors.Is(err, errNotRoot) {
			require.NoError(t, err)
		}
		reasons = append(reasons, err.Error())
	}
	t.Skipf("no mechanism of --mechanism auto --functions runs here: %s", strings.Join(reasons, "; "))
	return tracers.Mechanism{}
}

var (
	anyEventLine = regexp.MustCompile(`^EVENT function=(\S+) comm=\S+ tgid=(\d+) pid=\d+ requested=(\d+|\?) ` +
		`result=(-?\d+) latency_us=(\d+)$`)
	functionLine = regexp.MustCompile(`^FUNCTION name=(\S+) calls=(\d+) slow=(\d+) errors=(\d+) dropped=0 lost=0$`)
)

// TestTraceFunctions traces vfs_read and the pipe's f_op->read (found
// with function_graph), written as a set file and as a plain list, with
// auto: each slow pipe read is an event of both, named; requested is
// known for vfs_read alone; a FUNCTION line per function counts its calls.
func TestTraceFunctions(t *testing.T) {
	want := multiChoice(t)
	rp, err := funcset.FindReadpath(2)
	require.NoError(t, err)
	found := rp.CalledOnlyBy(tracers.DefaultFunction, funcset.SourcePipe)
	require.Len(t, found, 1, "the pipe's f_op->read")
	inner := found[0].Name
	inv, err := funcset.ReadKernel()
	require.NoError(t, err)
	set, err := inv.Select("nested", "vfs_read and the pipe's read", []funcset.Entry{
		{Name: tracers.DefaultFunction, Reason: "outer"}, {Name: inner, Reason: "inner"}}, want.Can.Functions.Kinds)
	require.NoError(t, err)
	setFile := filepath.Join(t.TempDir(), "nested.set")
	require.NoError(t, funcset.WriteFile(setFile, set))
	listFile := filepath.Join(t.TempDir(), "nested.list")
	require.NoError(t, os.WriteFile(listFile, []byte("# vfs_read and the pipe's read\n"+tracers.DefaultFunction+
		"\n\n"+inner+"  # inner\n"), 0o644))
	for _, path := range []string{setFile, listFile} {
		t.Run(filepath.Ext(path)[1:], func(t *testing.T) { traceNested(t, want, path, inner) })
	}
}

// traceNested traces the functions of path, vfs_read and inner, the
// pipe's read, with auto, which must choose want.
func traceNested(t *testing.T, want tracers.Mechanism, path, inner string) {
	c, truth := runWorkload(t, func(tgid uint32) *cli {
		return startCLI(t, "trace", "--functions", "@"+path, "--threshold-us", fmt.Sprint(thresholdUS),
			"--duration", "600", "--pid", fmt.Sprint(tgid))
	})
	out := c.stop(t)
	t.Logf("stderr: %q\noutput:\n%s", c.seen, out)
	assert.Contains(t, c.seen, "tracebench: --mechanism auto chose "+want.Name)
	assert.Contains(t, c.seen, fmt.Sprintf("Tracing 2 functions of %s (vfs_read, %s) for 600 s: calls by process %d "+
		"taking >= %d us, with %s. Ctrl-C to stop.", path, inner, truth.TGID, thresholdUS, want.Name))

	pipe := map[string]int{}
	calls := map[string]uint64{}
	for line := range strings.Lines(strings.TrimSuffix(out, "\n")) {
		line = strings.TrimSuffix(line, "\n")
		if f := anyEventLine.FindStringSubmatch(line); f != nil {
			assert.Equal(t, fmt.Sprint(truth.TGID), f[2], line)
			assert.Equal(t, f[1] == tracers.DefaultFunction, f[3] != unknownText, "requested is vfs_read's alone: %s", line)
			if f[4] == "1" && atois(t, f[5:6])[0] >= uint64(pipeDelay.Microseconds()) {
				pipe[f[1]]++
			}
			continue
		}
		if f := functionLine.FindStringSubmatch(line); f != nil {
			calls[f[1]] = atois(t, f[2:3])[0]
			continue
		}
		require.True(t, strings.HasPrefix(line, "SUMMARY "), "an EVENT, FUNCTION or SUMMARY line: %q", line)
	}
	assert.Equal(t, map[string]int{tracers.DefaultFunction: pipeReads, inner: pipeReads}, pipe,
		"each delayed pipe read is a slow event of both functions")
	if skippedProbes(c.seen) == 0 {
		assert.Equal(t, map[string]uint64{tracers.DefaultFunction: fileReads + dirReads + pipeReads, inner: pipeReads},
			calls, "calls of each function")
	}
}

// TestTraceFunctionsRefused: a pattern matching nothing, and one whose
// matches the chosen mechanism's kinds cannot attach (by the kernel's
// lists), fail in one line naming the pattern, with nothing left attached.
func TestTraceFunctionsRefused(t *testing.T) {
	want := multiChoice(t)
	patterns := []string{"tracebench_no_such_function_*"}
	inv, err := funcset.ReadKernel()
	require.NoError(t, err)
	all, err := inv.Glob("*", want.Can.Functions.Kinds)
	require.NoError(t, err)
	if len(all.Excluded) > 0 {
		patterns = append(patterns, all.Excluded[0].Name)
	} else {
		t.Logf("the lists let %s attach every function", want.Name)
	}
	for i, pattern := range patterns {
		for _, mechanism := range []string{"auto", want.Name}[i:] { // auto may take the second with other kinds
			code, stdout, stderr := runCLIRecorded(t, "trace", "--functions", pattern, "--mechanism", mechanism, "--duration", "1")
			assert.Equal(t, exitError, code, pattern)
			assert.Empty(t, stdout, pattern)
			assert.Regexp(t, `\Atracebench: --functions `+regexp.QuoteMeta(pattern)+`: [^\n]+\n\z`, stderr, "one line")
			t.Log(stderr)
		}
	}
	assertNoLeftovers(t)
}
