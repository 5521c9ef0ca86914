package tracers

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/rawbpf"
)

// sessionKernel is a kernel BTF with the ctx-taking bpf_session_cookie and
// an enum bpf_attach_type of the given values.
func sessionKernel(t *testing.T, attachTypes map[string]uint64) *btf.Spec {
	t.Helper()
	enum := &btf.Enum{Name: "bpf_attach_type", Size: 4}
	for name, v := range attachTypes {
		enum.Values = append(enum.Values, btf.EnumValue{Name: name, Value: v})
	}
	ptr := &btf.Pointer{Target: &btf.Void{}}
	cookie := &btf.Func{Name: "bpf_session_cookie", Linkage: btf.GlobalFunc,
		Type: &btf.FuncProto{Return: ptr, Params: []btf.FuncParam{{Name: "ctx", Type: ptr}}}}
	b, err := btf.NewBuilder([]btf.Type{enum, cookie}, nil)
	require.NoError(t, err)
	raw, err := b.Marshal(nil, nil)
	require.NoError(t, err)
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	require.NoError(t, err)
	return spec
}

// A kernel whose enum names the attach types but numbers them otherwise
// than the rawbpf shim passes them: the probes refuse it, saying so,
// instead of loading with the wrong numbers.
func TestProbesRefuseOtherAttachTypeNumbers(t *testing.T) {
	other := sessionKernel(t, map[string]uint64{"BPF_TRACE_FSESSION": 60, "BPF_TRACE_FSESSION_MULTI": 64})
	err := fsessionBTF(fsession, other)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "fsession needs BPF_TRACE_FSESSION (Linux 7.0); this kernel is ")
	assert.ErrorContains(t, err, ": the rawbpf shim does not match this kernel's BTF: "+
		"enum bpf_attach_type in kernel BTF has BPF_TRACE_FSESSION = 60, the shim passes 58")

	err = tracingMultiBTF(fsessionMulti, other, true, rawbpf.AttachFsessionMulti)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err,
		"enum bpf_attach_type in kernel BTF has BPF_TRACE_FSESSION_MULTI = 64, the shim passes 61")

	assert.NoError(t, fsessionBTF(fsession, sessionKernel(t, map[string]uint64{"BPF_TRACE_FSESSION": 58})))
}

// A mechanism naming a program its BPF object lacks gets an error naming
// it, not a nil-pointer panic.
func TestAttachNamesAMissingProgram(t *testing.T) {
	l := loaded{progs: map[string][]*ebpf.Program{"vfs_read_entry": nil}, fns: newFunctionTable(fsession.Can, Config{})}
	for name, attach := range map[string]attachFunc{
		"trampoline":    attachTracing("vfs_read_session"),
		"tracing_multi": attachTracingMulti("vfs_read_session"),
		"kprobe_multi":  attachKprobeMulti(true, "vfs_read_session"),
		"per function":  attachEachFunction("vfs_read_session"),
	} {
		var links any
		var err error
		assert.NotPanics(t, func() { links, err = attach(l) }, name)
		assert.Nil(t, links, name)
		assert.EqualError(t, err, `no program "vfs_read_session" in the BPF object (it has: vfs_read_entry)`, name)
	}
}
