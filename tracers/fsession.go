package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj Fsession ../bpf/fsession.bpf.c

import (
	"github.com/cilium/ebpf/btf"

	"tracebench/funcset"
	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fsession: one program at entry and return of vfs_read, the entry time in
// the session cookie (Linux 7.0); loaded by the rawbpf shim.
var fsession = Mechanism{
	Name:        "fsession",
	Summary:     "one fsession program at entry and return; entry time in the session cookie",
	Can:         bpfCapabilities(RoleTool, StateSessionCookie, LossRecursion, vfsReadOnly(funcset.Fexit)),
	Needs:       Requirement{"BPF_TRACE_FSESSION", KernelVersion{7, 0}},
	probe:       probeFsession,
	spec:        bpfobj.LoadFsession,
	loadProgram: rawbpf.LoadFsession,
	attach:      attachTracing("vfs_read_session"),
}

// probeFsession looks in the kernel's BTF for the fsession attach type,
// numbered as the shim passes it, and for the ctx-taking session kfuncs.
func probeFsession(m Mechanism) error {
	spec, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	return fsessionBTF(m, spec)
}

func fsessionBTF(m Mechanism, spec *btf.Spec) error {
	if err := sessionBTF(m, spec, "BPF_TRACE_FSESSION", true); err != nil {
		return err
	}
	return shimMatches(m, rawbpf.CheckAttachType(spec, rawbpf.AttachFsession))
}
