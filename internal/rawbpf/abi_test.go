package rawbpf

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	u32 = &btf.Int{Name: "__u32", Size: 4}
	u64 = &btf.Int{Name: "__u64", Size: 8}
)

// fakeKernel is a kernel BTF with enum bpf_attach_type of the given values
// and a union bpf_attr whose link_create has the given tracing_multi
// members (nil: none).
func fakeKernel(t *testing.T, attachTypes map[string]uint64, tracingMulti []btf.Member) *btf.Spec {
	t.Helper()
	enum := &btf.Enum{Name: "bpf_attach_type", Size: 4}
	for name, v := range attachTypes {
		enum.Values = append(enum.Values, btf.EnumValue{Name: name, Value: v})
	}
	fds := func(a, b string) *btf.Union {
		return &btf.Union{Size: 4, Members: []btf.Member{{Name: a, Type: u32}, {Name: b, Type: u32}}}
	}
	targets := &btf.Union{Size: 4, Members: []btf.Member{{Name: "target_btf_id", Type: u32}}}
	if tracingMulti != nil {
		targets.Size = 24
		targets.Members = append(targets.Members,
			btf.Member{Name: "tracing_multi", Type: &btf.Struct{Size: 24, Members: tracingMulti}})
	}
	linkCreate := &btf.Struct{Size: 16 + targets.Size, Members: []btf.Member{
		{Type: fds("prog_fd", "map_fd")},
		{Type: fds("target_fd", "target_ifindex"), Offset: 32},
		{Name: "attach_type", Type: u32, Offset: 64},
		{Name: "flags", Type: u32, Offset: 96},
		{Type: targets, Offset: 128},
	}}
	attr := &btf.Union{Name: "bpf_attr", Size: linkCreate.Size, Members: []btf.Member{
		{Name: "link_create", Type: linkCreate},
	}}
	b, err := btf.NewBuilder([]btf.Type{enum, attr}, nil)
	require.NoError(t, err)
	raw, err := b.Marshal(nil, nil)
	require.NoError(t, err)
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	require.NoError(t, err)
	return spec
}

// kernel72 are 7.2's values (its BTF, checked in the guest).
var kernel72 = map[string]uint64{
	"BPF_TRACE_UPROBE_SESSION": 57, "BPF_TRACE_FSESSION": 58,
	"BPF_TRACE_FENTRY_MULTI": 59, "BPF_TRACE_FEXIT_MULTI": 60, "BPF_TRACE_FSESSION_MULTI": 61,
}

// tracingMulti72 is 7.2's link_create.tracing_multi.
var tracingMulti72 = []btf.Member{
	{Name: "ids", Type: u64}, {Name: "cookies", Type: u64, Offset: 64}, {Name: "cnt", Type: u32, Offset: 128},
}

const mismatch = "the rawbpf shim does not match this kernel's BTF: "

func TestCheckAttachTypeByName(t *testing.T) {
	spec := fakeKernel(t, kernel72, tracingMulti72)
	for at := range attachTypeNames {
		assert.NoError(t, CheckAttachType(spec, at))
	}

	// A kernel that numbered them otherwise (another series, a backport).
	other := fakeKernel(t, map[string]uint64{"BPF_TRACE_FSESSION": 60, "BPF_TRACE_FSESSION_MULTI": 58}, nil)
	err := CheckAttachType(other, AttachFsession)
	assert.ErrorIs(t, err, ebpf.ErrNotSupported)
	assert.EqualError(t, err, mismatch+
		"enum bpf_attach_type in kernel BTF has BPF_TRACE_FSESSION = 60, the shim passes 58")
	assert.EqualError(t, CheckAttachType(other, AttachFsessionMulti), mismatch+
		"enum bpf_attach_type in kernel BTF has BPF_TRACE_FSESSION_MULTI = 58, the shim passes 61")
	assert.EqualError(t, CheckAttachType(other, AttachFentryMulti), mismatch+
		"enum bpf_attach_type in kernel BTF has no BPF_TRACE_FENTRY_MULTI")
	assert.EqualError(t, CheckAttachType(other, ebpf.AttachTraceFEntry),
		"attach type 24 is not one the rawbpf shim loads")
}

func TestCheckTracingMultiLinkLayout(t *testing.T) {
	assert.NoError(t, CheckTracingMultiLink(fakeKernel(t, kernel72, tracingMulti72)))

	for name, c := range map[string]struct {
		members []btf.Member
		want    string
	}{
		"cnt moved": {
			[]btf.Member{{Name: "ids", Type: u64}, {Name: "cnt", Type: u32, Offset: 64},
				{Name: "cookies", Type: u64, Offset: 128}},
			"link_create.tracing_multi.cookies at byte 32 (bit 256), 8 bytes; the shim writes it at byte 24, 8 bytes",
		},
		"cnt widened": {
			[]btf.Member{{Name: "ids", Type: u64}, {Name: "cookies", Type: u64, Offset: 64},
				{Name: "cnt", Type: u64, Offset: 128}},
			"link_create.tracing_multi.cnt at byte 32 (bit 256), 8 bytes; the shim writes it at byte 32, 4 bytes",
		},
		"member renamed": {
			[]btf.Member{{Name: "btf_ids", Type: u64}, {Name: "cookies", Type: u64, Offset: 64},
				{Name: "cnt", Type: u32, Offset: 128}},
			"no link_create.tracing_multi.ids",
		},
		"no tracing_multi": {nil, "no link_create.tracing_multi.ids"},
	} {
		err := CheckTracingMultiLink(fakeKernel(t, kernel72, c.members))
		assert.ErrorIs(t, err, ebpf.ErrNotSupported, name)
		assert.EqualError(t, err, mismatch+"union bpf_attr in kernel BTF has "+c.want, name)
	}
}
