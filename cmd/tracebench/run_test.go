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

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args      []string
		wantFirst string // first line of stderr
		wantUsage string // usage that follows it
	}{
		{nil, "Usage:", "tracebench trace [flags]"},
		{[]string{"frob"}, `tracebench: unknown command "frob"`, "tracebench list"},
		{[]string{"list", "x"}, `tracebench list: unexpected argument "x"`, "tracebench list"},
		{[]string{"trace", "--threshold-us", "-5"}, `tracebench trace: invalid value "-5" for flag -threshold-us`, "--threshold-us USEC"},
		{[]string{"trace", "--duration", "0"}, `tracebench trace: invalid value "0" for flag -duration`, "--duration SEC"},
		{[]string{"trace", "--pid", "abc"}, `tracebench trace: invalid value "abc" for flag -pid`, "--pid TGID"},
		{[]string{"trace", "--mechanism", "nope"}, `tracebench trace: invalid value "nope" for flag -mechanism`, "--mechanism NAME|auto"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(tt.args...)
		assert.Equal(t, exitUsage, code, "args %q", tt.args)
		assert.Empty(t, stdout, "args %q", tt.args)
		assert.True(t, strings.HasPrefix(stderr, tt.wantFirst), "args %q: stderr %q", tt.args, stderr)
		assert.Contains(t, stderr, tt.wantUsage, "args %q", tt.args)
	}
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"trace", "-h"}, {"trace", "--help"}} {
		code, stdout, stderr := runCLI(args...)
		assert.Equal(t, exitOK, code, "args %q", args)
		assert.Contains(t, stdout, "Usage:", "args %q", args)
		assert.Empty(t, stderr, "args %q", args)

		// A help that cannot be written fails, as `list` does.
		var errOut bytes.Buffer
		code = run(context.Background(), args, fullWriter{}, &errOut)
		assert.Equal(t, exitError, code, "args %q", args)
		assert.Equal(t, "tracebench: writing the help: no space left on device\n", errOut.String(), "args %q", args)
	}
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
