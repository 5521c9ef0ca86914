// Package kernelbtf decodes the running kernel's BTF once per process and
// shares it. cilium/ebpf v0.22.0's btf.LoadKernelSpec and ebpf.NewProgram
// decode /sys/kernel/btf/vmlinux on every call (about 170 million guest
// instructions per decode and first lookup on Linux 7.2 under TCG, most of
// a tracer's start-up); only collection loads take a shared btf.Cache.
package kernelbtf

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// cache holds the decoded vmlinux BTF (module BTF is not used).
var cache = btf.NewCache()

// Spec returns the running kernel's BTF, decoded on first use. Callers
// must not modify it. The error wraps btf.ErrNotSupported without
// CONFIG_DEBUG_INFO_BTF.
func Spec() (*btf.Spec, error) { return cache.Kernel() }

// Options are collection options that resolve against the shared BTF.
func Options() ebpf.CollectionOptions { return ebpf.CollectionOptions{Cache: cache} }

// NewProgram is ebpf.NewProgram resolving against the shared BTF. ps must
// reference no maps (it is loaded as a one-program collection).
func NewProgram(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
	spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{ps.Name: ps}, ByteOrder: ps.ByteOrder}
	coll, err := ebpf.NewCollectionWithOptions(spec, Options())
	if err != nil {
		return nil, err // names the program
	}
	defer coll.Close()
	return Detach(coll, ps.Name)
}

// Detach takes program name out of coll (which then no longer closes it).
// A collection load skips a program of unspecified type without an error,
// so a missing one is an error here.
func Detach(coll *ebpf.Collection, name string) (*ebpf.Program, error) {
	prog := coll.DetachProgram(name)
	if prog == nil {
		return nil, fmt.Errorf("program %s was not loaded (a program type cilium/ebpf cannot load?)", name)
	}
	return prog, nil
}
