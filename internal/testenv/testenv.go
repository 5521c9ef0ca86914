// Package testenv is the test support every package shares, the internal
// ones too: root, emulation, a TGID no process has. It imports no
// tracebench package; checks that need tracers' types, such as what a
// tracer left in the kernel, are in tracers/tracerstest.
package testenv

import (
	"fmt"
	"math"
	"os"
)

// NoProcess is a TGID no process has (pid_max is at most 2^22).
const NoProcess = math.MaxUint32

// NotRoot says why tracing cannot run as this user; "" for root.
func NotRoot() string {
	if euid := os.Geteuid(); euid != 0 {
		return fmt.Sprintf("loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid %d", euid)
	}
	return ""
}

// Accel is the accelerator vm/run.sh says the guest runs under (tcg, kvm),
// "" outside a tracebench guest.
func Accel() string { return os.Getenv("TRACEBENCH_ACCEL") }
