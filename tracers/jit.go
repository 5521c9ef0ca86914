package tracers

import (
	"os"
	"strings"
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
func (m Mechanism) refusedWithoutJIT(err error) error {
	if !containsAny(err.Error(), jitRefusals) {
		return nil
	}
	return &UnsupportedError{Mechanism: m.Name, Needs: needsJIT, Kernel: KernelRelease(),
		Detected: jitState() + ": " + err.Error()}
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
