package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuestTargetsBootTheNamedKernel holds every make target that boots a
// guest to the kernel TEST_KERNEL names: the command that starts the guest
// runs after vm/kernel.sh resolved that selector (and only if it did).
func TestGuestTargetsBootTheNamedKernel(t *testing.T) {
	const selector = "trixie-backports:6.18"
	guestRuns := map[string]string{
		"bench": "bench run", "bench-peers": "bench run", "bench-multi": "bench run",
		"peers-test": "vm/run.sh", "peers-conformance": "vm/run.sh", "vmlinux": "bpf/vmlinux.sh",
	}
	for target, run := range guestRuns {
		t.Run(target, func(t *testing.T) {
			out, err := exec.Command("make", "-n", "-C", "../..", target, "TEST_KERNEL="+selector).CombinedOutput()
			require.NoError(t, err, "make -n %s: %s", target, out)
			i := strings.Index(string(out), run)
			require.GreaterOrEqual(t, i, 0, "make -n %s runs %s", target, run)
			line := string(out)[strings.LastIndex(string(out[:i]), "\n")+1 : i]
			assert.Contains(t, line, `kdir="$(vm/kernel.sh `+selector+`)" && `, "the guest's kernel is the named one")
		})
	}
}

// TestBenchRefusesOtherArches: the benchmarks boot amd64 guests only, so
// another ARCH is an error naming it, not an amd64 run.
func TestBenchRefusesOtherArches(t *testing.T) {
	out, err := exec.Command("make", "-n", "-C", "../..", "bench", "ARCH=arm64").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "bench runs on amd64 only, not ARCH=arm64")
}
