package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeKretprobeEach ../bpf/kprobe_kretprobe_each.bpf.c

import (
	"tracebench/funcset"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-kretprobe-each: a kprobe and a kretprobe perf-event link per
// traced function (as bcc's attach_kprobe(event_re=...) and most agents
// attach), sharing one program of each, each link's cookie naming its
// function (Linux 5.15); entry time and vfs_read's count in a hash map
// keyed by pid_tgid, the entry stack pointer, which the return run finds
// at a fixed offset (bpf/calls.h) measured on x86-64 only, and the
// function. Each function's kretprobe follows at most
// Config.KretprobeMaxActive calls at once (the kernel's maxactive; a
// non-zero value makes a tracefs kprobe event per function); the return
// of a call beyond it is missed. Misses are each link's (link.Info's
// Missed, from 6.7) summed with the two programs' recursion misses: the
// programs serve every function, so they are not known per function.
var kprobeKretprobeEach = Mechanism{
	Name: "kprobe-kretprobe-each",
	Summary: "a kprobe + kretprobe perf-event link per traced function, sharing one program of each; entry time" +
		" and count in a hash map keyed by pid_tgid, the entry stack pointer and the function",
	Can: kprobeCapabilities(bpfCapabilities(RoleSubject, StateCallHashMap, LossRecursion|LossMaxActive|LossMapFull,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Kprobe}, Shared: FieldMissed})),
	Needs: Requirement{"kprobes (CONFIG_KPROBES with perf kprobe events), perf-event BPF links with a cookie" +
		" (BPF_PERF_EVENT) and BPF_CMPXCHG in programs, x86-64", KernelVersion{5, 15}},
	probe:  probeKprobeEach,
	spec:   bpfobj.LoadKprobeKretprobeEach,
	attach: attachKprobeEach("entry_keach", "return_keach"),
}

// probeKprobeEach checks the architecture, the kprobe PMU and the kernel
// BTF for the perf-event link's attach type, which came with its cookie.
func probeKprobeEach(m Mechanism) error {
	if err := requireReturnSPMeasured(m, "kretprobe"); err != nil {
		return err
	}
	if err := probeKprobe(m); err != nil {
		return err
	}
	spec, err := kernelBTF(m)
	if err != nil {
		return err
	}
	return requireAttachType(m, spec, "BPF_PERF_EVENT")
}
