package tracers

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// kprobe-kretprobe: the classic design, two programs sharing the entry time
// and the count argument through a hash map keyed by pid_tgid.
var kprobeKretprobe = Mechanism{
	Name:    "kprobe-kretprobe",
	Summary: "kprobe + kretprobe programs; entry time and count in a hash map keyed by pid_tgid",
	needs:   "kprobes (CONFIG_KPROBES with perf kprobe events)",
	probe:   probeKprobe,
	spec:    loadKprobeKretprobe,
	attach: func(progs map[string]*ebpf.Program, cfg Config) ([]link.Link, error) {
		// The prefix names the tracefs event groups cilium/ebpf creates for
		// a maxactive kretprobe, so that leftovers can be recognised.
		ret := &link.KprobeOptions{RetprobeMaxActive: cfg.KretprobeMaxActive, TraceFSPrefix: tracefsGroupPrefix}
		return attachEach(
			func() (link.Link, error) { return link.Kprobe("vfs_read", progs["vfs_read_entry"], nil) },
			func() (link.Link, error) { return link.Kretprobe("vfs_read", progs["vfs_read_return"], ret) },
		)
	},
}
