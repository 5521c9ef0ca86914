package tracers

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
)

// kprobe-session: one kprobe.session program (Linux 6.10) at entry and
// return of vfs_read, the entry time in the session cookie; the count
// argument still needs a per-thread hash map, since the return run sees
// only the return registers.
var kprobeSession = Mechanism{
	Name:    "kprobe-session",
	Summary: "one kprobe.session program at entry and return; entry time in the session cookie, count in a hash map keyed by pid_tgid",
	needs:   "kprobe.session, a kprobe_multi link with BPF_TRACE_KPROBE_SESSION and the session kfuncs (Linux 6.10, CONFIG_FPROBE)",
	probe:   probeKprobeSession,
	spec:    loadKprobeSessionForKernel,
	attach: func(progs map[string]*ebpf.Program, _ Config) ([]link.Link, error) {
		opts := link.KprobeMultiOptions{Symbols: []string{"vfs_read"}, Session: true}
		return attachEach(func() (link.Link, error) { return link.KprobeMulti(progs["vfs_read_session"], opts) })
	},
}

// probeKprobeSession checks the kernel BTF for the kprobe.session attach
// type and the session kfuncs, in either form. Whether fprobe is built in
// shows at attach: cilium/ebpf then probes for the session link and
// returns ErrNotSupported (see Mechanism.classify).
func probeKprobeSession(m Mechanism) error {
	spec, err := kernelBTF(m)
	if err != nil {
		return err
	}
	if err := requireAttachType(m, spec, "BPF_TRACE_KPROBE_SESSION"); err != nil {
		return err
	}
	if _, err := sessionKfuncsTakeCtx(spec); err != nil {
		return m.unsupported(err.Error())
	}
	return nil
}

// loadKprobeSessionForKernel returns the build of kprobe_session.bpf.c
// whose session kfunc calls match the running kernel: without ctx before
// 7.0. Where the kernel's BTF cannot tell, it is the 7.0 form (the probe
// reports why the mechanism cannot run there).
func loadKprobeSessionForKernel() (*ebpf.CollectionSpec, error) {
	if spec, err := btf.LoadKernelSpec(); err == nil {
		if withCtx, err := sessionKfuncsTakeCtx(spec); err == nil && !withCtx {
			return loadKprobeSessionNoCtx()
		}
	}
	return loadKprobeSession()
}

// KprobeSessionMissesWhole reports whether kprobe-session can miss whole
// calls on the running kernel: its fprobe returns through a fixed rethook
// pool of 2 x possible CPUs entries per function (struct fprobe has a
// rethook member, as in 6.12; 6.18 and 7.x keep the return on the function
// graph's per-task shadow stack instead). A call entering with the pool
// empty runs neither program half and shows only in Stats.Missed. False
// when the kernel's BTF cannot be read.
func KprobeSessionMissesWhole() bool {
	spec, err := btf.LoadKernelSpec()
	return err == nil && hasMember(spec, "fprobe", "rethook")
}
