package tracers

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// needsCmpxchg is what every BPF object needs beyond its mechanism: the
// per-TGID maximum (bpf/vfsread.h atomic_max) is a compare-and-exchange,
// and a kernel without it refuses the whole object at load, dead code
// included (5.10: "BPF_STX uses reserved fields").
const needsCmpxchg = "BPF atomic compare-and-exchange (BPF_CMPXCHG, Linux 5.12)"

// probeCmpxchg returns an *UnsupportedError for m where the kernel refuses
// a socket filter holding one BPF_CMPXCHG with EINVAL. Any other failure
// (e.g. EPERM without privileges) decides nothing: the load of m's own
// object will say what it is.
func probeCmpxchg(m Mechanism) error {
	if err := refusesCmpxchg(); err != nil {
		return &UnsupportedError{Mechanism: m.Name, Needs: needsCmpxchg, Kernel: KernelRelease(), Detected: err.Error()}
	}
	return nil
}

var refusesCmpxchg = sync.OnceValue(func() error {
	// Before 5.11 the probe's load too needs the limit lifted (else EPERM);
	// Start reports removeMemlock's error.
	_ = removeMemlock()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SocketFilter,
		Instructions: asm.Instructions{
			asm.StoreImm(asm.R10, -8, 0, asm.DWord),
			asm.Mov.Imm(asm.R0, 0),
			asm.Mov.Imm(asm.R1, 1),
			asm.CmpXchg.Mem(asm.R10, asm.R1, asm.DWord, -8), // r0 = cmpxchg(r10-8, r0, r1)
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
		License: "GPL",
	})
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("a socket filter with one BPF_CMPXCHG was refused: %w", err)
	}
	if err == nil {
		prog.Close()
	}
	return nil
})
