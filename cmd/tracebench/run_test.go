package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/internal/testenv"
	"tracebench/tracers"
)

// runCLI runs run as main would and returns its status and output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Every bad command line is two lines on stderr, the error and where the
// help is, and exit status 2: the error must not scroll away under the
// help.
func TestRunUsageErrors(t *testing.T) {
	const (
		top   = "Run 'tracebench -h' for usage."
		trace = "Run 'tracebench trace -h' for usage."
		list  = "Run 'tracebench list -h' for usage."
	)
	tests := []struct {
		args  []string
		error string // the first line
		help  string // the second
	}{
		{nil, "tracebench: want a command: trace, list or help", top},
		{[]string{""}, `tracebench: unknown command ""`, top},
		{[]string{"frob"}, `tracebench: unknown command "frob"`, top},
		{[]string{"--frob"}, `tracebench: unknown command "--frob"`, top},
		{[]string{"Trace"}, `tracebench: unknown command "Trace"`, top},
		{[]string{"help", "frob"}, `tracebench: help: unknown command "frob"`, top},
		{[]string{"help", "trace", "list"}, `tracebench: help: unexpected argument "list"`, top},
		{[]string{"list", "x"}, `tracebench list: unexpected argument "x"`, list},
		{[]string{"list", "--verbose"}, "tracebench list: flag provided but not defined: -verbose", list},
		{[]string{"trace", "--threshold-us", "-5"}, `tracebench trace: invalid value "-5" for flag -threshold-us: want an integer from 0 to 3600000000 (microseconds)`, trace},
		{[]string{"trace", "--threshold-us", "1.5"}, `tracebench trace: invalid value "1.5" for flag -threshold-us: want an integer from 0 to 3600000000 (microseconds)`, trace},
		{[]string{"trace", "--threshold-us"}, "tracebench trace: flag needs an argument: -threshold-us", trace},
		{[]string{"trace", "--duration", "0"}, `tracebench trace: invalid value "0" for flag -duration: want an integer from 1 to 86400 (seconds)`, trace},
		{[]string{"trace", "--duration", "10s"}, `tracebench trace: invalid value "10s" for flag -duration: want an integer from 1 to 86400 (seconds)`, trace},
		{[]string{"trace", "--pid", "0"}, `tracebench trace: invalid value "0" for flag -pid: want an integer from 1 to 4194303 (a process ID)`, trace},
		{[]string{"trace", "--pid", "abc"}, `tracebench trace: invalid value "abc" for flag -pid: want an integer from 1 to 4194303 (a process ID)`, trace},
		{[]string{"trace", "--ring-kib", "3000"}, `tracebench trace: invalid value "3000" for flag -ring-kib: want a power of two from 4 to 1048576 (KiB)`, trace},
		{[]string{"trace", "--mechanism", "nope"}, `tracebench trace: invalid value "nope" for flag -mechanism: unknown mechanism "nope" (known: ` + strings.Join(names(tracers.Mechanisms()), ", ") + ")", trace},
		{[]string{"trace", "--output", "yaml"}, `tracebench trace: invalid value "yaml" for flag -output: want text or json`, trace},
		{[]string{"trace", "--histogram=maybe"}, `tracebench trace: invalid boolean value "maybe" for -histogram: parse error`, trace},
		{[]string{"trace", "--functions", "vfs_[read"}, `tracebench trace: invalid value "vfs_[read" for flag -functions: pattern "vfs_[read" is malformed (want *, ?, [...] and \ as in shell globs): syntax error in pattern`, trace},
		{[]string{"trace", "--functions", ""}, `tracebench trace: invalid value "" for flag -functions: want a pattern of kernel function names (e.g. 'vfs_*') or @FILE`, trace},
		{[]string{"trace", "--functions", "@"}, `tracebench trace: invalid value "@" for flag -functions: want @FILE, the path of a file of function names, after @`, trace},
		{[]string{"trace", "--functions", "vfs_*", "--mechanism", vfsReadOnly(t)}, "tracebench trace: --functions vfs_*: mechanism " + vfsReadOnly(t) + " traces vfs_read alone; trace many functions with one of " + strings.Join(names(multiMechanisms()), ", ") + ", or auto", trace},
		{[]string{"trace", "--frobnicate"}, "tracebench trace: flag provided but not defined: -frobnicate", trace},
		{[]string{"trace", "-x"}, "tracebench trace: flag provided but not defined: -x", trace},
		{[]string{"trace", "--pid", "1", "extra"}, `tracebench trace: unexpected argument "extra"`, trace},
		{[]string{"trace", "list"}, `tracebench trace: unexpected argument "list"`, trace},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(tt.args...)
		assert.Equal(t, exitUsage, code, "args %q", tt.args)
		assert.Empty(t, stdout, "args %q", tt.args)
		assert.Equal(t, tt.error+"\n"+tt.help+"\n", stderr, "args %q", tt.args)

		// The help it points to is there.
		helpArgs := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(tt.help, "Run '"), "' for usage."))[1:]
		code, stdout, _ = runCLI(helpArgs...)
		assert.Equal(t, exitOK, code, "%q", helpArgs)
		assert.True(t, strings.HasPrefix(stdout, "Usage:"), "%q", helpArgs)
	}
}

// vfsReadOnly returns a mechanism that traces vfs_read alone.
func vfsReadOnly(t *testing.T) string {
	for _, m := range tracers.Mechanisms() {
		if !m.Can.Functions.Many {
			return m.Name
		}
	}
	t.Fatal("every registered mechanism traces many functions")
	return ""
}

func TestRunHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		help string
	}{
		{[]string{"-h"}, usage}, {[]string{"--help"}, usage}, {[]string{"help"}, usage},
		{[]string{"trace", "-h"}, traceUsage}, {[]string{"trace", "--help"}, traceUsage},
		{[]string{"trace", "--pid", "1", "-h"}, traceUsage}, {[]string{"help", "trace"}, traceUsage},
		{[]string{"list", "-h"}, listUsage}, {[]string{"help", "list"}, listUsage},
	} {
		args := c.args
		code, stdout, stderr := runCLI(args...)
		assert.Equal(t, exitOK, code, "args %q", args)
		assert.Equal(t, c.help, stdout, "args %q: the whole help", args)
		assert.Empty(t, stderr, "args %q", args)

		// A help that cannot be written fails, as `list` does.
		var errOut bytes.Buffer
		code = run(context.Background(), args, fullWriter{}, &errOut)
		assert.Equal(t, exitError, code, "args %q", args)
		assert.Equal(t, "tracebench: writing the help: no space left on device\n", errOut.String(), "args %q", args)
	}
}

// The start line begins as the seed tool's did, "Tracing vfs_read for",
// which scripts wait for before starting their workload.
func TestBanner(t *testing.T) {
	o, err := parseTrace(nil)
	require.NoError(t, err)
	line := banner(functionsText(o.functions, nil), o, "a-mechanism")
	assert.Equal(t, "Tracing vfs_read for 10 s: calls by every process taking >= 1000 us, with a-mechanism. "+
		"Ctrl-C to stop.\n", line)
	assert.True(t, strings.HasPrefix(line, "Tracing vfs_read "), "the seed's prefix")

	o, err = parseTrace([]string{"--functions", "vfs_*", "--pid", "42", "--threshold-us", "0", "--duration", "3"})
	require.NoError(t, err)
	assert.Equal(t, "Tracing 2 functions matching vfs_* (vfs_read, vfs_readv) for 3 s: calls by process 42 "+
		"taking >= 0 us, with a-multi-mechanism. Ctrl-C to stop.\n",
		banner(functionsText(o.functions, []string{"vfs_read", "vfs_readv"}), o, "a-multi-mechanism"))
}

// fullWriter fails every write, as a full disk (/dev/full) does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, unix.ENOSPC }

func TestRunTraceRefusesMissingProcess(t *testing.T) {
	// The largest PID the flag takes, PID_MAX_LIMIT-1, if no process has it.
	require.ErrorIs(t, unix.Kill(4194303, 0), unix.ESRCH, "a process has PID 4194303")
	code, stdout, stderr := runCLI("trace", "--pid", "4194303")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "tracebench: --pid 4194303: no such process\n", stderr)
}

// In a PID namespace of its own (a container's), --pid names a process by
// an ID the kernel's TGID filter does not know: refused, naming why.
func TestRunTraceRefusesPIDFromAnotherNamespace(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) not found: cannot start the CLI in a new PID namespace")
	}
	testenv.PIDNS.Require(t)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", self, "trace", "--pid", "1")
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v: %s", err, out)
	assert.Equal(t, exitError, exit.ExitCode(), "%s", out)
	assert.Regexp(t, `^tracebench: --pid 1: this process runs in PID namespace pid:\[\d+\], not the initial one`, string(out))
}

func TestRunTraceRefusesThread(t *testing.T) {
	tid := unix.Gettid()
	if tid == os.Getpid() {
		t.Skip("the test runs on the main thread, which is the process ID")
	}
	code, _, stderr := runCLI("trace", "--pid", fmt.Sprint(tid))
	assert.Equal(t, exitError, code)
	assert.Equal(t, fmt.Sprintf("tracebench: --pid %d is a thread of process %d; give the process ID\n", tid, os.Getpid()), stderr)
}

func TestDescribe(t *testing.T) {
	unsupported := &tracers.UnsupportedError{Mechanism: "new-design", Needs: "BPF_TRACE_NEW (Linux 8.0)", Kernel: "6.18", Detected: "no such enum value"}
	tests := []struct {
		name string
		err  error
		euid int
		want string
	}{
		{"unsupported, wrapped", fmt.Errorf("start: %w", unsupported), 0,
			"new-design needs BPF_TRACE_NEW (Linux 8.0); this kernel is 6.18: no such enum value"},
		{"not root", fmt.Errorf("fentry-fexit: load: map create: %w", unix.EPERM), 1000,
			"tracing vfs_read needs root (CAP_BPF and CAP_PERFMON); this process runs as uid 1000"},
		{"root refused: the error itself", fmt.Errorf("load: %w", unix.EPERM), 0, "load: operation not permitted"},
		{"multi-line verifier log: first line", errors.New("load program: invalid argument\n0: R1=ctx\n1: ..."), 0, "load program: invalid argument"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, describe(tt.err, tt.euid), tt.name)
	}
}

// TestRunTraceUnsupportedIsOneLine runs trace on this kernel. Where no
// mechanism can run (the project's CI host) it must fail with one line;
// where one can (root in the guest) it must trace and summarise.
func TestRunTraceUnsupportedIsOneLine(t *testing.T) {
	code, stdout, stderr := runCLI("trace", "--duration", "1", "--mechanism", tracers.Mechanisms()[0].Name)
	if code == exitOK {
		assert.Regexp(t, `(?m)^SUMMARY calls=\d+ slow=\d+ errors=\d+ dropped=\d+ lost=\d+ events=\d+\n\z`, stdout)
		return
	}
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, `\Atracebench: [^\n]+\n\z`, stderr, "exactly one line")
}

// As non-root, a mechanism whose probe passed is listed as not verified,
// not as supported: only loading it could tell.
func TestListAsNonRootSaysNotVerified(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, list(&b, 1000))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[1:]
	probed := 0
	for _, line := range lines {
		fields := strings.Fields(line)
		if fields[1] == "no" || fields[1] == "unknown" {
			continue
		}
		probed++
		assert.Equal(t, notVerified, fields[1], line)
		assert.True(t, strings.HasSuffix(line, notVerifiedDetail), line)
	}
	if probed == 0 {
		t.Skipf("every mechanism's probe failed on this kernel, none reached the non-root verdict:\n%s", b.String())
	}
}
