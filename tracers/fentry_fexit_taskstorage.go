package tracers

// fentry-fexit-taskstorage: fentry/fexit (Linux 5.5) with the entry time in
// BPF task local storage (Linux 5.11) instead of a hash map: the kernel
// frees a thread's entry with the thread. Stats.Pending is counted by the
// object's task iterator (Linux 5.8), since task storage cannot be
// enumerated from user space.
var fentryFexitTaskstorage = Mechanism{
	Name:    "fentry-fexit-taskstorage",
	Summary: "fentry + fexit programs; entry time in BPF task local storage",
	needs:   "BPF trampolines for fentry/fexit (Linux 5.5, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS) and task local storage (Linux 5.11)",
	probe:   probeTrampoline,
	spec:    loadFentryFexitTaskstorage,
	attach:  attachTracing("vfs_read_entry", "vfs_read_exit"),
}
