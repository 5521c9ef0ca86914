package peers

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
)

// Kernel is what the kernel says about a running peer: what it attached
// and the counters it keeps for those attachments. The counters are
// system-wide, every process's calls, not the traced process's.
type Kernel struct {
	// Attached names each attachment in the kernel's terms, e.g. "perf
	// link of Kprobe program dummy_kretprobe: kretprobe vfs_read; program
	// calls ..." or "tracefs instance perf-ftrace-Z18Jjj: current_tracer
	// function_graph, ...".
	Attached []string
	// Missed counts calls a probe skipped: kprobe and kretprobe nmissed
	// (a kretprobe's includes calls beyond maxactive), kprobe_multi
	// missed.
	Missed uint64
	// RecursionMisses counts program runs the kernel skipped because the
	// program was running on that CPU already (e.g. a preempted task held
	// a trampoline program's per-CPU guard).
	RecursionMisses uint64
	// Maps are the hash maps of the peer's programs, e.g. its per-thread
	// start times.
	Maps []MapFill
	// Dropped counts ring buffer records the kernel overwrote or
	// dropped (a tracefs instance's overrun and dropped events).
	Dropped uint64
}

// MapFill is how full one hash map was.
type MapFill struct {
	Name                string
	Entries, MaxEntries uint32
}

func (m MapFill) String() string { return fmt.Sprintf("%s %d/%d", m.Name, m.Entries, m.MaxEntries) }

// bpfObjects are the BPF links, programs and maps a process holds
// descriptors of, by ID, with each link's fdinfo lines.
type bpfObjects struct {
	links    map[link.ID]map[string]string
	programs []ebpf.ProgramID
	maps     []ebpf.MapID
}

// heldBPF reads the BPF objects process pid holds from /proc/PID/fd and
// fdinfo: a tool keeps a descriptor of every link, program and map it
// made.
func heldBPF(pid int) (bpfObjects, error) {
	objs := bpfObjects{links: map[link.ID]map[string]string{}}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return objs, err
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		kind, ok := map[string]string{"anon_inode:bpf_link": "link_id", "anon_inode:bpf-prog": "prog_id",
			"anon_inode:bpf-map": "map_id"}[target]
		if !ok {
			continue
		}
		info, err := fdinfo(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		id, err := strconv.ParseUint(info[kind], 10, 32)
		if err != nil {
			return objs, fmt.Errorf("fdinfo of %s fd %s: %s %q", target, fd.Name(), kind, info[kind])
		}
		switch kind {
		case "link_id":
			objs.links[link.ID(id)] = info
		case "prog_id":
			objs.programs = append(objs.programs, ebpf.ProgramID(id))
		case "map_id":
			objs.maps = append(objs.maps, ebpf.MapID(id))
		}
	}
	return objs, nil
}

// fdinfo parses a /proc/PID/fdinfo file's "key:\tvalue" lines.
func fdinfo(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			info[k] = strings.TrimSpace(v)
		}
	}
	return info, sc.Err()
}

// observeBPF reads what the BPF tool running as pid attached: its links
// (through cilium/ebpf's link info), its programs' recursion misses and
// its hash maps' fill.
func observeBPF(pid int) (Kernel, error) {
	var k Kernel
	objs, err := heldBPF(pid)
	if err != nil {
		return k, err
	}
	if len(objs.links) == 0 {
		return k, fmt.Errorf("process %d holds no BPF link", pid)
	}
	for _, id := range slices.Sorted(maps.Keys(objs.links)) {
		what, missed, err := describeLink(id, objs.links[id])
		if err != nil {
			return k, err
		}
		k.Attached = append(k.Attached, what)
		k.Missed += missed
	}
	for _, id := range objs.programs {
		prog, err := loadedProgram(id)
		if errors.Is(err, os.ErrNotExist) {
			continue // unloaded meanwhile
		}
		if err != nil {
			return k, err
		}
		k.RecursionMisses += prog.stats.RecursionMisses
	}
	for _, id := range objs.maps {
		fill, ok, err := hashFill(id)
		if err != nil {
			return k, err
		}
		if ok {
			k.Maps = append(k.Maps, fill)
		}
	}
	return k, nil
}

// describeLink names a link, its program and what it is attached to, and
// returns the calls the kernel says its probe missed.
func describeLink(id link.ID, fdinfo map[string]string) (string, uint64, error) {
	l, err := link.NewFromID(id)
	if err != nil {
		return "", 0, fmt.Errorf("BPF link %d: %w", id, err)
	}
	defer l.Close()
	info, err := l.Info()
	if err != nil {
		return "", 0, fmt.Errorf("BPF link %d info: %w", id, err)
	}
	prog, err := loadedProgram(info.Program)
	if err != nil {
		return "", 0, err
	}
	what := fmt.Sprintf("%s link of %v program %s", fdinfo["link_type"], prog.info.Type, prog.info.Name)
	var missed uint64
	switch {
	case info.Tracing() != nil:
		t := info.Tracing()
		what += fmt.Sprintf(": %v %s", ebpf.AttachType(t.AttachType), kernelFunc(t.TargetBtfId))
	case info.KprobeMulti() != nil:
		km := info.KprobeMulti()
		what += fmt.Sprintf(": %d functions, flags %#x", km.Count, km.Flags)
		missed = km.Missed
	case info.PerfEvent() != nil && info.PerfEvent().Kprobe() != nil:
		kp := info.PerfEvent().Kprobe()
		kind := map[uint32]string{uint32(link.PerfEventKprobe): "kprobe", uint32(link.PerfEventKretprobe): "kretprobe"}[uint32(info.PerfEvent().Type)]
		what += fmt.Sprintf(": %s %s", kind, kp.Function)
		missed = kp.Missed
	}
	calls, err := prog.callTargets()
	if err != nil {
		return "", 0, err
	}
	what += "; program calls " + strings.Join(calls, ", ")
	return what, missed, nil
}

// program is a loaded program's info and run-time stats.
type program struct {
	id    ebpf.ProgramID
	info  *ebpf.ProgramInfo
	stats *ebpf.ProgramStats
}

// loadedProgram reads the program with the given ID; its error wraps
// os.ErrNotExist if it is gone.
func loadedProgram(id ebpf.ProgramID) (program, error) {
	prog, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return program{}, fmt.Errorf("BPF program %d: %w", id, err)
	}
	defer prog.Close()
	p := program{id: id}
	if p.info, err = prog.Info(); err == nil {
		p.stats, err = prog.Stats()
	}
	if err != nil {
		return program{}, fmt.Errorf("BPF program %d: %w", id, err)
	}
	return p, nil
}

// callTargets names the kernel functions the program calls: helpers,
// kfuncs and the map operations the verifier made direct calls (a
// kprobe_multi link's info has no attach type; a program calling
// bpf_session_is_return was loaded as kprobe.session, only those may).
// Its xlated instructions hold each call's target as an offset from
// __bpf_call_base, named through /proc/kallsyms.
func (p program) callTargets() ([]string, error) {
	insns, err := p.info.Instructions()
	if err != nil {
		return nil, fmt.Errorf("BPF program %d instructions: %w", p.id, err)
	}
	syms, err := kernelSymbols()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ins := range insns {
		if ins.OpCode.JumpOp() != asm.Call || ins.IsFunctionCall() {
			continue
		}
		addr := syms.callBase + uint64(int64(int32(ins.Constant)))
		name, ok := syms.byAddr[addr]
		if !ok {
			name = fmt.Sprintf("%#x", addr)
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// symbols are the kernel's text symbols by address.
type symbols struct {
	byAddr   map[uint64]string
	callBase uint64 // __bpf_call_base
}

// kernelSymbols reads /proc/kallsyms once.
var kernelSymbols = sync.OnceValues(func() (symbols, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return symbols{}, err
	}
	defer f.Close()
	syms := symbols{byAddr: map[uint64]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.ContainsAny(fields[1], "tT") {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		syms.byAddr[addr] = fields[2]
		if fields[2] == "__bpf_call_base" {
			syms.callBase = addr
		}
	}
	if err := sc.Err(); err != nil {
		return symbols{}, err
	}
	if syms.callBase == 0 {
		return symbols{}, fmt.Errorf("no __bpf_call_base in /proc/kallsyms (addresses hidden by kptr_restrict?)")
	}
	return syms, nil
})

// kernelFunc names a function of the kernel's BTF, or gives its ID.
func kernelFunc(id btf.TypeID) string {
	spec, err := btf.LoadKernelSpec()
	if err == nil {
		if t, err := spec.TypeByID(id); err == nil {
			return t.TypeName()
		}
	}
	return fmt.Sprintf("BTF type %d", id)
}

// hashFill counts the entries of a hash map; ok is false for other map
// types.
func hashFill(id ebpf.MapID) (_ MapFill, ok bool, _ error) {
	m, err := ebpf.NewMapFromID(id)
	if errors.Is(err, os.ErrNotExist) {
		return MapFill{}, false, nil
	}
	if err != nil {
		return MapFill{}, false, fmt.Errorf("BPF map %d: %w", id, err)
	}
	defer m.Close()
	info, err := m.Info()
	if err != nil {
		return MapFill{}, false, fmt.Errorf("BPF map %d info: %w", id, err)
	}
	switch info.Type {
	case ebpf.Hash, ebpf.LRUHash, ebpf.PerCPUHash, ebpf.LRUCPUHash:
	default:
		return MapFill{}, false, nil
	}
	fill := MapFill{Name: info.Name, MaxEntries: info.MaxEntries}
	// A key deleted meanwhile restarts the walk at the first key: the
	// count stops at the map's size, read while the workload is over.
	var key any
	for fill.Entries < fill.MaxEntries {
		next, err := m.NextKeyBytes(key)
		if err != nil {
			return MapFill{}, false, fmt.Errorf("BPF map %d %s keys: %w", id, info.Name, err)
		}
		if next == nil {
			return fill, true, nil
		}
		fill.Entries++
		key = next
	}
	return fill, true, nil
}
