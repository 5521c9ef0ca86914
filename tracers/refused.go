package tracers

import (
	"fmt"
	"os"
	"strings"
)

// securityFS is where the kernel shows its lockdown mode and LSMs.
var securityFS = "/sys/kernel/security"

// RefusedError: the kernel refused to load or attach a mechanism with
// EPERM although the process runs as root. That is a policy (lockdown, an
// LSM such as a BPF LSM program, a kernel built to forbid trampolines),
// not a missing feature. Where lockdown is seen in confidentiality mode,
// which forbids kprobes, perf events, tracefs and BPF reads of kernel
// memory (kernel_lockdown(7)), that is the cause and the error does not
// wrap ErrUnsupported: tests fail. Otherwise it wraps ErrUnsupported, so
// tests skip naming EPERM: this project's CI host refuses fentry so,
// before the verifier, in integrity lockdown (which forbids none of this)
// with securityfs unmounted, which nothing tells apart from an LSM's
// refusal. `make test` and `make matrix` still fail such a skip where
// matrix/kernels.tsv says the mechanism must run.
type RefusedError struct {
	Mechanism string
	Kernel    string // uname release
	Err       error  // the refused step, wrapping EPERM
	// Lockdown is the kernel's lockdown mode (none, integrity,
	// confidentiality) or why it is unknown; LSMs the active LSMs.
	Lockdown, LSMs string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: kernel %s refused it with EPERM although running as root: a policy, not a missing"+
		" feature (lockdown: %s; LSMs: %s): %v", e.Mechanism, e.Kernel, e.Lockdown, e.LSMs, e.Err)
}

// LockedDown reports whether the kernel's lockdown is seen forbidding
// tracing (confidentiality mode).
func (e *RefusedError) LockedDown() bool { return e.Lockdown == "confidentiality" }

func (e *RefusedError) Unwrap() []error {
	if e.LockedDown() {
		return []error{e.Err}
	}
	return []error{ErrUnsupported, e.Err}
}

// refused wraps err, EPERM as root, in a *RefusedError with what
// securityfs says of lockdown and LSMs.
func (m Mechanism) refused(err error) error {
	return &RefusedError{Mechanism: m.Name, Kernel: KernelRelease(), Err: err,
		Lockdown: lockdownMode(), LSMs: readSecurity("lsm")}
}

// lockdownMode is the bracketed mode of securityfs's lockdown file
// ("none [integrity] confidentiality" -> "integrity"), or why unknown.
func lockdownMode() string {
	modes := readSecurity("lockdown")
	start, end := strings.IndexByte(modes, '['), strings.IndexByte(modes, ']')
	if start < 0 || end < start {
		return modes
	}
	return modes[start+1 : end]
}

// readSecurity returns the trimmed securityfs file name, or "unknown (why)".
func readSecurity(name string) string {
	raw, err := os.ReadFile(securityFS + "/" + name)
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return strings.TrimSpace(string(raw))
}
