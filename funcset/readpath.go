package funcset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"tracebench/internal/tracefs"
)

// The read(2) calls readpath traces, each of 1 byte that returns at once.
const (
	SourceZero = "/dev/zero"
	SourcePipe = "pipe"
)

// Sources are the read(2)s readpath is made of, in the order traced.
var Sources = []string{SourceZero, SourcePipe}

// Found is a function traced read(2)s passed through.
type Found struct {
	Name, Module string
	// Calls is, per source, how many times one read(2) called it, the
	// fewest over the rounds it was seen in; absent: never seen.
	Calls map[string]int
	// Rounds is, per source, in how many rounds it was seen.
	Rounds map[string]int
	// Path is how the first read(2) that called it got there:
	// "__x64_sys_read/ksys_read/vfs_read", or "exit work after
	// __x64_sys_read" for the work every syscall does before returning.
	Path string
}

// Readpath is what function_graph saw of rounds rounds of each source.
type Readpath struct {
	Rounds    int
	Functions []Found // in the order first seen
}

// graphSettings make function_graph print what parseGraph reads and
// nothing of other contexts: no interrupts, no children, one thread. The
// comm-pid column is on, as the ftrace-graph tracer needs it: before 7.x
// the funcgraph-* options are one set for every instance (6.12), and a
// row may run both at once.
var graphSettings = slices.Concat(tracefs.TextOutput, []tracefs.Setting{
	{File: "options/funcgraph-irqs", Value: "0"},
	{File: "options/funcgraph-proc", Value: "1"},
	{File: "options/funcgraph-abstime", Value: "0"},
	{File: "options/function-fork", Value: "0"},
})

// graphOptional are options older kernels lack (funcgraph-args; 7.2 has
// it) or are built without (funcgraph-retval); where they exist they would
// change the call column.
var graphOptional = []tracefs.Setting{
	{File: "options/funcgraph-args", Value: "0"},
	{File: "options/funcgraph-retval", Value: "0"},
	{File: "options/funcgraph-retaddr", Value: "0"},
}

// FindReadpath is FuncGraph.Readpath in a FuncGraph of its own, of the kernel's
// default buffer size, filtered to the reading thread.
func FindReadpath(rounds int) (rp *Readpath, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = WithFuncGraph(0, []int{unix.Gettid()}, func(g *FuncGraph) (err error) {
		rp, err = g.Readpath(rounds)
		return err
	})
	return rp, err
}

// readpathOf merges the function_graph output of each source's rounds.
func readpathOf(traces map[string][][]byte, rounds int) (*Readpath, error) {
	rp := &Readpath{Rounds: rounds}
	index := map[string]int{}
	for _, source := range Sources {
		if len(traces[source]) != rounds {
			return nil, fmt.Errorf("readpath: %d traces of %s, want %d", len(traces[source]), source, rounds)
		}
		for round, raw := range traces[source] {
			calls, err := parseGraph(bytes.NewReader(raw))
			if err != nil {
				return nil, fmt.Errorf("readpath: %s round %d: %w", source, round+1, err)
			}
			rs, err := findRead(calls)
			if err != nil {
				return nil, fmt.Errorf("readpath: %s round %d: %w", source, round+1, err)
			}
			rp.add(index, source, rs)
		}
	}
	return rp, nil
}

// add counts one traced read(2) of source.
func (rp *Readpath) add(index map[string]int, source string, rs readSyscall) {
	counts := map[string]int{}
	var order []graphCall
	paths := map[string]string{}
	for i, c := range rs.tree {
		if counts[c.name] == 0 {
			order = append(order, c)
			paths[c.name] = rs.paths[i]
		}
		counts[c.name]++
	}
	handler := rs.tree[0].name
	for _, c := range rs.exitWork {
		if counts[c.name] == 0 {
			order = append(order, c)
			paths[c.name] = "exit work after " + handler
		}
		counts[c.name]++
	}
	for _, c := range order {
		i, ok := index[c.name]
		if !ok {
			i = len(rp.Functions)
			index[c.name] = i
			rp.Functions = append(rp.Functions, Found{Name: c.name, Module: c.module,
				Calls: map[string]int{}, Rounds: map[string]int{}, Path: paths[c.name]})
		}
		f := &rp.Functions[i]
		if n, seen := f.Calls[source]; !seen || counts[c.name] < n {
			f.Calls[source] = counts[c.name]
		}
		f.Rounds[source]++
	}
}

// OnEveryRead reports whether f was seen in every round of some source:
// a function seen in fewer ran for something else (a page fault, a
// preemption) in those rounds.
func (rp *Readpath) OnEveryRead(f Found) bool {
	return slices.ContainsFunc(Sources, func(s string) bool { return f.Rounds[s] == rp.Rounds })
}

// seenFormat says, in a readpath member's reason after "<source>: ", how
// often one read(2) of that source called it and in how many of the
// rounds it was seen.
const seenFormat = "%d call(s) per read, in %d of %d rounds"

// CalledOnlyBy returns the functions of rp that parent called directly
// on every read(2) of source and that no read of another source called,
// in the order first seen: for a pipe under vfs_read, the pipe's
// f_op->read (anon_pipe_read in 7.2, pipe_read before).
func (rp *Readpath) CalledOnlyBy(parent, source string) []Found {
	var out []Found
	for _, f := range rp.Functions {
		callers := strings.Split(f.Path, "/")
		only := len(f.Rounds) == 1 && f.Rounds[source] == rp.Rounds
		if only && callers[len(callers)-1] == parent {
			out = append(out, f)
		}
	}
	return out
}

// describe says how f was seen: calls per read(2) of each source, rounds
// seen in, the path to it.
func (rp *Readpath) describe(f Found) string {
	var parts []string
	for _, s := range Sources {
		if f.Rounds[s] > 0 {
			parts = append(parts, s+": "+fmt.Sprintf(seenFormat, f.Calls[s], f.Rounds[s], rp.Rounds))
		}
	}
	path := f.Path
	if path == "" {
		path = "the read(2) handler"
	}
	return strings.Join(parts, "; ") + "; via " + path
}

// readRounds traces the reads, each alone in the buffer.
func readRounds(in tracefs.Instance, rounds int) (map[string][][]byte, error) {
	fds, closeAll, err := openSources()
	if err != nil {
		return nil, err
	}
	defer closeAll()
	traces := map[string][][]byte{}
	buf := make([]byte, 1)
	for range rounds {
		for _, source := range Sources {
			if source == SourcePipe {
				if _, err := unix.Write(fds.pipeWrite, buf); err != nil {
					return nil, fmt.Errorf("fill pipe: %w", err)
				}
			}
			raw, err := traceOne(in, func() error {
				n, err := unix.Read(fds.of[source], buf)
				if err == nil && n != 1 {
					err = fmt.Errorf("read %d bytes, want 1", n)
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("read(2) of %s: %w", source, err)
			}
			traces[source] = append(traces[source], raw)
		}
	}
	return traces, nil
}

type sourceFDs struct {
	of        map[string]int
	pipeWrite int
}

func openSources() (sourceFDs, func(), error) {
	zero, err := unix.Open(SourceZero, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return sourceFDs{}, nil, fmt.Errorf("open %s: %w", SourceZero, err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(zero)
		return sourceFDs{}, nil, fmt.Errorf("pipe: %w", err)
	}
	closeAll := func() {
		unix.Close(zero)
		unix.Close(p[0])
		unix.Close(p[1])
	}
	return sourceFDs{of: map[string]int{SourceZero: zero, SourcePipe: p[0]}, pipeWrite: p[1]}, closeAll, nil
}

// traceOne empties the buffer, runs read with tracing on and returns the
// trace.
func traceOne(in tracefs.Instance, read func() error) ([]byte, error) {
	if err := in.Write("trace", ""); err != nil {
		return nil, err
	}
	if err := in.Write("tracing_on", "1"); err != nil {
		return nil, err
	}
	readErr := read()
	if err := errors.Join(readErr, in.Write("tracing_on", "0")); err != nil {
		return nil, err
	}
	if err := noLostEvents(in); err != nil {
		return nil, err
	}
	return os.ReadFile(in.Path("trace"))
}

// Readpath returns the set "readpath": the functions of rp seen on every
// read(2) of some source that every kind attaches, in the order first
// seen, but those a kind's programs run themselves (ownRuns); the others
// are listed excluded with their reasons.
func (inv *Inventory) Readpath(rp *Readpath, kinds []Kind) (*Set, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("function set readpath: no attach kind")
	}
	s := &Set{Name: "readpath", Kernel: inv.Kernel, Kinds: kinds, Inputs: inv.inputs(),
		Method: fmt.Sprintf("function_graph in a private tracefs instance, one thread, interrupts not traced: "+
			"the calls of the read(2) handler and the syscall exit work after it, for %d rounds of a 1-byte read(2) of %s",
			rp.Rounds, strings.Join(Sources, " and of a "))}
	fns := inv.functions()
	for _, found := range rp.Functions {
		var why string
		switch {
		case found.Module != "":
			why = "in module " + found.Module + ": function sets hold vmlinux functions only"
		case !rp.OnEveryRead(found):
			why = "not on every read(2) of any source: it ran for something else (a fault, a preemption)"
		default:
			if why = inv.judge(fns, kinds, found.Name); why == "" {
				why = ownRun(kinds, fns[found.Name])
			}
		}
		s.add(Entry{Name: found.Name, Reason: rp.describe(found)}, why)
	}
	if len(s.Members) == 0 {
		return nil, fmt.Errorf("function set readpath: none of the %d functions seen attaches with every kind of %s",
			len(rp.Functions), kindList(kinds))
	}
	return s, nil
}

// CallsPerRead returns how many times one read(2) of source called e, a
// member of a readpath set as Readpath wrote it (its reason says so); ok is
// false where e was not seen on every traced read(2) of source.
func CallsPerRead(e Entry, source string) (calls int, ok bool) {
	for _, part := range strings.Split(e.Reason, "; ") {
		seen, isSource := strings.CutPrefix(part, source+": ")
		var rounds, of int
		if n, _ := fmt.Sscanf(seen, seenFormat, &calls, &rounds, &of); isSource && n == 3 {
			return calls, rounds == of
		}
	}
	return 0, false
}
