package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FentryFexit ../bpf/fentry_fexit.bpf.c

import (
	"tracebench/funcset"
	"tracebench/tracers/internal/bpfobj"
)

// fentry-fexit: two trampoline programs (Linux 5.5) sharing the entry time
// through a hash map keyed by pid_tgid.
var fentryFexit = Mechanism{
	Name:    "fentry-fexit",
	Summary: "fentry + fexit programs; entry time in a hash map keyed by pid_tgid",
	Can:     bpfCapabilities(RoleTool, StateHashMap, LossRecursion|LossMapFull, vfsReadOnly(funcset.Fentry, funcset.Fexit)),
	Needs: Requirement{"BPF trampolines for fentry/fexit (5.5, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS) and" +
		" BPF_CMPXCHG in programs", KernelVersion{5, 12}},
	probe:  probeTrampoline,
	spec:   bpfobj.LoadFentryFexit,
	attach: attachTracing("vfs_read_entry", "vfs_read_exit"),
}
