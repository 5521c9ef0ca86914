package workload

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A one-entry io_uring driven by raw io_uring_setup(2) and
// io_uring_enter(2), just enough for IoUringRead: no dependency is worth
// one submission. Layouts and constants are those of
// include/uapi/linux/io_uring.h.

const (
	ioringOffSQRing  = 0
	ioringOffCQRing  = 0x8000000
	ioringOffSQEs    = 0x10000000
	ioringOpRead     = 22
	ioringEnterWait  = 1 // IORING_ENTER_GETEVENTS
	ioUringSQESize   = 64
	ioUringCQESize   = 16
	ioUringCQEResOff = 8 // offset of res in struct io_uring_cqe
)

// ioSQRingOffsets is struct io_sqring_offsets.
type ioSQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// ioCQRingOffsets is struct io_cqring_offsets.
type ioCQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// ioUringParams is struct io_uring_params.
type ioUringParams struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFD uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  ioSQRingOffsets
	CQOff                                                                  ioCQRingOffsets
}

// ioUringSQE is the part of struct io_uring_sqe a read sets; the rest is 0.
type ioUringSQE struct {
	Opcode, Flags uint8
	IOPrio        uint16
	FD            int32
	Off, Addr     uint64
	Len           uint32
	_             [ioUringSQESize - 28]byte
}

type ioUring struct {
	fd           int
	params       ioUringParams
	sq, cq, sqes []byte
}

func newIoUring() (*ioUring, error) {
	r := &ioUring{fd: -1}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&r.params)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r.fd = int(fd)
	var err error
	mmap := func(off int64, size uint32) []byte {
		var m []byte
		if err == nil {
			m, err = unix.Mmap(r.fd, off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		}
		return m
	}
	p := &r.params
	r.sq = mmap(ioringOffSQRing, p.SQOff.Array+p.SQEntries*4)
	r.cq = mmap(ioringOffCQRing, p.CQOff.CQEs+p.CQEntries*ioUringCQESize)
	r.sqes = mmap(ioringOffSQEs, p.SQEntries*ioUringSQESize)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mmap io_uring: %w", err)
	}
	return r, nil
}

func (r *ioUring) u32(ring []byte, off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&ring[off]))
}

// read submits one read of fd at offset 0 into buf and waits for it.
func (r *ioUring) read(fd int, buf []byte) (int, error) {
	*(*ioUringSQE)(unsafe.Pointer(&r.sqes[0])) = ioUringSQE{
		Opcode: ioringOpRead, FD: int32(fd), Addr: uint64(uintptr(unsafe.Pointer(&buf[0]))), Len: uint32(len(buf)),
	}
	sq, cq := r.params.SQOff, r.params.CQOff
	tail := atomic.LoadUint32(r.u32(r.sq, sq.Tail))
	*r.u32(r.sq, sq.Array+4*(tail&*r.u32(r.sq, sq.RingMask))) = 0 // the one SQE
	atomic.StoreUint32(r.u32(r.sq, sq.Tail), tail+1)
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 1, 1, ioringEnterWait, 0, 0)
	runtime.KeepAlive(buf) // the kernel wrote into it until the completion
	if errno != 0 {
		return 0, fmt.Errorf("io_uring_enter: %w", errno)
	}
	head := atomic.LoadUint32(r.u32(r.cq, cq.Head))
	if head == atomic.LoadUint32(r.u32(r.cq, cq.Tail)) {
		return 0, errors.New("io_uring_enter returned without a completion")
	}
	cqe := cq.CQEs + (head&*r.u32(r.cq, cq.RingMask))*ioUringCQESize
	res := int32(*r.u32(r.cq, cqe+ioUringCQEResOff))
	atomic.StoreUint32(r.u32(r.cq, cq.Head), head+1)
	if res < 0 {
		return 0, unix.Errno(-res)
	}
	return int(res), nil
}

func (r *ioUring) close() {
	for _, m := range [][]byte{r.sq, r.cq, r.sqes} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
	}
}

// ioUringSupported sets up a ring. Without CONFIG_IO_URING, io_uring_setup
// fails with ENOSYS; with kernel.io_uring_disabled = 2 (Linux 6.6+), or 1
// for a caller outside io_uring_group without CAP_SYS_ADMIN, with EPERM.
func ioUringSupported() error {
	r, err := newIoUring()
	if err == nil {
		r.close()
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return err
	}
	sysctl := "absent"
	if raw, rerr := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); rerr == nil {
		sysctl = strings.TrimSpace(string(raw))
	}
	return fmt.Errorf("io_uring %w: %v (/proc/sys/kernel/io_uring_disabled: %s)", ErrUnavailable, err, sysctl)
}
