package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FsessionMulti ../bpf/fsession_multi.bpf.c

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"tracebench/funcset"
	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fsession-multi: one fsession program loaded as BPF_TRACE_FSESSION_MULTI
// and attached through one tracing_multi link naming every traced function
// (kernel 7.2), both by rawbpf; each run learns its function from the
// link's cookie. The kernel counts recursion misses per program, so a
// function's own are unknown when it traces several.
var fsessionMulti = Mechanism{
	Name: "fsession-multi",
	Summary: "one fsession.multi program on one tracing_multi link naming every traced function; entry time in" +
		" the session cookie, arguments via bpf_get_func_arg",
	Can: bpfCapabilities(RoleSubject, StateSessionCookie, LossRecursion,
		FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Fexit}, Shared: FieldMissed}),
	// In 7.2's BTF, not in 7.0's (no 7.1 was available to check).
	Needs: Requirement{"BPF_TRACE_FSESSION_MULTI with a tracing_multi link (BPF_LINK_TYPE_TRACING_MULTI)",
		KernelVersion{7, 2}},
	probe:       probeTracingMulti(true, rawbpf.AttachFsessionMulti),
	spec:        bpfobj.LoadFsessionMulti,
	loadProgram: rawbpf.LoadTracingMulti,
	attach:      attachTracingMulti("vfs_read_session_multi"),
}

// probeTracingMulti checks the kernel BTF for the tracing_multi
// attachTypes, numbered as the shim passes them, bpf_multi_func,
// link_create's tracing_multi member and, with session, the ctx-taking
// session kfuncs.
func probeTracingMulti(session bool, attachTypes ...ebpf.AttachType) func(Mechanism) error {
	return func(m Mechanism) error {
		spec, err := vfsReadBTF(m)
		if err != nil {
			return err
		}
		return tracingMultiBTF(m, spec, session, attachTypes...)
	}
}

func tracingMultiBTF(m Mechanism, spec *btf.Spec, session bool, attachTypes ...ebpf.AttachType) error {
	for _, at := range attachTypes {
		if err := requireAttachType(m, spec, rawbpf.AttachTypeName(at)); err != nil {
			return err
		}
		if err := shimMatches(m, rawbpf.CheckAttachType(spec, at)); err != nil {
			return err
		}
	}
	var fn *btf.Func
	if err := spec.TypeByName(rawbpf.MultiFunc, &fn); err != nil {
		return m.unsupported(fmt.Sprintf("function %s not in kernel BTF: %v", rawbpf.MultiFunc, err))
	}
	if !hasMember(spec, "bpf_attr", "tracing_multi") {
		return m.unsupported("union bpf_attr in kernel BTF has no link_create.tracing_multi")
	}
	if err := shimMatches(m, rawbpf.CheckTracingMultiLink(spec)); err != nil {
		return err
	}
	if session {
		return requireSessionKfuncs(m, spec)
	}
	return nil
}
