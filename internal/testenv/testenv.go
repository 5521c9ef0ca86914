// Package testenv is the test support every package's tests share, the
// internal ones too: privileges, the guest's accelerator, a TGID no process
// has, tracefs settings. It imports testing and testify, so no package a
// binary links may import it; the bounded wait binaries use too is
// internal/poll. It imports no tracebench package but internal/tracefs
// (itself a leaf); checks that need tracers' types, such as what a tracer
// left in the kernel, are in tracers/tracerstest.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tracebench/internal/tracefs"
)

// Privilege is something a test can do only as root.
type Privilege struct {
	Doing string // e.g. "loading BPF tracing programs"
	Caps  string // the capabilities it takes, e.g. "CAP_BPF, CAP_PERFMON"
}

// The privileges tests need.
var (
	Tracing = Privilege{"loading BPF tracing programs", "CAP_BPF, CAP_PERFMON"}
	NetNS   = Privilege{"creating a network namespace", "CAP_SYS_ADMIN"}
	PIDNS   = Privilege{"creating a PID namespace", "CAP_SYS_ADMIN"}
)

// Missing says why this process cannot do p, e.g. "loading BPF tracing
// programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000"; ""
// for root.
func (p Privilege) Missing() string { return p.missing(os.Geteuid()) }

func (p Privilege) missing(euid int) string {
	if euid == 0 {
		return ""
	}
	return fmt.Sprintf("%s needs root (%s); running as euid %d", p.Doing, p.Caps, euid)
}

// Require skips tb, saying what is missing, unless the process can do p.
func (p Privilege) Require(tb testing.TB) {
	tb.Helper()
	if why := p.Missing(); why != "" {
		tb.Skip(why)
	}
}

// Accel is the accelerator vm/run.sh says the guest runs under (tcg, kvm),
// "" outside a tracebench guest.
func Accel() string { return os.Getenv("TRACEBENCH_ACCEL") }

// TracingThresh returns the global tracing_thresh in µs as tracefs prints
// it, "" where tracefs is not mounted; failing to read it fails tb.
func TracingThresh(tb testing.TB) string {
	tb.Helper()
	root, err := tracefs.Root()
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	var thresh string
	if err == nil {
		thresh, err = tracefs.Read(filepath.Join(root, "tracing_thresh"))
	}
	if err != nil {
		tb.Fatalf("read tracing_thresh: %v", err)
	}
	return thresh
}
