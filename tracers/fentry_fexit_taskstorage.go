package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c

import (
	"github.com/cilium/ebpf/btf"

	"tracebench/tracers/internal/bpfobj"
)

// fentry-fexit-taskstorage: fentry/fexit (Linux 5.5) with the entry time in
// BPF task local storage (Linux 5.11), freed with the thread; Stats.Pending
// comes from the object's task iterator (Linux 5.8).
var fentryFexitTaskstorage = Mechanism{
	Name:    "fentry-fexit-taskstorage",
	Summary: "fentry + fexit programs; entry time in BPF task local storage",
	Can:     bpfCapabilities(RoleSubject, StateTaskStorage, LossRecursion),
	Needs: Requirement{"BPF trampolines for fentry/fexit (5.5, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)," +
		" task local storage (5.11) and BPF_CMPXCHG in programs", KernelVersion{5, 12}},
	probe:  probeTaskStorage,
	spec:   bpfobj.LoadFentryFexitTaskstorage,
	attach: attachTracing("vfs_read_entry", "vfs_read_exit"),
}

// probeTaskStorage checks the kernel BTF for vfs_read and for
// BPF_MAP_TYPE_TASK_STORAGE in enum bpf_map_type (5.11).
func probeTaskStorage(m Mechanism) error {
	spec, err := vfsReadBTF(m)
	if err != nil {
		return err
	}
	var mapTypes *btf.Enum
	if err := spec.TypeByName("bpf_map_type", &mapTypes); err != nil {
		return m.unsupported("enum bpf_map_type not in kernel BTF: " + err.Error())
	}
	for _, v := range mapTypes.Values {
		if v.Name == "BPF_MAP_TYPE_TASK_STORAGE" {
			return nil
		}
	}
	return m.unsupported("enum bpf_map_type in kernel BTF has no BPF_MAP_TYPE_TASK_STORAGE")
}
