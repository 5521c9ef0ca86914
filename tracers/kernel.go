package tracers

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// KernelRelease returns the running kernel's uname release, e.g.
// "7.2.13+deb14-amd64", or "unknown (uname: ...)" if uname fails.
var KernelRelease = sync.OnceValue(func() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown (uname: " + err.Error() + ")"
	}
	return unix.ByteSliceToString(u.Release[:])
})

// kernelBTF returns the running kernel's BTF, or an *UnsupportedError for m
// when there is none (CONFIG_DEBUG_INFO_BTF unset).
func kernelBTF(m Mechanism) (*btf.Spec, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, &UnsupportedError{Mechanism: m.Name, Needs: "kernel BTF (CONFIG_DEBUG_INFO_BTF)", Kernel: KernelRelease(), Detected: err.Error()}
	}
	return spec, nil
}

// vfsReadBTF returns the kernel BTF and vfs_read's function type in it.
func vfsReadBTF(m Mechanism) (*btf.Spec, *btf.Func, error) {
	spec, err := kernelBTF(m)
	if err != nil {
		return nil, nil, err
	}
	var fn *btf.Func
	if err := spec.TypeByName("vfs_read", &fn); err != nil {
		return nil, nil, m.unsupported(fmt.Sprintf("vfs_read not found in kernel BTF: %v", err))
	}
	return spec, fn, nil
}

// probeTrampoline checks what fentry/fexit need before loading: kernel BTF
// describing vfs_read. Whether the kernel accepts trampolines at all shows
// at load time (see Mechanism.classify).
func probeTrampoline(m Mechanism) error {
	_, _, err := vfsReadBTF(m)
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
