package rawbpf

import (
	"errors"
	"fmt"
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
	return loadTracingProgram(ps, 0)
}

// linkCreateTracingMulti is BPF_LINK_CREATE's part of union bpf_attr with
// the tracing_multi member, as 7.2's BTF lays it out (CheckTracingMultiLink
// holds it to the running kernel's). The __u64 pointers are held as
// pointers (8 bytes on the 64-bit architectures tracebench runs on), so
// that what they point to stays where it is until the system call.
type linkCreateTracingMulti struct {
	progFD     uint32
	targetFD   uint32
	attachType uint32
	flags      uint32
	ids        unsafe.Pointer // __u32 BTF IDs of the target functions
	cookies    unsafe.Pointer // __u64 attach cookies, one per ID; optional
	cnt        uint32
	_          uint32
}

// TracingMultiOptions name the functions of one tracing_multi link.
type TracingMultiOptions struct {
	// Functions are vmlinux functions, by name; each must be in the
	// kernel's BTF and appear once.
	Functions []string
	// Cookies, if set, holds one value per function, in the same order:
	// what bpf_get_attach_cookie returns in the program's runs for it.
	Cookies []uint64
}

// LinkTracingMulti attaches prog, loaded with attachType, to one kernel
// function with BPF_LINK_CREATE; the link is a cilium/ebpf RawLink. It
// returns an *ABIError where the kernel's BTF numbers attachType or lays
// out the tracing_multi member otherwise.
func LinkTracingMulti(prog *ebpf.Program, attachType ebpf.AttachType, function string) (link.Link, error) {
	return LinkTracingMultiFunctions(prog, attachType, TracingMultiOptions{Functions: []string{function}})
}

// LinkTracingMultiFunctions attaches prog, loaded with attachType, to
// every function of opts with one BPF_LINK_CREATE: all of them or, when
// the kernel refuses one, none (it names none: the error carries its
// errno). Errors: an *ABIError as LinkTracingMulti's; a bad opts (no
// function, a duplicate, a name not in kernel BTF, cookies of another
// count) before any system call.
func LinkTracingMultiFunctions(prog *ebpf.Program, attachType ebpf.AttachType, opts TracingMultiOptions) (link.Link, error) {
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
	ids, err := functionIDs(opts)
	if err != nil {
		return nil, err
	}
	attr := tracingMultiAttr(prog.FD(), attachType, ids, opts.Cookies)
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return nil, fmt.Errorf("BPF_LINK_CREATE (tracing_multi, %d functions): %w", len(ids), errno)
	}
	return link.NewFromFD(int(fd))
}

// functionIDs resolves opts.Functions to BTF IDs, refusing what the
// kernel would refuse without saying which function: nothing to attach,
// a repeated name, cookies that do not pair with the functions.
func functionIDs(opts TracingMultiOptions) ([]uint32, error) {
	if len(opts.Functions) == 0 {
		return nil, errors.New("tracing_multi link: no function to attach")
	}
	if opts.Cookies != nil && len(opts.Cookies) != len(opts.Functions) {
		return nil, fmt.Errorf("tracing_multi link: %d cookies for %d functions", len(opts.Cookies), len(opts.Functions))
	}
	ids := make([]uint32, len(opts.Functions))
	seen := make(map[string]bool, len(opts.Functions))
	for i, name := range opts.Functions {
		if seen[name] {
			return nil, fmt.Errorf("tracing_multi link: function %q given twice", name)
		}
		seen[name] = true
		id, err := kernelFuncID(name)
		if err != nil {
			return nil, fmt.Errorf("tracing_multi link: %w", err)
		}
		ids[i] = uint32(id)
	}
	return ids, nil
}

// tracingMultiAttr encodes the BPF_LINK_CREATE attribute.
func tracingMultiAttr(progFD int, attachType ebpf.AttachType, ids []uint32, cookies []uint64) linkCreateTracingMulti {
	attr := linkCreateTracingMulti{
		progFD:     uint32(progFD),
		attachType: uint32(attachType),
		ids:        unsafe.Pointer(&ids[0]),
		cnt:        uint32(len(ids)),
	}
	if len(cookies) > 0 {
		attr.cookies = unsafe.Pointer(&cookies[0])
	}
	return attr
}
