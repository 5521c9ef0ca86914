package tracers

import (
	"fmt"

	"github.com/cilium/ebpf/btf"

	"tracebench/internal/kernelbtf"
)

// kernelBTF returns the running kernel's BTF, or an *UnsupportedError for m
// when there is none (CONFIG_DEBUG_INFO_BTF unset).
func kernelBTF(m Mechanism) (*btf.Spec, error) {
	spec, err := kernelbtf.Spec()
	if err != nil {
		return nil, &UnsupportedError{Mechanism: m.Name, Needs: "kernel BTF (CONFIG_DEBUG_INFO_BTF)",
			Kernel: KernelRelease(), Detected: err.Error()}
	}
	return spec, nil
}

// vfsReadBTF returns the kernel BTF, failing unless it describes vfs_read.
func vfsReadBTF(m Mechanism) (*btf.Spec, error) {
	spec, err := kernelBTF(m)
	if err != nil {
		return nil, err
	}
	var fn *btf.Func
	if err := spec.TypeByName("vfs_read", &fn); err != nil {
		return nil, m.unsupported(fmt.Sprintf("vfs_read not found in kernel BTF: %v", err))
	}
	return spec, nil
}

// requireAttachType returns an *UnsupportedError unless the kernel's enum
// bpf_attach_type names attachType.
func requireAttachType(m Mechanism, spec *btf.Spec, attachType string) error {
	var attachTypes *btf.Enum
	if err := spec.TypeByName("bpf_attach_type", &attachTypes); err != nil {
		return m.unsupported(fmt.Sprintf("enum bpf_attach_type not in kernel BTF: %v", err))
	}
	for _, v := range attachTypes.Values {
		if v.Name == attachType {
			return nil
		}
	}
	return m.unsupported("enum bpf_attach_type in kernel BTF has no " + attachType)
}

// probeSession checks the kernel BTF for vfs_read, attachType and the
// session kfuncs: taking ctx (7.0) if withCtx, else in either form.
func probeSession(m Mechanism, attachType string, withCtx bool) error {
	spec, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	return sessionBTF(m, spec, attachType, withCtx)
}

// sessionBTF is probeSession's check of spec, once it describes vfs_read.
func sessionBTF(m Mechanism, spec *btf.Spec, attachType string, withCtx bool) error {
	if err := requireAttachType(m, spec, attachType); err != nil {
		return err
	}
	if withCtx {
		return requireSessionKfuncs(m, spec)
	}
	if _, err := sessionKfuncsTakeCtx(spec); err != nil {
		return m.unsupported(err.Error())
	}
	return nil
}

// shimMatches turns the rawbpf shim's finding that the kernel's BTF
// numbers or lays out what it passes otherwise (a rawbpf.ABIError) into an
// *UnsupportedError: the shim refuses rather than pass wrong numbers.
func shimMatches(m Mechanism, err error) error {
	if err != nil {
		return m.unsupported(err.Error())
	}
	return nil
}

// requireSessionKfuncs checks that bpf_session_cookie takes ctx (7.0), as
// the fsession programs call it; a program built for one form fails on the
// other.
func requireSessionKfuncs(m Mechanism, spec *btf.Spec) error {
	withCtx, err := sessionKfuncsTakeCtx(spec)
	switch {
	case err != nil:
		return m.unsupported(err.Error())
	case !withCtx:
		return m.unsupported("kfunc bpf_session_cookie in kernel BTF takes no ctx argument (the pre-7.0 form)")
	}
	return nil
}

// sessionKfuncsTakeCtx reports whether the kernel's bpf_session_cookie
// takes ctx (7.0) or nothing (6.10 to 6.19); an error if it has none.
func sessionKfuncsTakeCtx(spec *btf.Spec) (bool, error) {
	var cookie *btf.Func
	if err := spec.TypeByName("bpf_session_cookie", &cookie); err != nil {
		return false, fmt.Errorf("kfunc bpf_session_cookie not in kernel BTF: %w", err)
	}
	proto, ok := cookie.Type.(*btf.FuncProto)
	return ok && len(proto.Params) == 1, nil
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
	for _, mb := range members(t) {
		if mb.Name == name || depth > 0 && findMember(mb.Type, name, depth-1) {
			return true
		}
	}
	return false
}

// hasMemberPath reports whether t has the nested members path, looking
// through anonymous structs and unions on the way.
func hasMemberPath(t btf.Type, path ...string) bool {
	if len(path) == 0 {
		return true
	}
	for _, mb := range members(t) {
		if mb.Name == path[0] && hasMemberPath(mb.Type, path[1:]...) || mb.Name == "" && hasMemberPath(mb.Type, path...) {
			return true
		}
	}
	return false
}

// members lists the members of a struct or union, none for other types.
func members(t btf.Type) []btf.Member {
	switch c := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		return c.Members
	case *btf.Union:
		return c.Members
	}
	return nil
}

// memberOffset returns the byte offset of the member called name in the
// struct t (an object's type, as a map's value), -1 if it has none.
func memberOffset(t btf.Type, name string) int {
	for _, mb := range members(t) {
		if mb.Name == name {
			return int(mb.Offset.Bytes())
		}
	}
	return -1
}
