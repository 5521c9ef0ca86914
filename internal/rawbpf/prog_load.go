package rawbpf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
)

// progLoadAttr is the BPF_PROG_LOAD part of union bpf_attr
// (include/uapi/linux/bpf.h) up to fd_array. The __u64 pointers the shim
// sets are held as pointers (8 bytes on the 64-bit architectures
// tracebench runs on): a uintptr would not keep a buffer on the stack
// from moving before the system call.
type progLoadAttr struct {
	progType           uint32
	insnCnt            uint32
	insns              unsafe.Pointer
	license            unsafe.Pointer
	logLevel           uint32
	logSize            uint32
	logBuf             unsafe.Pointer
	kernVersion        uint32
	progFlags          uint32
	progName           [unix.BPF_OBJ_NAME_LEN]byte
	progIfindex        uint32
	expectedAttachType uint32
	progBTFFd          uint32
	funcInfoRecSize    uint32
	funcInfo           uint64
	funcInfoCnt        uint32
	lineInfoRecSize    uint32
	lineInfo           uint64
	lineInfoCnt        uint32
	attachBTFID        uint32
	attachBTFObjFd     uint32
	coreReloCnt        uint32
	fdArray            uint64
}

// LoadFsession loads ps, whose maps are already associated, as a tracing
// program of attach type ps.AttachType (AttachFsession) on the vmlinux
// function ps.AttachTo. Kfunc calls are resolved against vmlinux BTF. It
// returns an *ABIError where the kernel numbers the attach type otherwise.
func LoadFsession(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
	if _, ok := attachTypeNames[ps.AttachType]; !ok {
		return nil, fmt.Errorf("attach type %d is not one the rawbpf shim loads", ps.AttachType)
	}
	return LoadTracing(ps)
}

// LoadTracing loads ps, whose maps are already associated, as a tracing
// program of attach type ps.AttachType (fentry, fexit, fsession, ...) on
// the vmlinux function ps.AttachTo, found with kernelbtf.Function:
// cilium/ebpf v0.22.0 cannot find every kernel function by name (see
// there). Errors: an *ABIError where the kernel numbers one of the shim's
// attach types otherwise; a *LoadError when the kernel refuses the load.
func LoadTracing(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
	kernel, err := kernelbtf.Spec()
	if err != nil {
		return nil, err
	}
	if _, ok := attachTypeNames[ps.AttachType]; ok {
		if err := CheckAttachType(kernel, ps.AttachType); err != nil {
			return nil, err
		}
	}
	target, err := kernelFuncID(ps.AttachTo)
	if err != nil {
		return nil, err
	}
	return loadTracingProgram(ps, target)
}

// LoadError is the kernel's refusal of a BPF_PROG_LOAD, with the end of
// the verifier's log, which says why.
type LoadError struct {
	Errno unix.Errno
	Log   []string // the last lines of the verifier log
}

func (e *LoadError) Error() string {
	if len(e.Log) == 0 {
		return "BPF_PROG_LOAD: " + e.Errno.Error()
	}
	return "BPF_PROG_LOAD: " + e.Errno.Error() + "\n" + strings.Join(e.Log, "\n")
}

func (e *LoadError) Unwrap() error { return e.Errno }

// Reason returns the log's last line that is not the verifier's
// statistics, e.g. "The function panic with variable args is
// unsupported."; the errno where the log has none.
func (e *LoadError) Reason() string {
	for i := len(e.Log) - 1; i >= 0; i-- {
		if line := e.Log[i]; line != "" && !strings.HasPrefix(line, "processed ") {
			return line
		}
	}
	return e.Errno.Error()
}

// byteOrder is ps's, or without one the host's, as ebpf.NewProgram
// defaults it: asm takes only binary.LittleEndian and binary.BigEndian
// (bpf2go records one of them as an object's order), and s390x's kernel
// reads big-endian instructions.
func byteOrder(ps *ebpf.ProgramSpec) binary.ByteOrder {
	switch {
	case ps.ByteOrder != nil:
		return ps.ByteOrder
	case binary.NativeEndian.Uint16([]byte{0, 1}) == 1:
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// loadTracingProgram loads ps as a tracing program of attach type
// ps.AttachType with attach_btf_id target (0: none, as tracing_multi
// programs are loaded).
func loadTracingProgram(ps *ebpf.ProgramSpec, target btf.TypeID) (*ebpf.Program, error) {
	insns := ps.Instructions
	for i := range insns {
		if !insns[i].IsKfuncCall() {
			continue
		}
		id, err := kernelFuncID(insns[i].Reference())
		if err != nil {
			return nil, err
		}
		insns[i].Constant = int64(id)
		insns[i].Offset = 0 // vmlinux, not a module
	}
	var code bytes.Buffer
	if err := insns.Marshal(&code, byteOrder(ps)); err != nil {
		return nil, err
	}

	fd, errno := progLoad(ps, code.Bytes(), target, nil)
	if errno != 0 {
		// Load again with the verifier log, which explains the refusal.
		log := make([]byte, 1<<20)
		fdLog, errLog := progLoad(ps, code.Bytes(), target, log)
		if errLog != 0 {
			return nil, &LoadError{Errno: errno, Log: lastLines(log, 20)}
		}
		unix.Close(fdLog) // loaded the second time: report the first refusal
		return nil, &LoadError{Errno: errno}
	}
	return ebpf.NewProgramFromFD(fd)
}

func kernelFuncID(name string) (btf.TypeID, error) {
	_, id, err := kernelbtf.Function(name)
	return id, err
}

func progLoad(ps *ebpf.ProgramSpec, code []byte, target btf.TypeID, log []byte) (int, unix.Errno) {
	license := append([]byte(ps.License), 0)
	attr := progLoadAttr{
		progType:           uint32(ebpf.Tracing),
		insnCnt:            uint32(len(code) / 8),
		insns:              unsafe.Pointer(&code[0]),
		license:            unsafe.Pointer(&license[0]),
		expectedAttachType: uint32(ps.AttachType),
		attachBTFID:        uint32(target),
	}
	copy(attr.progName[:unix.BPF_OBJ_NAME_LEN-1], ps.Name)
	if log != nil {
		attr.logLevel = 1
		attr.logSize = uint32(len(log))
		attr.logBuf = unsafe.Pointer(&log[0])
	}
	fd, errno := progLoadRetrying(&attr)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), 0
}

func lastLines(log []byte, n int) []string {
	text := strings.TrimRight(string(bytes.TrimRight(log, "\x00")), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	return lines[max(0, len(lines)-n):]
}

// progLoadAttempts bounds the retries of an interrupted BPF_PROG_LOAD.
const progLoadAttempts = 100

// progLoadRetrying issues BPF_PROG_LOAD, again while it fails with EAGAIN:
// the verifier gives up when a signal (Go preemption) is pending, as
// cilium/ebpf knows and retries.
func progLoadRetrying(attr *progLoadAttr) (fd uintptr, errno unix.Errno) {
	for range progLoadAttempts {
		fd, _, errno = unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD,
			uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
		if errno != unix.EAGAIN {
			break
		}
	}
	return fd, errno
}
