package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj KprobeKretprobe ../bpf/kprobe_kretprobe.bpf.c

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"tracebench/internal/tracefs"
	"tracebench/tracers/internal/bpfobj"
)

// kprobe-kretprobe: the classic design, two programs sharing the entry time
// and the count argument through a hash map keyed by pid_tgid.
var kprobeKretprobe = Mechanism{
	Name:    "kprobe-kretprobe",
	Summary: "kprobe + kretprobe programs; entry time and count in a hash map keyed by pid_tgid",
	Can:     kprobeCapabilities(bpfCapabilities(RoleTool, StateHashMap, LossMaxActive|LossMapFull)),
	Needs: Requirement{"kprobes (CONFIG_KPROBES with perf kprobe events) and BPF_CMPXCHG in programs",
		KernelVersion{5, 12}},
	probe: probeKprobe,
	spec:  bpfobj.LoadKprobeKretprobe,
	attach: func(progs map[string]*ebpf.Program, cfg Config) ([]link.Link, error) {
		// A maxactive kretprobe goes through tracefs, in groups named so
		// that leftovers can be recognised.
		ret := &link.KprobeOptions{RetprobeMaxActive: cfg.KretprobeMaxActive, TraceFSPrefix: tracefs.KprobeGroupPrefix}
		return attachEach(
			func() (link.Link, error) { return link.Kprobe("vfs_read", progs["vfs_read_entry"], nil) },
			func() (link.Link, error) { return link.Kretprobe("vfs_read", progs["vfs_read_return"], ret) },
		)
	},
}

// kprobeCapabilities declares that c's Stats.Missed comes from kprobe links.
func kprobeCapabilities(c Capabilities) Capabilities {
	c.Blind.KprobeLinkMissed = true
	return c
}
