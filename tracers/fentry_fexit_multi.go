package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FentryFexitMulti ../bpf/fentry_fexit_multi.bpf.c

import (
	"tracebench/funcset"
	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fentry-fexit-multi: fentry.multi and fexit.multi programs on two
// tracing_multi links naming every traced function (kernel 7.2), loaded
// and linked by rawbpf; the entry time in a hash map keyed by pid_tgid and
// the trampoline frame, which nested calls do not share. Recursion misses
// are counted per program, not per function.
var fentryFexitMulti = Mechanism{
	Name: "fentry-fexit-multi",
	Summary: "fentry.multi + fexit.multi programs on two tracing_multi links naming every traced function;" +
		" entry time in a hash map keyed by pid_tgid and the trampoline frame",
	Can: bpfCapabilities(RoleSubject, StateCallHashMap, LossRecursion|LossMapFull,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Fentry, funcset.Fexit}, Shared: FieldMissed}),
	// In 7.2's BTF, not in 7.0's, as fsession-multi's.
	Needs: Requirement{"BPF_TRACE_FENTRY_MULTI and BPF_TRACE_FEXIT_MULTI with tracing_multi links" +
		" (BPF_LINK_TYPE_TRACING_MULTI)", KernelVersion{7, 2}},
	probe:       probeTracingMulti(false, rawbpf.AttachFentryMulti, rawbpf.AttachFexitMulti),
	spec:        bpfobj.LoadFentryFexitMulti,
	loadProgram: rawbpf.LoadTracingMulti,
	attach:      attachTracingMulti("entry_multi", "exit_multi"),
}
