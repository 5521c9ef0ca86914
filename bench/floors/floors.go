// Package floors attaches empty BPF programs to vfs_read, one per attach
// kind, for the overhead benchmark's floors: what a kind costs per call
// before any program body runs. They are not mechanisms (they trace
// nothing), so they live beside the benchmark, not in tracers.
package floors

//go:generate go run tracebench/internal/bpfgen Floors ../../bpf/floors.bpf.c

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"tracebench/bench/suite"
	"tracebench/internal/kernelbtf"
	"tracebench/internal/rawbpf"
)

// Floor is one floor's programs, loaded and attached.
type Floor struct {
	progs []*ebpf.Program
	links []link.Link
}

// Attach loads the empty program of each kind of floor (a name in suite.Floors)
// and attaches it to vfs_read. On error nothing stays loaded.
func Attach(floor string) (_ *Floor, err error) {
	if !slices.Contains(suite.Floors, floor) {
		return nil, fmt.Errorf("unknown floor %q (known: %s)", floor, strings.Join(suite.Floors, ", "))
	}
	spec, err := LoadFloors()
	if err != nil {
		return nil, fmt.Errorf("floors BPF object: %w", err)
	}
	f := &Floor{}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	for _, kind := range suite.FloorKinds(floor) {
		if err := f.attach(spec, kind); err != nil {
			return nil, fmt.Errorf("floor %s: %s: %w", floor, kind, err)
		}
	}
	return f, nil
}

// attach loads and attaches the program of one kind: cilium/ebpf does
// the kinds it knows, internal/rawbpf the fsession ones (see its doc).
func (f *Floor) attach(spec *ebpf.CollectionSpec, kind string) error {
	ps := spec.Programs["floor_"+strings.ReplaceAll(kind, ".", "_")].Copy()
	load := kernelbtf.NewProgram
	switch {
	case kind == "fsession":
		load = rawbpf.LoadFsession
	case rawbpf.MultiAttachTypes[kind] != 0:
		load = rawbpf.LoadTracingMulti
	}
	prog, err := load(ps)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	f.progs = append(f.progs, prog)
	l, err := attachKind(kind, prog)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	f.links = append(f.links, l)
	return nil
}

func attachKind(kind string, prog *ebpf.Program) (link.Link, error) {
	switch kind {
	case "kprobe":
		return link.Kprobe("vfs_read", prog, nil)
	case "kretprobe":
		return link.Kretprobe("vfs_read", prog, nil)
	case "kprobe.session":
		return link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{"vfs_read"}, Session: true})
	case "kprobe.multi":
		return link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{"vfs_read"}})
	case "kretprobe.multi":
		return link.KretprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{"vfs_read"}})
	case "fsession.multi", "fentry.multi", "fexit.multi":
		return rawbpf.LinkTracingMulti(prog, rawbpf.MultiAttachTypes[kind], "vfs_read")
	}
	return link.AttachTracing(link.TracingOptions{Program: prog}) // fentry, fexit, fsession
}

// Close detaches and frees the floor's programs.
func (f *Floor) Close() error {
	var errs []error
	for _, l := range f.links {
		errs = append(errs, l.Close())
	}
	for _, p := range f.progs {
		errs = append(errs, p.Close())
	}
	f.links, f.progs = nil, nil
	return errors.Join(errs...)
}
