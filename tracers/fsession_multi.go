package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FsessionMulti ../bpf/fsession_multi.bpf.c

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/internal/rawbpf"
	"tracebench/tracers/internal/bpfobj"
)

// fsession-multi: the fsession program loaded as BPF_TRACE_FSESSION_MULTI
// and attached through a tracing_multi link (kernel 7.2), both by rawbpf.
var fsessionMulti = Mechanism{
	Name: "fsession-multi",
	Summary: "one fsession.multi program on a tracing_multi link; entry time in the session cookie," +
		" arguments via bpf_get_func_arg",
	Can: bpfCapabilities(RoleSubject, StateSessionCookie, LossRecursion),
	// In 7.2's BTF, not in 7.0's (no 7.1 was available to check).
	Needs: Requirement{"BPF_TRACE_FSESSION_MULTI with a tracing_multi link (BPF_LINK_TYPE_TRACING_MULTI)",
		KernelVersion{7, 2}},
	probe:       probeTracingMulti("BPF_TRACE_FSESSION_MULTI", rawbpf.AttachFsessionMulti),
	spec:        bpfobj.LoadFsessionMulti,
	loadProgram: rawbpf.LoadTracingMulti,
	attach:      attachTracingMulti("vfs_read_session_multi", rawbpf.AttachFsessionMulti, "vfs_read"),
}

// probeTracingMulti checks the kernel BTF for attachType (named name),
// bpf_multi_func, link_create's tracing_multi member and the ctx-taking
// session kfuncs.
func probeTracingMulti(name string, attachType ebpf.AttachType) func(Mechanism) error {
	return func(m Mechanism) error {
		spec, err := vfsReadBTF(m)
		if err != nil {
			return err
		}
		return tracingMultiBTF(m, spec, name, attachType)
	}
}

func tracingMultiBTF(m Mechanism, spec *btf.Spec, name string, attachType ebpf.AttachType) error {
	if err := requireAttachType(m, spec, name); err != nil {
		return err
	}
	if err := shimMatches(m, rawbpf.CheckAttachType(spec, attachType)); err != nil {
		return err
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
	return requireSessionKfuncs(m, spec)
}

// attachTracingMulti attaches the named program, loaded with attachType,
// to function with a tracing_multi link.
func attachTracingMulti(name string, attachType ebpf.AttachType, function string) attachFunc {
	return func(progs map[string]*ebpf.Program, _ Config) ([]link.Link, error) {
		prog, err := program(progs, name)
		if err != nil {
			return nil, err
		}
		return attachEach(func() (link.Link, error) {
			l, err := rawbpf.LinkTracingMulti(prog, attachType, function)
			if errors.Is(err, unix.EOPNOTSUPP) {
				// The attach type is in BTF, yet the kernel cannot make the
				// link here (7.2 on arm64); classify reports it unsupported.
				return nil, fmt.Errorf("%w (EOPNOTSUPP): %w", ebpf.ErrNotSupported, err)
			}
			return l, err
		})
	}
}
