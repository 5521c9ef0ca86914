package tracers

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// tracefsGroupPrefix names the tracefs event groups cilium/ebpf creates
// for our kprobes when they cannot use the perf kprobe PMU (maxactive).
const tracefsGroupPrefix = "tracebench"

// kprobeEventsFiles are where tracefs lists dynamic kprobe events; the
// first that exists is read (the second is usually the same mount).
var kprobeEventsFiles = []string{"/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"}

// Leftovers lists the kernel objects of any tracer (of this or another
// process) that are still loaded: BPF programs named like the programs of
// a registered mechanism, BPF links to them, tracefs kprobe events of our
// group and tracefs instances of ftrace-graph. After every tracer was closed it must be empty. Needs root.
func Leftovers() ([]string, error) {
	ours, err := programNames()
	if err != nil {
		return nil, err
	}
	progs, err := loadedPrograms(ours)
	if err != nil {
		return nil, err
	}
	var found []string
	for id, name := range progs {
		found = append(found, fmt.Sprintf("BPF program %d %s", id, name))
	}
	links, err := linksTo(progs)
	if err != nil {
		return nil, err
	}
	events, err := kprobeEvents()
	if err != nil {
		return nil, err
	}
	instances, err := instanceLeftovers()
	if err != nil {
		return nil, err
	}
	return slices.Concat(found, links, events, instances), nil
}

// leftoversPoll is how often WaitNoLeftovers looks again.
const leftoversPoll = 20 * time.Millisecond

// WaitNoLeftovers waits up to timeout for Leftovers to be empty and
// returns what was still there at the end (nil when nothing). Closing the
// last descriptor does not unload at once: the kernel frees a link and its
// program after an RCU grace period (seen for the tracing_multi link of
// fsession-multi in the 7.2 guest), so a check right after Close must wait.
func WaitNoLeftovers(timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		left, err := Leftovers()
		if err != nil || len(left) == 0 || time.Now().After(deadline) {
			return left, err
		}
		time.Sleep(leftoversPoll)
	}
}

// programNames returns the names of every registered mechanism's programs,
// whole and truncated to BPF_OBJ_NAME_LEN-1 bytes: the kernel keeps the
// truncated name, which cilium/ebpf's Info replaces with the whole one
// from the program's BTF where it has any.
func programNames() (map[string]bool, error) {
	names := map[string]bool{}
	for _, m := range registry {
		if !m.BPF() {
			continue
		}
		spec, err := m.spec()
		if err != nil {
			return nil, fmt.Errorf("%s: BPF object: %w", m.Name, err)
		}
		for name := range spec.Programs {
			names[name] = true
			names[name[:min(len(name), 15)]] = true
		}
	}
	return names, nil
}

// loadedPrograms returns the IDs and names of loaded programs named in ours.
func loadedPrograms(ours map[string]bool) (map[ebpf.ProgramID]string, error) {
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

// linksTo describes the loaded BPF links whose program is in progs.
func linksTo(progs map[ebpf.ProgramID]string) ([]string, error) {
	var found []string
	var it link.Iterator
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			return nil, fmt.Errorf("BPF link %d info: %w", it.ID, err)
		}
		if name, ok := progs[info.Program]; ok {
			found = append(found, fmt.Sprintf("BPF link %d (type %d) of program %d %s", it.ID, info.Type, info.Program, name))
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("enumerate BPF links: %w", err)
	}
	return found, nil
}

// kprobeEvents returns the tracefs kprobe events of our group.
func kprobeEvents() ([]string, error) {
	var found []string
	for _, path := range kprobeEventsFiles {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // tracefs not mounted there: nothing can be left in it
		}
		if err != nil {
			return nil, err
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			// Lines look like "r10:tracebench_1a2b/vfs_read vfs_read".
			if _, event, ok := strings.Cut(scanner.Text(), ":"); ok && strings.HasPrefix(event, tracefsGroupPrefix+"_") {
				found = append(found, "tracefs kprobe event "+scanner.Text()+" in "+path)
			}
		}
		err = scanner.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return found, nil
	}
	return found, nil
}
