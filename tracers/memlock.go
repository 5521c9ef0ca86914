package tracers

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/rlimit"
)

// removeMemlock lifts RLIMIT_MEMLOCK once per process where the kernel
// charges BPF maps and programs to it (before Linux 5.11, which charges
// them to the memory cgroup instead); on 5.11+ it changes nothing. A
// 5.10 kernel otherwise refuses the ring buffer with EPERM. Raising the
// limit needs CAP_SYS_RESOURCE; the error says so.
var removeMemlock = sync.OnceValue(func() error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("lifting RLIMIT_MEMLOCK, which this kernel charges BPF memory to (before Linux 5.11): %w", err)
	}
	return nil
})
