package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FsessionEach ../bpf/fsession_each.bpf.c

import (
	"tracebench/funcset"
	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fsession-each: an fsession program per traced function (Linux 7.0), as
// the kernel requires, loaded by the rawbpf shim against the shared
// kernel BTF and attached with a tracing link of its own whose cookie
// names the function; the entry time in the session cookie. Each program
// counts its own recursion misses, so they are known per function.
var fsessionEach = Mechanism{
	Name:        "fsession-each",
	Summary:     "an fsession program per traced function, a link each; entry time in the session cookie",
	Can:         bpfCapabilities(RoleSubject, StateSessionCookie, LossRecursion, FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Fexit}}),
	Needs:       Requirement{"BPF_TRACE_FSESSION with tracing links carrying a cookie", KernelVersion{7, 0}},
	probe:       probeFsessionEach,
	spec:        bpfobj.LoadFsessionEach,
	loadProgram: rawbpf.LoadFsession,
	perFunction: true,
	attach:      attachEachFunction("session_each"),
}

func probeFsessionEach(m Mechanism) error {
	if err := probeFsession(m); err != nil {
		return err
	}
	return probeTracingCookie(m)
}
