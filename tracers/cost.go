package tracers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
)

// Footprint is what a running BPF tracer holds in the kernel, as the
// kernel reports it (BPF_OBJ_GET_INFO_BY_FD and /proc/self/fdinfo).
type Footprint struct {
	Maps     []MapFootprint
	Programs []ProgramFootprint
}

// MapFootprint is one map of a tracer.
type MapFootprint struct {
	Name                           string
	Type                           ebpf.MapType
	KeySize, ValueSize, MaxEntries uint32 // bytes, bytes, entries
	// MemlockBytes is the kernel's memlock charge of the map (fdinfo's
	// memlock, Linux 4.10), 0 if it did not say.
	MemlockBytes uint64
}

// ProgramFootprint is one program of a tracer.
type ProgramFootprint struct {
	Name string
	// XlatedBytes is the size of the instructions after the verifier's
	// rewrites (8 bytes each); JitedBytes the native code's size, 0 when
	// the kernel does not say (no JIT, or restricted by sysctl).
	XlatedBytes, JitedBytes int
	// VerifiedInsns counts the instructions the verifier processed
	// (Linux 5.16), 0 if the kernel did not say.
	VerifiedInsns uint32
}

// MemlockBytes sums the maps' memlock charges.
func (f Footprint) MemlockBytes() uint64 {
	var n uint64
	for _, m := range f.Maps {
		n += m.MemlockBytes
	}
	return n
}

// ErrNoFootprint is returned by FootprintOf for a tracer that holds no BPF
// objects (ftrace-graph).
var ErrNoFootprint = errors.New("the tracer holds no BPF maps or programs")

// FootprintOf reads the maps and programs of t, a running tracer started
// by Mechanism.Start; the task iterator some mechanisms load to count
// pending calls is one of the programs.
func FootprintOf(t Tracer) (Footprint, error) {
	bt, ok := t.(*tracer)
	if !ok || bt.objects == nil {
		return Footprint{}, ErrNoFootprint
	}
	var f Footprint
	for _, name := range sortedKeys(bt.objects.Maps) {
		info, err := bt.objects.Maps[name].Info()
		if err != nil {
			return Footprint{}, fmt.Errorf("map %s info: %w", name, err)
		}
		memlock, _ := info.Memlock()
		f.Maps = append(f.Maps, MapFootprint{Name: name, Type: info.Type, KeySize: info.KeySize,
			ValueSize: info.ValueSize, MaxEntries: info.MaxEntries, MemlockBytes: memlock})
	}
	for _, p := range bt.programs {
		pf, err := programFootprint(p)
		if err != nil {
			return Footprint{}, err
		}
		f.Programs = append(f.Programs, pf)
	}
	slices.SortFunc(f.Programs, func(a, b ProgramFootprint) int { return strings.Compare(a.Name, b.Name) })
	return f, nil
}

func programFootprint(p *ebpf.Program) (ProgramFootprint, error) {
	info, err := p.Info()
	if err != nil {
		return ProgramFootprint{}, fmt.Errorf("program info: %w", err)
	}
	xlated, err := info.TranslatedSize()
	if err != nil {
		return ProgramFootprint{}, fmt.Errorf("program %s: %w", info.Name, err)
	}
	jited, _ := info.JitedSize() // 0: not reported
	verified, _ := info.VerifiedInstructions()
	return ProgramFootprint{Name: info.Name, XlatedBytes: xlated, JitedBytes: int(jited), VerifiedInsns: verified}, nil
}

// AttachKinds returns the attach kinds of m's programs on vfs_read, from
// their ELF sections (e.g. "fentry", "fexit"; "kprobe.session"), sorted:
// what an empty program of the same kinds costs is m's floor. Nil for a
// mechanism without BPF programs.
func (m Mechanism) AttachKinds() ([]string, error) {
	spec, err := m.object()
	if spec == nil {
		return nil, err
	}
	var kinds []string
	for _, p := range spec.Programs {
		if kind, ok := strings.CutSuffix(p.SectionName, "/vfs_read"); ok {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	return kinds, nil
}
