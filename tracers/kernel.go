package tracers

import (
	"errors"
	"fmt"
	"os"

	"tracebench/internal/kernel"
)

// KernelRelease returns the running kernel's uname release, e.g.
// "7.2.13+deb14-amd64", or "unknown (uname: ...)" if uname fails.
var KernelRelease = kernel.Release

// probeTrampoline checks for kernel BTF describing vfs_read; whether the
// kernel accepts trampolines at all shows at load (Mechanism.classify).
func probeTrampoline(m Mechanism) error {
	_, err := vfsReadBTF(m)
	return err
}

// kprobePMU is where the kernel lists the perf kprobe event source that
// cilium/ebpf attaches kprobes through.
const kprobePMU = "/sys/bus/event_source/devices/kprobe/type"

// probeKprobe checks for kprobes (CONFIG_KPROBES with perf kprobe events).
func probeKprobe(m Mechanism) error {
	if _, err := os.Stat(kprobePMU); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m.unsupported(kprobePMU + " does not exist")
		}
		return fmt.Errorf("%s: probe kprobes: %w", m.Name, err)
	}
	return nil
}
