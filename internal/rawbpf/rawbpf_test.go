package rawbpf

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
)

// TestMultiAttachTypesMatchVmlinux checks the attach type numbers the shim
// hard-codes against the 7.2 kernel's enum bpf_attach_type in bpf/vmlinux.h.
func TestMultiAttachTypesMatchVmlinux(t *testing.T) {
	header, err := os.ReadFile("../../bpf/vmlinux.h")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"fentry.multi":   "BPF_TRACE_FENTRY_MULTI",
		"fexit.multi":    "BPF_TRACE_FEXIT_MULTI",
		"fsession.multi": "BPF_TRACE_FSESSION_MULTI",
	}
	for kind, at := range MultiAttachTypes {
		want := fmt.Sprintf("\t%s = %d,\n", names[kind], at)
		assert.True(t, strings.Contains(string(header), want), "vmlinux.h declares %q", want)
	}
}

func TestLoadTracingMultiRejectsOtherSections(t *testing.T) {
	_, err := LoadTracingMulti(&ebpf.ProgramSpec{SectionName: "fsession/vfs_read"})
	assert.EqualError(t, err, `section "fsession/vfs_read" is not a tracing_multi section`)
}
