// Package vm holds the guest runners' shell scripts; its tests run their
// argument checks on the host (no guest is booted: each case fails first).
package vm

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usageExit is the runners' status for a usage error (vm/run.sh's doc).
const usageExit = 125

// runners are the scripts that boot a guest.
var runners = []string{"./run.sh", "./run-initramfs.sh"}

// runScript runs a vm/ script with env added and returns its combined
// output and exit status.
func runScript(t *testing.T, env []string, script string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(script, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %q: %v", script, args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestRunnersRefuseBadArguments(t *testing.T) {
	for _, runner := range []string{"./run.sh", "./run-initramfs.sh"} {
		for _, tc := range []struct {
			args []string
			says string
		}{
			{[]string{"--memory", "0"}, "memory size '0' is below"},
			{[]string{"--memory", "100M"}, "memory size '100M' is below"},
			{[]string{"--memory", "9999999G"}, "'9999999G' is more than 4x this host's"},
			{[]string{"--memory", "2X"}, "invalid memory size '2X'"},
			{[]string{"--cpus", "0"}, "invalid CPU count '0'"},
			{[]string{"--cpus", "100000"}, "invalid CPU count '100000'"},
			{[]string{"--memory"}, "--memory needs a value"},
			{[]string{"--cpus", "--"}, "--cpus needs a value"},
			{[]string{"--timeout", "soon"}, "invalid timeout 'soon'"},
			{[]string{"--env", "1X=3"}, "--env '1X=3': '1X' is not a variable name"},
			{[]string{"--env", "A B"}, "'A B' is not a variable name"},
		} {
			t.Run(runner+" "+tc.args[0], func(t *testing.T) {
				// A kernel that does not exist: should the refusal regress,
				// the runner fails there instead of booting a guest.
				args := append([]string{"--kernel", "/nonexistent/vmlinuz"}, tc.args...)
				if len(tc.args) > 1 {
					args = append(args, "--", "sh")
				}
				out, err := exec.Command(runner, args...).CombinedOutput()
				var exit *exec.ExitError
				require.True(t, errors.As(err, &exit), "%s %q: %v", runner, args, err)
				assert.Equal(t, usageExit, exit.ExitCode(), "%s %q: %s", runner, args, out)
				assert.Contains(t, string(out), tc.says)
			})
		}
	}
}

// TestUsageIsTheHeader: --help prints the script's header comment and
// exits 0; a runner's usage error prints it too, with status 125.
func TestUsageIsTheHeader(t *testing.T) {
	scripts, err := filepath.Glob("*.sh")
	require.NoError(t, err)
	env := []string{"TRACEBENCH_CACHE=" + t.TempDir()}
	for _, script := range scripts {
		if script == "lib.sh" {
			continue // sourced, not run
		}
		header := headerComment(t, script)
		require.True(t, strings.HasPrefix(header, "vm/"+script+" "), "%s's header starts with its usage line: %q", script, header)
		out, code := runScript(t, env, "./"+script, "--help")
		assert.Equal(t, 0, code, "%s --help: %s", script, out)
		assert.Equal(t, header, out, "%s --help", script)
	}
	for _, runner := range runners {
		out, code := runScript(t, env, runner, "--bogus")
		assert.Equal(t, usageExit, code, "%s --bogus: %s", runner, out)
		assert.True(t, strings.HasSuffix(out, headerComment(t, runner)), "%s --bogus ends with the usage: %q", runner, out)
	}
}

// headerComment returns the comment lines after script's #! line, up to
// the first other line, without their "#" and one space.
func headerComment(t *testing.T, script string) string {
	f, err := os.Open(script)
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	lines := bufio.NewScanner(f)
	lines.Scan() // #!
	for lines.Scan() && strings.HasPrefix(lines.Text(), "#") {
		line := strings.TrimPrefix(lines.Text(), "#")
		b.WriteString(strings.TrimPrefix(line, " ") + "\n")
	}
	require.NoError(t, lines.Err())
	return b.String()
}

// A selector given twice with different values is refused, whichever
// comes last (it used to win silently).
func TestKernelRefusesConflictingSelectors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"sid", "trixie:6.12"}, "conflicting kernel suite: 'sid' and 'trixie'"},
		{[]string{"--version", "7", "sid:6.12"}, "conflicting kernel version selector: '7' and '6.12'"},
		{[]string{"sid:7:arm64", "--flavour=rt-amd64"}, "conflicting kernel flavour: 'arm64' and 'rt-amd64'"},
		{[]string{"sid:"}, "no kernel version selector given (got '')"},
		{[]string{"sid:7.2", "--suite"}, "no kernel suite given (got '')"},
		{[]string{"--suite", "--version", "7"}, "no kernel suite given (got '--version')"},
	} {
		out, err := exec.Command("./kernel.sh", tc.args...).CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "kernel.sh %q: %v", tc.args, err)
		assert.Equal(t, 1, exit.ExitCode(), "kernel.sh %q: %s", tc.args, out)
		assert.Contains(t, string(out), tc.says)
	}
}
