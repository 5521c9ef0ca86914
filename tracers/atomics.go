package tracers

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// needsCmpxchg is what every BPF object needs beyond its mechanism: the
// per-TGID maximum (bpf/vfsread.h atomic_max) is a compare-and-exchange,
// the objects' only BPF_STX with a non-zero imm. No BPF mechanism's
// Needs.Since is earlier.
var needsCmpxchg = Requirement{"BPF atomic compare-and-exchange (BPF_CMPXCHG) in its programs",
	KernelVersion{5, 12}}

// cmpxchgRefusal is the verifier's answer to that instruction where it
// lacks it (5.10.0-32 refuses the whole object, dead code included).
// 5.10.0-32 loads a socket filter doing a cmpxchg on its stack, so a
// feature probe would not tell: the object's own load decides.
const cmpxchgRefusal = "BPF_STX uses reserved fields"

// refusedCmpxchg returns an *UnsupportedError if err is a load's EINVAL
// with cmpxchgRefusal in the verifier log, else nil.
func (m Mechanism) refusedCmpxchg(err error) error {
	if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), cmpxchgRefusal) {
		return nil
	}
	return &UnsupportedError{Mechanism: m.Name, Needs: needsCmpxchg.String(), Kernel: KernelRelease(), Detected: err.Error()}
}
