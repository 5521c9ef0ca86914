package tracers

//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj FentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target arm64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj FentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations

import "tracebench/tracers/internal/bpfobj"

// fentry-fexit-taskstorage: fentry/fexit (Linux 5.5) with the entry time in
// BPF task local storage (Linux 5.11), freed with the thread; Stats.Pending
// comes from the object's task iterator (Linux 5.8).
var fentryFexitTaskstorage = Mechanism{
	Name:    "fentry-fexit-taskstorage",
	Summary: "fentry + fexit programs; entry time in BPF task local storage",
	Can:     bpfCapabilities(StateTaskStorage, LossRecursion),
	needs: "BPF trampolines for fentry/fexit (Linux 5.5, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)" +
		" and task local storage (Linux 5.11)",
	probe:  probeTrampoline,
	spec:   bpfobj.LoadFentryFexitTaskstorage,
	attach: attachTracing("vfs_read_entry", "vfs_read_exit"),
}
