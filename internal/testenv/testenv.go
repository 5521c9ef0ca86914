// Package testenv is the test support the scenarios, the benchmarks and
// the CLI's guest tests share: root, emulation, kernel objects left behind.
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
