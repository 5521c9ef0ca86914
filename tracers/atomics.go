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
// a socket filter holding one BPF_CMPXCHG with EINVAL. EPERM (no
// privileges) decides nothing: the load of m's own object will say.
func probeCmpxchg(m Mechanism) error {
	err := cmpxchgRefused()
	var u *UnsupportedError
	if errors.As(err, &u) {
		named := *u // shared by every mechanism
		named.Mechanism = m.Name
		return &named
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return nil
}

var cmpxchgRefused = sync.OnceValue(func() error {
	// Before 5.11 the probe's load too needs the limit lifted (else EPERM);
	// Start reports removeMemlock's error.
	_ = removeMemlock()
	prog, err := loadCmpxchg()
	switch {
	case err == nil:
		return prog.Close()
	case errors.Is(err, unix.EINVAL):
		return &UnsupportedError{Needs: needsCmpxchg, Kernel: KernelRelease(),
			Detected: "a socket filter with one BPF_CMPXCHG was refused: " + err.Error()}
	case errors.Is(err, unix.EPERM):
		return nil
	}
	return fmt.Errorf("probe for BPF_CMPXCHG: %w", err)
})

// loadCmpxchg loads a socket filter doing r0 = cmpxchg(fp-8, r0, r1).
func loadCmpxchg() (*ebpf.Program, error) {
	return ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SocketFilter,
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
			asm.Mov.Imm(asm.R1, 1),
			asm.CmpXchg.Mem(asm.RFP, asm.R1, asm.DWord, -8),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
		License: "GPL",
	})
}
