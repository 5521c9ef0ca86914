package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeKretprobe ../bpf/kprobe_kretprobe.bpf.c

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"tracebench/funcset"
	"tracebench/internal/tracefs"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-kretprobe: the classic design, two programs sharing the entry time
// and the count argument through a hash map keyed by pid_tgid.
var kprobeKretprobe = Mechanism{
	Name:    "kprobe-kretprobe",
	Summary: "kprobe + kretprobe programs; entry time and count in a hash map keyed by pid_tgid",
	Can:     kprobeCapabilities(bpfCapabilities(RoleTool, StateHashMap, LossMaxActive|LossMapFull, vfsReadOnly(funcset.Kprobe))),
	Needs: Requirement{"kprobes (CONFIG_KPROBES with perf kprobe events) and BPF_CMPXCHG in programs",
		KernelVersion{5, 12}},
	probe: probeKprobe,
	spec:  bpfobj.LoadKprobeKretprobe,
	attach: func(l loaded) ([]link.Link, error) {
		ret := kretprobeOptions(l.cfg, 0)
		return attachEach(
			func() (link.Link, error) { return kprobe(l, "vfs_read_entry", link.Kprobe, nil) },
			func() (link.Link, error) { return kprobe(l, "vfs_read_return", link.Kretprobe, ret) },
		)
	},
}

// kprobe attaches the program called name to vfs_read with attach.
func kprobe(l loaded, name string, attach func(string, *ebpf.Program, *link.KprobeOptions) (link.Link, error),
	opts *link.KprobeOptions) (link.Link, error) {
	prog, err := l.program(name)
	if err != nil {
		return nil, err
	}
	return attach(DefaultFunction, prog, opts)
}

// kretprobeOptions are those of a kretprobe with cookie and cfg's
// maxactive. A maxactive kretprobe goes through tracefs, in groups named
// so that leftovers can be recognised.
func kretprobeOptions(cfg Config, cookie uint64) *link.KprobeOptions {
	return &link.KprobeOptions{Cookie: cookie, RetprobeMaxActive: cfg.KretprobeMaxActive,
		TraceFSPrefix: tracefs.KprobeGroupPrefix}
}

// kprobeCapabilities declares that c's Stats.Missed comes from kprobe or
// kprobe_multi links.
func kprobeCapabilities(c Capabilities) Capabilities {
	c.Blind.KprobeLinkMissed = true
	return c
}
