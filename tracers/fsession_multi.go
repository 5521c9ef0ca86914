package tracers

// This file, like fsession_loader.go, fills a gap in cilium/ebpf v0.22.0:
// it knows neither the tracing_multi attach types (BPF_TRACE_FENTRY_MULTI,
// _FEXIT_MULTI, _FSESSION_MULTI; in 7.2's BTF) nor their section names,
// nor the tracing_multi part of BPF_LINK_CREATE. Programs of these types
// are loaded against the kernel's generic bpf_multi_func and attached by
// a link naming the target functions by BTF ID. Delete this file's shim
// once a cilium/ebpf release supports them.

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// fsession-multi: the fsession program loaded as BPF_TRACE_FSESSION_MULTI
// and attached through a tracing_multi link (kernel 7.2 BTF; no release of
// cilium/ebpf supports it, see the shim below).
var fsessionMulti = Mechanism{
	Name:        "fsession-multi",
	Summary:     "one fsession.multi program on a tracing_multi link; entry time in the session cookie, arguments via bpf_get_func_arg",
	needs:       "BPF_TRACE_FSESSION_MULTI with a tracing_multi link (BPF_LINK_TYPE_TRACING_MULTI, kernel 7.2 BTF)",
	probe:       probeTracingMulti("BPF_TRACE_FSESSION_MULTI"),
	spec:        loadFsessionMulti,
	loadProgram: loadTracingMultiProgram,
	attach:      attachTracingMulti("vfs_read_session_multi", multiAttachTypes["fsession.multi"], "vfs_read"),
}

// multiAttachTypes maps the section prefixes of tracing_multi programs
// (libbpf's names) to their attach types, as numbered in 7.2's enum
// bpf_attach_type.
var multiAttachTypes = map[string]ebpf.AttachType{
	"fentry.multi":   59, // BPF_TRACE_FENTRY_MULTI
	"fexit.multi":    60, // BPF_TRACE_FEXIT_MULTI
	"fsession.multi": 61, // BPF_TRACE_FSESSION_MULTI
}

// multiFunc is the kernel function every tracing_multi program is
// verified against: the kernel picks it when the program is loaded with
// attach_btf_id 0 (it refuses any ID, even this function's: EINVAL, seen
// in the 7.2 guest). It has no parameters, so arguments are read with
// bpf_get_func_arg.
const multiFunc = "bpf_multi_func"

// probeTracingMulti checks the kernel BTF for attachType, for
// bpf_multi_func, for the tracing_multi member of union bpf_attr's
// link_create, and for the ctx-taking session kfuncs.
func probeTracingMulti(attachType string) func(Mechanism) error {
	return func(m Mechanism) error {
		spec, _, err := vfsReadBTF(m)
		if err != nil {
			return err
		}
		if err := requireAttachType(m, spec, attachType); err != nil {
			return err
		}
		var fn *btf.Func
		if err := spec.TypeByName(multiFunc, &fn); err != nil {
			return m.unsupported(fmt.Sprintf("function %s not in kernel BTF: %v", multiFunc, err))
		}
		if !hasMember(spec, "bpf_attr", "tracing_multi") {
			return m.unsupported("union bpf_attr in kernel BTF has no link_create.tracing_multi")
		}
		return requireSessionKfuncs(m, spec)
	}
}

// hasMember reports whether the named struct or union in spec has a member
// called member, looking into anonymous and nested members.
func hasMember(spec *btf.Spec, typ, member string) bool {
	var composite btf.Type
	var u *btf.Union
	if err := spec.TypeByName(typ, &u); err == nil {
		composite = u
	}
	var s *btf.Struct
	if err := spec.TypeByName(typ, &s); err == nil {
		composite = s
	}
	return composite != nil && findMember(composite, member, 4)
}

func findMember(t btf.Type, name string, depth int) bool {
	var members []btf.Member
	switch c := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		members = c.Members
	case *btf.Union:
		members = c.Members
	default:
		return false
	}
	for _, mb := range members {
		if mb.Name == name || depth > 0 && findMember(mb.Type, name, depth-1) {
			return true
		}
	}
	return false
}

// loadTracingMultiProgram loads ps, from a SEC("<kind>.multi/<function>"),
// as a tracing program of that kind (verified against bpf_multi_func).
func loadTracingMultiProgram(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
	kind, _, _ := strings.Cut(ps.SectionName, "/")
	attachType, ok := multiAttachTypes[kind]
	if !ok {
		return nil, fmt.Errorf("section %q is not a tracing_multi section", ps.SectionName)
	}
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, err
	}
	ps.Type, ps.AttachType = ebpf.Tracing, attachType
	return loadTracingProgram(ps, kernel, 0)
}

// linkCreateTracingMulti is BPF_LINK_CREATE's part of union bpf_attr with
// the tracing_multi member, as 7.2's BTF lays it out.
type linkCreateTracingMulti struct {
	progFD     uint32
	targetFD   uint32
	attachType uint32
	flags      uint32
	ids        uint64 // pointer to __u32 BTF IDs of the target functions
	cookies    uint64 // pointer to __u64 attach cookies, one per ID; optional
	cnt        uint32
	_          uint32
}

// attachTracingMulti attaches the named program, loaded with attachType,
// to function with a tracing_multi link.
func attachTracingMulti(name string, attachType ebpf.AttachType, function string) func(map[string]*ebpf.Program, Config) ([]link.Link, error) {
	return func(progs map[string]*ebpf.Program, _ Config) ([]link.Link, error) {
		return attachEach(func() (link.Link, error) { return linkTracingMulti(progs[name], attachType, function) })
	}
}

// linkTracingMulti issues BPF_LINK_CREATE for prog on one kernel function;
// link.NewFromFD wraps the result (as a RawLink: cilium/ebpf does not
// know the link type).
func linkTracingMulti(prog *ebpf.Program, attachType ebpf.AttachType, function string) (link.Link, error) {
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, err
	}
	target, err := kernelFuncID(kernel, function)
	if err != nil {
		return nil, err
	}
	ids := []uint32{uint32(target)}
	attr := linkCreateTracingMulti{
		progFD:     uint32(prog.FD()),
		attachType: uint32(attachType),
		ids:        uint64(uintptr(unsafe.Pointer(&ids[0]))),
		cnt:        uint32(len(ids)),
	}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(ids)
	if errno != 0 {
		return nil, fmt.Errorf("BPF_LINK_CREATE (tracing_multi): %w", errno)
	}
	return link.NewFromFD(int(fd))
}
