package rawbpf

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
)

// MultiAttachTypes maps the section prefixes of tracing_multi programs
// (libbpf's names) to their attach types, as numbered in 7.2's enum
// bpf_attach_type.
var MultiAttachTypes = map[string]ebpf.AttachType{
	"fentry.multi":   AttachFentryMulti,
	"fexit.multi":    AttachFexitMulti,
	"fsession.multi": AttachFsessionMulti,
}

// MultiFunc is the function the kernel verifies every tracing_multi
// program against: it is loaded with attach_btf_id 0 (the kernel refuses
// any ID). It has no parameters: arguments come from bpf_get_func_arg.
const MultiFunc = "bpf_multi_func"

// LoadTracingMulti loads ps, from a SEC("<kind>.multi/<function>"), as a
// tracing program of that kind; an *ABIError where the kernel numbers its
// attach type otherwise.
func LoadTracingMulti(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
	kind, _, _ := strings.Cut(ps.SectionName, "/")
	attachType, ok := MultiAttachTypes[kind]
	if !ok {
		return nil, fmt.Errorf("section %q is not a tracing_multi section", ps.SectionName)
	}
	kernel, err := kernelbtf.Spec()
	if err != nil {
		return nil, err
	}
	if err := CheckAttachType(kernel, attachType); err != nil {
		return nil, err
	}
	ps.Type, ps.AttachType = ebpf.Tracing, attachType
	return loadTracingProgram(ps, kernel, 0)
}

// linkCreateTracingMulti is BPF_LINK_CREATE's part of union bpf_attr with
// the tracing_multi member, as 7.2's BTF lays it out (CheckTracingMultiLink
// holds it to the running kernel's).
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

// LinkTracingMulti attaches prog, loaded with attachType, to one kernel
// function with BPF_LINK_CREATE; the link is a cilium/ebpf RawLink. It
// returns an *ABIError where the kernel's BTF numbers attachType or lays
// out the tracing_multi member otherwise.
func LinkTracingMulti(prog *ebpf.Program, attachType ebpf.AttachType, function string) (link.Link, error) {
	kernel, err := kernelbtf.Spec()
	if err != nil {
		return nil, err
	}
	if err := CheckAttachType(kernel, attachType); err != nil {
		return nil, err
	}
	if err := CheckTracingMultiLink(kernel); err != nil {
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
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(ids)
	if errno != 0 {
		return nil, fmt.Errorf("BPF_LINK_CREATE (tracing_multi): %w", errno)
	}
	return link.NewFromFD(int(fd))
}
