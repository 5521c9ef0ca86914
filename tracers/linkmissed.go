package tracers

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"tracebench/internal/kernelbtf"
)

// linkMissed returns the missed count of a kprobe, kretprobe or
// kprobe_multi link; other links report none. known is false for a kprobe
// or kprobe_multi link of a kernel that does not report its misses
// (KprobeLinkReportsMissed).
func linkMissed(l link.Link) (missed uint64, known bool, err error) {
	info, err := l.Info()
	if errors.Is(err, ebpf.ErrNotSupported) {
		// A kprobe attached by perf event ioctl (no BPF link, before 5.15).
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("link info: %w", err)
	}
	if info.Type == link.PerfEventType && !KprobeLinkReportsMissed() {
		return 0, false, nil
	}
	if pe := info.PerfEvent(); pe != nil && pe.Kprobe() != nil {
		return pe.Kprobe().Missed, true, nil
	}
	if km := info.KprobeMulti(); km != nil {
		return km.Missed, KprobeLinkReportsMissed(), nil
	}
	return 0, true, nil
}

// KprobeLinkReportsMissed reports whether the running kernel gives a kprobe
// perf-event link's missed count in its link info (Linux 6.7, as a
// kprobe_multi link's, in the same series): the kernel BTF's struct
// bpf_link_info has perf_event.kprobe.missed. Without kernel BTF, whether
// the release is 6.7 or later.
var KprobeLinkReportsMissed = sync.OnceValue(func() bool {
	spec, err := kernelbtf.Spec()
	if err != nil {
		var major, minor int
		_, err := fmt.Sscanf(KernelRelease(), "%d.%d", &major, &minor)
		return err == nil && (major > 6 || major == 6 && minor >= 7)
	}
	var info *btf.Struct
	return spec.TypeByName("bpf_link_info", &info) == nil &&
		hasMemberPath(info, "perf_event", "kprobe", "missed")
})
