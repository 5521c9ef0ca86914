package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FentryFexitEach ../bpf/fentry_fexit_each.bpf.c

import (
	"tracebench/funcset"
	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fentry-fexit-each: an fentry and an fexit program per traced function,
// as the kernel requires (a trampoline program's target is fixed at load),
// loaded by the rawbpf shim against the shared kernel BTF (cilium/ebpf
// v0.22 decodes it again on every program load, ~148 ms each in the
// guest), each attached with a link of its own whose cookie names the
// function; the entry time in a hash map keyed by pid_tgid and the
// trampoline frame. Each program counts its own recursion misses, so they
// are known per function.
var fentryFexitEach = Mechanism{
	Name: "fentry-fexit-each",
	Summary: "an fentry + fexit program per traced function, a link each; entry time in a hash map keyed by" +
		" pid_tgid and the trampoline frame",
	Can: bpfCapabilities(RoleSubject, StateCallHashMap, LossRecursion|LossMapFull,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Fentry, funcset.Fexit}}),
	Needs: Requirement{"BPF trampolines for fentry/fexit (5.5, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS), tracing" +
		" links with a cookie (link_create.tracing.cookie, 5.19) and BPF_CMPXCHG in programs", KernelVersion{5, 19}},
	probe:       probeTracingCookie,
	spec:        bpfobj.LoadFentryFexitEach,
	loadProgram: rawbpf.LoadTracing,
	perFunction: true,
	attach:      attachEachFunction("entry_each", "exit_each"),
}

// probeTracingCookie checks the kernel BTF for vfs_read and for the
// cookie of a tracing link, at the offset the shim writes it.
func probeTracingCookie(m Mechanism) error {
	spec, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	return shimMatches(m, rawbpf.CheckTracingLink(spec))
}
