package rawbpf

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

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

// The pointers of BPF_PROG_LOAD sit where union bpf_attr has them
// (include/uapi/linux/bpf.h: insns at 8, license at 16, log_buf at 32,
// attach_btf_id at 108, fd_array at 120).
func TestProgLoadAttrLayout(t *testing.T) {
	var a progLoadAttr
	assert.Equal(t, uintptr(8), unsafe.Offsetof(a.insns))
	assert.Equal(t, uintptr(16), unsafe.Offsetof(a.license))
	assert.Equal(t, uintptr(32), unsafe.Offsetof(a.logBuf))
	assert.Equal(t, uintptr(108), unsafe.Offsetof(a.attachBTFID))
	assert.Equal(t, uintptr(128), unsafe.Sizeof(a))
}

// A spec without a byte order is marshalled in the host's, the kernel's
// (big-endian on s390x), and one with an order keeps it.
func TestByteOrderDefaultsToTheHosts(t *testing.T) {
	host, native := make([]byte, 4), make([]byte, 4)
	byteOrder(&ebpf.ProgramSpec{}).PutUint32(host, 1)
	binary.NativeEndian.PutUint32(native, 1)
	assert.Equal(t, native, host)
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		assert.Equal(t, order, byteOrder(&ebpf.ProgramSpec{ByteOrder: order}))
	}
}
