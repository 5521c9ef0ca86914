package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSession ../bpf/kprobe_session.bpf.c
//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -DSESSION_KFUNCS_WITHOUT_CTX

import (
	"github.com/cilium/ebpf"

	"tracebench/funcset"
	"tracebench/internal/kernelbtf"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-session: one kprobe.session program (Linux 6.10) at entry and
// return, the entry time in the session cookie; the count argument needs a
// per-thread hash map, since the return run sees only the return registers.
var kprobeSession = Mechanism{
	Name: "kprobe-session",
	Summary: "one kprobe.session program at entry and return; entry time in the session cookie," +
		" count in a hash map keyed by pid_tgid",
	Can: kprobeCapabilities(bpfCapabilities(RoleSubject, StateCookieAndHashMap, LossRethookPool|LossMapFull,
		vfsReadOnly(funcset.KprobeMulti))),
	Needs: Requirement{"kprobe.session, a kprobe_multi link with BPF_TRACE_KPROBE_SESSION and the session kfuncs" +
		" (CONFIG_FPROBE)", KernelVersion{6, 10}},
	probe:  probeKprobeSession,
	spec:   sessionBuildForKernel(bpfobj.LoadKprobeSession, bpfobj.LoadKprobeSessionNoCtx),
	attach: attachKprobeMulti(true, "vfs_read_session"),
}

// probeKprobeSession checks the kernel BTF for the kprobe.session attach
// type and the session kfuncs, in either form; a missing fprobe shows at
// attach as ErrNotSupported (see Mechanism.classify).
func probeKprobeSession(m Mechanism) error {
	return probeSession(m, "BPF_TRACE_KPROBE_SESSION", false)
}

// sessionBuildForKernel returns the loader of the build of a
// kprobe.session object whose session kfunc calls match the running
// kernel: noCtx before 7.0, the 7.0 form (withCtx) where BTF cannot tell
// (the probe then says why).
func sessionBuildForKernel(withCtx, noCtx func() (*ebpf.CollectionSpec, error)) func() (*ebpf.CollectionSpec, error) {
	return func() (*ebpf.CollectionSpec, error) {
		if spec, err := kernelbtf.Spec(); err == nil {
			if takesCtx, err := sessionKfuncsTakeCtx(spec); err == nil && !takesCtx {
				return noCtx()
			}
		}
		return withCtx()
	}
}
