package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSession ../bpf/kprobe_session.bpf.c
//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -DSESSION_KFUNCS_WITHOUT_CTX

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

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
	Can: bpfCapabilities(RoleSubject, StateCookieAndHashMap, LossRethookPool|LossMapFull),
	Needs: Requirement{"kprobe.session, a kprobe_multi link with BPF_TRACE_KPROBE_SESSION and the session kfuncs" +
		" (CONFIG_FPROBE)", KernelVersion{6, 10}},
	probe: probeKprobeSession,
	spec:  loadKprobeSessionForKernel,
	attach: func(progs map[string]*ebpf.Program, _ Config) ([]link.Link, error) {
		opts := link.KprobeMultiOptions{Symbols: []string{"vfs_read"}, Session: true}
		return attachEach(func() (link.Link, error) { return link.KprobeMulti(progs["vfs_read_session"], opts) })
	},
}

// probeKprobeSession checks the kernel BTF for the kprobe.session attach
// type and the session kfuncs, in either form; a missing fprobe shows at
// attach as ErrNotSupported (see Mechanism.classify).
func probeKprobeSession(m Mechanism) error {
	return probeSession(m, "BPF_TRACE_KPROBE_SESSION", false)
}

// loadKprobeSessionForKernel returns the build of kprobe_session.bpf.c whose
// session kfunc calls match the running kernel: without ctx before 7.0, the
// 7.0 form where BTF cannot tell (the probe then says why).
func loadKprobeSessionForKernel() (*ebpf.CollectionSpec, error) {
	if spec, err := kernelbtf.Spec(); err == nil {
		if withCtx, err := sessionKfuncsTakeCtx(spec); err == nil && !withCtx {
			return bpfobj.LoadKprobeSessionNoCtx()
		}
	}
	return bpfobj.LoadKprobeSession()
}
