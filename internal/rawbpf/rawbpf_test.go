package rawbpf

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
)

// TestAttachTypesMatchVmlinux checks the attach type numbers the shim
// hard-codes against the 7.2 kernel's enum bpf_attach_type in bpf/vmlinux.h.
func TestAttachTypesMatchVmlinux(t *testing.T) {
	header, err := os.ReadFile("../../bpf/vmlinux.h")
	if err != nil {
		t.Fatal(err)
	}
	for at, name := range attachTypeNames {
		want := fmt.Sprintf("\t%s = %d,\n", name, at)
		assert.True(t, strings.Contains(string(header), want), "vmlinux.h declares %q", want)
	}
	for kind, at := range MultiAttachTypes {
		assert.Equal(t, strings.ToUpper("BPF_TRACE_"+strings.ReplaceAll(kind, ".", "_")), attachTypeNames[at], kind)
	}
}

func TestLoadTracingMultiRejectsOtherSections(t *testing.T) {
	_, err := LoadTracingMulti(&ebpf.ProgramSpec{SectionName: "fsession/vfs_read"})
	assert.EqualError(t, err, `section "fsession/vfs_read" is not a tracing_multi section`)
}
