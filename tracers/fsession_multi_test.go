package tracers

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
)

// TestMultiAttachTypesMatchVmlinux checks the attach type numbers the shim
// hard-codes against the 7.2 kernel's enum bpf_attach_type in bpf/vmlinux.h.
func TestMultiAttachTypesMatchVmlinux(t *testing.T) {
	header, err := os.ReadFile("../bpf/vmlinux.h")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"fentry.multi":   "BPF_TRACE_FENTRY_MULTI",
		"fexit.multi":    "BPF_TRACE_FEXIT_MULTI",
		"fsession.multi": "BPF_TRACE_FSESSION_MULTI",
	}
	for kind, at := range multiAttachTypes {
		want := fmt.Sprintf("\t%s = %d,\n", names[kind], at)
		assert.True(t, strings.Contains(string(header), want), "vmlinux.h declares %q", want)
	}
}

func TestFindMemberLooksIntoAnonymousMembers(t *testing.T) {
	u32 := &btf.Int{Name: "u32", Size: 4}
	tracingMulti := &btf.Struct{Name: "", Members: []btf.Member{{Name: "ids", Type: u32}}}
	anon := &btf.Union{Members: []btf.Member{{Name: "tracing", Type: &btf.Struct{}}, {Name: "tracing_multi", Type: tracingMulti}}}
	linkCreate := &btf.Struct{Members: []btf.Member{{Name: "prog_fd", Type: u32}, {Name: "", Type: anon}}}
	attr := &btf.Union{Name: "bpf_attr", Members: []btf.Member{{Name: "link_create", Type: linkCreate}}}

	assert.True(t, findMember(attr, "tracing_multi", 4))
	assert.False(t, findMember(attr, "tracing_multi", 1), "too deep for depth 1")
	assert.False(t, findMember(attr, "uprobe_multi", 4))
}

func TestLoadTracingMultiProgramRejectsOtherSections(t *testing.T) {
	_, err := loadTracingMultiProgram(&ebpf.ProgramSpec{SectionName: "fsession/vfs_read"})
	assert.EqualError(t, err, `section "fsession/vfs_read" is not a tracing_multi section`)
}
