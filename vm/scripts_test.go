// Package vm holds the guest runners' shell scripts; its tests run their
// argument checks on the host (no guest is booted: each case fails first).
package vm

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usageExit is the runners' status for a usage error (vm/run.sh's doc).
const usageExit = 125

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
