package rawbpf

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// The attach types the shim passes, as numbered in 7.2's enum
// bpf_attach_type; cilium/ebpf's ELF reader gives fsession programs 58 too.
// CheckAttachType holds each to the running kernel's BTF before use.
const (
	AttachFsession      ebpf.AttachType = 58
	AttachFentryMulti   ebpf.AttachType = 59
	AttachFexitMulti    ebpf.AttachType = 60
	AttachFsessionMulti ebpf.AttachType = 61
)

// attachTypeNames are the shim's attach types' names in enum bpf_attach_type.
var attachTypeNames = map[ebpf.AttachType]string{
	AttachFsession:      "BPF_TRACE_FSESSION",
	AttachFentryMulti:   "BPF_TRACE_FENTRY_MULTI",
	AttachFexitMulti:    "BPF_TRACE_FEXIT_MULTI",
	AttachFsessionMulti: "BPF_TRACE_FSESSION_MULTI",
}

// AttachTypeName is attachType's name in enum bpf_attach_type, "" for one
// the shim does not pass.
func AttachTypeName(attachType ebpf.AttachType) string { return attachTypeNames[attachType] }

// ABIError says where the running kernel's BTF disagrees with a number or
// layout the shim would pass. It wraps ebpf.ErrNotSupported: the shim
// refuses such a kernel rather than pass it wrong values.
type ABIError struct {
	What string // what differs, as read from the kernel BTF
}

func (e *ABIError) Error() string {
	return "the rawbpf shim does not match this kernel's BTF: " + e.What
}

func (e *ABIError) Unwrap() error { return ebpf.ErrNotSupported }

// CheckAttachType returns an *ABIError unless kernel's enum
// bpf_attach_type gives attachType's name the number the shim passes.
func CheckAttachType(kernel *btf.Spec, attachType ebpf.AttachType) error {
	name, ok := attachTypeNames[attachType]
	if !ok {
		return fmt.Errorf("attach type %d is not one the rawbpf shim loads", attachType)
	}
	var enum *btf.Enum
	if err := kernel.TypeByName("bpf_attach_type", &enum); err != nil {
		return &ABIError{What: fmt.Sprintf("enum bpf_attach_type not in kernel BTF: %v", err)}
	}
	for _, v := range enum.Values {
		if v.Name != name {
			continue
		}
		if v.Value != uint64(attachType) {
			return &ABIError{What: fmt.Sprintf("enum bpf_attach_type in kernel BTF has %s = %d, the shim passes %d",
				name, v.Value, attachType)}
		}
		return nil
	}
	return &ABIError{What: "enum bpf_attach_type in kernel BTF has no " + name}
}

// attrField is a field of union bpf_attr the shim writes: its path of
// member names and where the shim's struct puts it.
type attrField struct {
	path         []string
	offset, size uintptr // bytes
}

// linkField is a field of link_create at offset, size bytes.
func linkField(offset, size uintptr, path ...string) attrField {
	return attrField{path: append([]string{"link_create"}, path...), offset: offset, size: size}
}

// tracingMultiFields are the fields of linkCreateTracingMulti, named as
// in union bpf_attr.
var tracingMultiFields = func() []attrField {
	var a linkCreateTracingMulti
	return []attrField{
		linkField(unsafe.Offsetof(a.progFD), unsafe.Sizeof(a.progFD), "prog_fd"),
		linkField(unsafe.Offsetof(a.targetFD), unsafe.Sizeof(a.targetFD), "target_fd"),
		linkField(unsafe.Offsetof(a.attachType), unsafe.Sizeof(a.attachType), "attach_type"),
		linkField(unsafe.Offsetof(a.flags), unsafe.Sizeof(a.flags), "flags"),
		linkField(unsafe.Offsetof(a.ids), unsafe.Sizeof(a.ids), "tracing_multi", "ids"),
		linkField(unsafe.Offsetof(a.cookies), unsafe.Sizeof(a.cookies), "tracing_multi", "cookies"),
		linkField(unsafe.Offsetof(a.cnt), unsafe.Sizeof(a.cnt), "tracing_multi", "cnt"),
	}
}()

// CheckTracingMultiLink returns an *ABIError unless kernel's union
// bpf_attr has every field of the tracing_multi BPF_LINK_CREATE the shim
// writes, at the shim's offset and with its size.
func CheckTracingMultiLink(kernel *btf.Spec) error { return checkFields(kernel, tracingMultiFields) }

// checkFields returns an *ABIError unless kernel's union bpf_attr has
// each of fields where the shim writes it.
func checkFields(kernel *btf.Spec, fields []attrField) error {
	var attr *btf.Union
	if err := kernel.TypeByName("bpf_attr", &attr); err != nil {
		return &ABIError{What: fmt.Sprintf("union bpf_attr not in kernel BTF: %v", err)}
	}
	for _, f := range fields {
		if err := checkField(attr, f); err != nil {
			return err
		}
	}
	return nil
}

func checkField(attr *btf.Union, f attrField) error {
	var t btf.Type = attr
	var offset btf.Bits
	for _, name := range f.path {
		mb, at, ok := findMember(t, name)
		if !ok {
			return &ABIError{What: fmt.Sprintf("union bpf_attr in kernel BTF has no %s", strings.Join(f.path, "."))}
		}
		t, offset = mb.Type, offset+at
	}
	size, err := btf.Sizeof(t)
	if err != nil {
		return &ABIError{What: fmt.Sprintf("union bpf_attr in kernel BTF: size of %s: %v", strings.Join(f.path, "."), err)}
	}
	if uintptr(offset.Bytes()) != f.offset || uintptr(size) != f.size || offset%8 != 0 {
		return &ABIError{What: fmt.Sprintf("union bpf_attr in kernel BTF has %s at byte %d (bit %d), %d bytes; "+
			"the shim writes it at byte %d, %d bytes",
			strings.Join(f.path, "."), offset.Bytes(), offset, size, f.offset, f.size)}
	}
	return nil
}

// findMember finds the member called name in the struct or union t, also
// inside its anonymous members, with its bit offset from t's start.
func findMember(t btf.Type, name string) (btf.Member, btf.Bits, bool) {
	var members []btf.Member
	switch c := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		members = c.Members
	case *btf.Union:
		members = c.Members
	}
	for _, mb := range members {
		if mb.Name == name {
			return mb, mb.Offset, true
		}
		if mb.Name == "" {
			if inner, at, ok := findMember(mb.Type, name); ok {
				return inner, mb.Offset + at, true
			}
		}
	}
	return btf.Member{}, 0, false
}
