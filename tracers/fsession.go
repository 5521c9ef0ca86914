package tracers

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// fsession: one program at entry and return of vfs_read, the entry time in
// the session cookie (Linux 7.0). Loaded through fsession_loader.go.
var fsession = Mechanism{
	Name:        "fsession",
	Summary:     "one fsession program at entry and return; entry time in the session cookie",
	needs:       "BPF_TRACE_FSESSION (Linux 7.0)",
	probe:       probeFsession,
	spec:        loadFsession,
	loadProgram: loadFsessionProgram,
	attach:      attachTracing("vfs_read_session"),
}

// probeFsession looks in the kernel's BTF for the fsession attach type and
// for the ctx-taking session kfuncs.
func probeFsession(m Mechanism) error {
	spec, _, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	if err := requireAttachType(m, spec, "BPF_TRACE_FSESSION"); err != nil {
		return err
	}
	return requireSessionKfuncs(m, spec)
}

// requireAttachType returns an *UnsupportedError unless the kernel's enum
// bpf_attach_type names attachType.
func requireAttachType(m Mechanism, spec *btf.Spec, attachType string) error {
	var attachTypes *btf.Enum
	if err := spec.TypeByName("bpf_attach_type", &attachTypes); err != nil {
		return m.unsupported(fmt.Sprintf("enum bpf_attach_type not in kernel BTF: %v", err))
	}
	if _, ok := enumValue(attachTypes, attachType); !ok {
		return m.unsupported("enum bpf_attach_type in kernel BTF has no " + attachType)
	}
	return nil
}

// requireSessionKfuncs checks for bpf_session_cookie taking ctx, as the
// fsession programs call it: before 7.0 it took no argument (kprobe and
// uprobe sessions only), and a program built for one form fails on the
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

func enumValue(e *btf.Enum, name string) (uint64, bool) {
	for _, v := range e.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}
