package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeKretprobeMulti ../bpf/kprobe_kretprobe_multi.bpf.c

import (
	"runtime"
	"slices"

	"tracebench/funcset"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-kretprobe-multi: kprobe.multi and kretprobe.multi programs on two
// kprobe_multi links naming every traced function (Linux 5.18, with
// cookies); entry time and vfs_read's count in a hash map keyed by
// pid_tgid, the entry stack pointer, which the return run finds at a
// fixed offset (bpf/calls.h) measured on x86-64 only,
// and the function (a tail call enters its callee at the caller's sp).
// The links count misses, not per function.
var kprobeKretprobeMulti = Mechanism{
	Name: "kprobe-kretprobe-multi",
	Summary: "kprobe.multi + kretprobe.multi programs on two kprobe_multi links naming every traced function;" +
		" entry time and count in a hash map keyed by pid_tgid, the entry stack pointer and the function",
	Can: kprobeCapabilities(bpfCapabilities(RoleSubject, StateCallHashMap, LossRecursion|LossReturnPool|LossMapFull,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.KprobeMulti}, Shared: FieldMissed})),
	Needs: Requirement{"kprobe_multi links with cookies (CONFIG_FPROBE, BPF_TRACE_KPROBE_MULTI), BPF_CMPXCHG in" +
		" programs, x86-64", KernelVersion{5, 18}},
	probe:  probeKprobeMulti,
	spec:   bpfobj.LoadKprobeKretprobeMulti,
	attach: attachKprobeMulti(false, "entry_kmulti", "return_kmulti"),
}

// returnSPMeasured are the architectures whose stack pointer at a
// kretprobe or kretprobe.multi return is known relative to the entry's
// (RETURN_SP_OFFSET of bpf/calls.h).
var returnSPMeasured = []string{"amd64"}

// requireReturnSPMeasured returns an *UnsupportedError for m, whose
// return programs of kind find a call's entry by the stack pointer,
// unless the offset is measured on this architecture.
func requireReturnSPMeasured(m Mechanism, kind string) error {
	if !slices.Contains(returnSPMeasured, runtime.GOARCH) {
		return m.unsupported("the stack pointer a " + kind + " return sees is measured on x86-64 only; this is " +
			runtime.GOARCH)
	}
	return nil
}

// probeKprobeMulti checks the architecture, the kernel BTF for the
// kprobe_multi attach type and the cookies (requireKprobeMultiCookies); a
// missing fprobe shows as ErrNotSupported (see Mechanism.classify).
func probeKprobeMulti(m Mechanism) error {
	if err := requireReturnSPMeasured(m, "kretprobe.multi"); err != nil {
		return err
	}
	spec, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	if err := requireAttachType(m, spec, "BPF_TRACE_KPROBE_MULTI"); err != nil {
		return err
	}
	return requireKprobeMultiCookies(m)
}
