package rawbpf

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
)

// linkCreateTracing is BPF_LINK_CREATE's part of union bpf_attr for a
// trampoline program with a cookie (link_create.tracing, Linux 5.19),
// which cilium/ebpf v0.22 sends only for the attach types it knows, not
// fsession's. CheckTracingLink holds it to the running kernel's layout.
type linkCreateTracing struct {
	progFD      uint32
	targetFD    uint32
	attachType  uint32
	flags       uint32
	targetBTFID uint32
	_           uint32
	cookie      uint64
}

// tracingFields are the fields of linkCreateTracing, named as in union
// bpf_attr.
var tracingFields = func() []attrField {
	var a linkCreateTracing
	return []attrField{
		linkField(unsafe.Offsetof(a.progFD), unsafe.Sizeof(a.progFD), "prog_fd"),
		linkField(unsafe.Offsetof(a.targetFD), unsafe.Sizeof(a.targetFD), "target_fd"),
		linkField(unsafe.Offsetof(a.attachType), unsafe.Sizeof(a.attachType), "attach_type"),
		linkField(unsafe.Offsetof(a.flags), unsafe.Sizeof(a.flags), "flags"),
		linkField(unsafe.Offsetof(a.targetBTFID), unsafe.Sizeof(a.targetBTFID), "tracing", "target_btf_id"),
		linkField(unsafe.Offsetof(a.cookie), unsafe.Sizeof(a.cookie), "tracing", "cookie"),
	}
}()

// CheckTracingLink returns an *ABIError unless kernel's union bpf_attr
// has every field of the tracing BPF_LINK_CREATE the shim writes, at the
// shim's offset and with its size.
func CheckTracingLink(kernel *btf.Spec) error { return checkFields(kernel, tracingFields) }

// LinkTracing attaches prog, a trampoline program loaded with attachType
// for one function, with a BPF_LINK_CREATE carrying cookie (what
// bpf_get_attach_cookie returns in its runs); the link is a cilium/ebpf
// RawLink. Errors: an *ABIError where the kernel's BTF numbers attachType
// or lays out link_create.tracing otherwise.
func LinkTracing(prog *ebpf.Program, attachType ebpf.AttachType, cookie uint64) (link.Link, error) {
	kernel, err := kernelbtf.Spec()
	if err != nil {
		return nil, err
	}
	if _, ok := attachTypeNames[attachType]; ok {
		if err := CheckAttachType(kernel, attachType); err != nil {
			return nil, err
		}
	}
	if err := CheckTracingLink(kernel); err != nil {
		return nil, err
	}
	attr := linkCreateTracing{progFD: uint32(prog.FD()), attachType: uint32(attachType), cookie: cookie}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return nil, fmt.Errorf("BPF_LINK_CREATE (tracing, cookie %#x): %w", cookie, errno)
	}
	return link.NewFromFD(int(fd))
}
