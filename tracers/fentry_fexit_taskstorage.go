package tracers

//go:generate go run tracebench/internal/bpfgen -dir internal/bpfobj FentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"tracebench/funcset"
	"tracebench/tracers/internal/bpfobj"
)

// fentry-fexit-taskstorage: fentry/fexit (Linux 5.5) with the entry time in
// BPF task local storage (Linux 5.11), freed with the thread; Stats.Pending
// comes from the object's task iterator (Linux 5.8).
var fentryFexitTaskstorage = Mechanism{
	Name:    "fentry-fexit-taskstorage",
	Summary: "fentry + fexit programs; entry time in BPF task local storage",
	Can:     bpfCapabilities(RoleSubject, StateTaskStorage, LossRecursion, vfsReadOnly(funcset.Fentry, funcset.Fexit)),
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
			return taskStorageAllocates(m)
		}
	}
	return m.unsupported("enum bpf_map_type in kernel BTF has no BPF_MAP_TYPE_TASK_STORAGE")
}

// taskStorageAllocates creates the object's task storage map and this
// process's element in it from user space. Where the kernel cannot
// allocate task local storage that fails with ENOMEM, and the programs'
// allocations fail too, losing every call: the 7.2.13 ppc64el and
// riscv64 guests, whose configs lack CONFIG_HAVE_CMPXCHG_DOUBLE (7.2's
// local storage comes from kmalloc_nolock(), which SLUB serves only with
// cmpxchg_double).
func taskStorageAllocates(m Mechanism) error {
	spec, err := m.object()
	if err != nil {
		return err
	}
	storage, err := ebpf.NewMap(spec.Maps["task_starts"])
	if err != nil {
		return fmt.Errorf("%s: probe task storage: %w", m.Name, err)
	}
	defer storage.Close()
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("%s: probe task storage: pidfd_open: %w", m.Name, err)
	}
	defer unix.Close(pidfd)
	err = storage.Put(uint32(pidfd), uint64(0))
	if errors.Is(err, unix.ENOMEM) {
		return m.unsupported("the kernel allocates no task local storage: BPF_MAP_UPDATE_ELEM of this process's " +
			"element of a task storage map fails with ENOMEM")
	}
	if err != nil {
		return fmt.Errorf("%s: probe task storage: %w", m.Name, err)
	}
	return nil
}
