package tracers

import (
	"os"
	"strings"

	"github.com/cilium/ebpf"
)

// needsJIT is what a program the BPF interpreter cannot run needs beyond
// its mechanism: the kernel refuses kfunc calls (the session kfuncs of
// fsession and kprobe.session) and, on 7.2, fentry-fexit-taskstorage's
// programs without a JIT. riscv64's Debian kernel has one but leaves it
// off (no CONFIG_BPF_JIT_DEFAULT_ON), s390x's has none (built for z10,
// below the z196 its JIT needs).
const needsJIT = "the BPF JIT compiler (CONFIG_BPF_JIT, sysctl net.core.bpf_jit_enable=1)"

// jitRefusals are the verifier's answers to such a program without a JIT
// (7.2.13 riscv64 guest, net.core.bpf_jit_enable=0).
var jitRefusals = []string{"JIT is required", "requires BPF JIT compiler"}

// bpfJITEnable is the sysctl that turns the JIT on; it exists only in a
// kernel built with CONFIG_BPF_JIT.
var bpfJITEnable = "/proc/sys/net/core/bpf_jit_enable"

// refusedWithoutJIT returns an *UnsupportedError if err is a load the
// verifier refused for want of a JIT, saying what the kernel's JIT
// sysctl reads; else nil.
//
// A kernel without CONFIG_BPF_JIT has no BPF trampolines either, so
// every refusal of a mechanism with tracing programs is unsupported where
// the sysctl is absent: in the 7.2.13 s390x guest an fentry, fexit or
// fsession program's load failed with ENOMEM (the verifier's trampoline
// lookup is a stub), fentry.multi's with EINVAL ("program of this type
// cannot use helper bpf_get_func_arg").
func (m Mechanism) refusedWithoutJIT(err error) error {
	noTrampolines := !jitBuilt() && m.usesTrampolines()
	if !noTrampolines && !containsAny(err.Error(), jitRefusals) {
		return nil
	}
	return &UnsupportedError{Mechanism: m.Name, Needs: needsJIT, Kernel: KernelRelease(),
		Detected: jitState() + ": " + err.Error()}
}

// jitBuilt says whether the kernel has CONFIG_BPF_JIT (the sysctl exists).
func jitBuilt() bool {
	_, err := os.Stat(bpfJITEnable)
	return !os.IsNotExist(err)
}

// usesTrampolines says whether m's object holds a tracing program, which
// the kernel attaches through a BPF trampoline: a program of type Tracing
// or one the rawbpf shim loads (m.loadProgram: fsession, the tracing_multi
// sections, which cilium/ebpf v0.22 leaves unspecified).
func (m Mechanism) usesTrampolines() bool {
	if m.loadProgram != nil {
		return true
	}
	spec, _ := m.object()
	if spec == nil {
		return false
	}
	for _, p := range spec.Programs {
		if p.Type == ebpf.Tracing {
			return true
		}
	}
	return false
}

// jitState says what bpfJITEnable reads.
func jitState() string {
	raw, err := os.ReadFile(bpfJITEnable)
	switch {
	case os.IsNotExist(err):
		return "no " + bpfJITEnable + " (a kernel without CONFIG_BPF_JIT)"
	case err != nil:
		return "JIT state unknown (" + err.Error() + ")"
	}
	return "net.core.bpf_jit_enable is " + strings.TrimSpace(string(raw))
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
