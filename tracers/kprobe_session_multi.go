package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSessionMulti ../bpf/kprobe_session_multi.bpf.c
//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeSessionMultiNoCtx ../bpf/kprobe_session_multi.bpf.c -DSESSION_KFUNCS_WITHOUT_CTX

import (
	"tracebench/funcset"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-session-multi: one kprobe.session program (Linux 6.10) on one
// kprobe_multi link naming every traced function, each with its cookie;
// the entry time in the session cookie, vfs_read's count in a hash map
// keyed by pid_tgid and the session cookie's address, which is the call's
// own. The link counts misses, not per function.
var kprobeSessionMulti = Mechanism{
	Name: "kprobe-session-multi",
	Summary: "one kprobe.session program on one kprobe_multi link naming every traced function; entry time in the" +
		" session cookie, vfs_read's count in a hash map keyed by pid_tgid and the cookie's address",
	Can: kprobeCapabilities(bpfCapabilities(RoleSubject, StateCookieAndCallHashMap, LossRecursion|LossRethookPool|LossMapFull,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.KprobeMulti}, Shared: FieldMissed})),
	Needs: Requirement{"kprobe.session on a kprobe_multi link with BPF_TRACE_KPROBE_SESSION and the session kfuncs" +
		" (CONFIG_FPROBE), whose programs read the cookie given to each function (not ppc64el 7.2)", KernelVersion{6, 10}},
	probe:  probeKprobeSessionMulti,
	spec:   sessionBuildForKernel(bpfobj.LoadKprobeSessionMulti, bpfobj.LoadKprobeSessionMultiNoCtx),
	attach: attachKprobeMulti(true, "session_kmulti"),
}

// probeKprobeSessionMulti is kprobe-session's probe, then the cookies'
// (requireKprobeMultiCookies).
func probeKprobeSessionMulti(m Mechanism) error {
	if err := probeKprobeSession(m); err != nil {
		return err
	}
	return requireKprobeMultiCookies(m)
}
