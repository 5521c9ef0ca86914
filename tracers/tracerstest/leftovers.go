// Package tracerstest is the test support that needs tracers' types: what
// tracers left in the kernel. The rest of the test support, which any
// package may import, is internal/testenv.
package tracerstest

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"tracebench/internal/poll"
	"tracebench/internal/tracefs"
	"tracebench/tracers"
)

// Leftover is one kernel object of a tracer that is still there.
type Leftover struct {
	Kind tracers.Residue
	What string // e.g. "12 vfs_read_entry"
}

func (l Leftover) String() string { return l.Kind.String() + " " + l.What }

// Leftovers lists the kernel objects of any tracer (of any process) still
// loaded: BPF programs named like a registered mechanism's, links to them,
// tracefs kprobe events and instances of tracebench. Needs root.
func Leftovers() ([]Leftover, error) {
	progs, err := loadedPrograms()
	if err != nil {
		return nil, err
	}
	var found []Leftover
	for id, name := range progs {
		found = append(found, Leftover{tracers.ResidueBPFProgram, fmt.Sprintf("%d %s", id, name)})
	}
	links, err := linksTo(progs)
	if err != nil {
		return nil, err
	}
	found = append(found, links...)
	events, err := tracefs.KprobeEvents()
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		found = append(found, Leftover{tracers.ResidueKprobeEvent, e})
	}
	instances, err := tracefs.Instances()
	for _, in := range instances {
		found = append(found, Leftover{tracers.ResidueTracefsInstance, in.Dir})
	}
	return found, err
}

// leftoversPoll is how often WaitNoLeftovers looks again.
const leftoversPoll = 20 * time.Millisecond

// WaitNoLeftovers waits up to timeout for Leftovers to be empty and returns
// what was left then: the kernel frees a closed link and its program only
// after an RCU grace period.
func WaitNoLeftovers(timeout time.Duration) ([]Leftover, error) {
	var left []Leftover
	err := poll.Until(time.Now().Add(timeout), leftoversPoll, "no leftovers", func() (bool, error) {
		var err error
		left, err = Leftovers()
		return len(left) == 0, err
	})
	if errors.Is(err, poll.ErrTimedOut) {
		return left, nil
	}
	return left, err
}

// programNames returns the names of every BPF mechanism's programs, whole
// and cut to BPF_OBJ_NAME_LEN-1 bytes as the kernel keeps them (cilium/ebpf
// gives the whole name where the program has BTF).
func programNames() (map[string]bool, error) {
	names := map[string]bool{}
	for _, m := range tracers.Mechanisms() {
		progs, err := m.Programs()
		if err != nil {
			return nil, err
		}
		for _, name := range progs {
			names[name] = true
			names[name[:min(len(name), 15)]] = true
		}
	}
	return names, nil
}

// loadedPrograms returns the IDs and names of loaded programs of ours.
func loadedPrograms() (map[ebpf.ProgramID]string, error) {
	ours, err := programNames()
	if err != nil {
		return nil, err
	}
	found := map[ebpf.ProgramID]string{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return found, nil
		}
		if err != nil {
			return nil, fmt.Errorf("enumerate BPF programs: %w", err)
		}
		id = next
		name, err := programName(id)
		if errors.Is(err, os.ErrNotExist) {
			continue // unloaded while we looked
		}
		if err != nil {
			return nil, err
		}
		if ours[name] {
			found[id] = name
		}
	}
}

func programName(id ebpf.ProgramID) (string, error) {
	prog, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return "", fmt.Errorf("BPF program %d: %w", id, err)
	}
	defer prog.Close()
	info, err := prog.Info()
	if err != nil {
		return "", fmt.Errorf("BPF program %d info: %w", id, err)
	}
	return info.Name, nil
}

// linksTo returns the loaded BPF links whose program is in progs.
func linksTo(progs map[ebpf.ProgramID]string) ([]Leftover, error) {
	var found []Leftover
	var it link.Iterator
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			return nil, fmt.Errorf("BPF link %d info: %w", it.ID, err)
		}
		if name, ok := progs[info.Program]; ok {
			what := fmt.Sprintf("%d (type %d) of program %d %s", it.ID, info.Type, info.Program, name)
			found = append(found, Leftover{tracers.ResidueBPFLink, what})
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("enumerate BPF links: %w", err)
	}
	return found, nil
}
