package funcset

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"tracebench/internal/tracefs"
)

// Called is a vmlinux function that traced threads called.
type Called struct {
	Name  string
	Calls int
}

// FuncGraph is function_graph in a private tracefs instance, kept on between
// the traces made through it (tracing off between them): turning it on
// or off over every function takes seconds under emulation (4-5 s each on
// 7.2 under TCG), so a caller that traces several times shares one.
type FuncGraph struct {
	in   tracefs.Instance
	tids []int // the threads set_ftrace_pid names
}

// WithFuncGraph runs run with a FuncGraph of bufferKB KiB per CPU (0: the
// kernel's default size) whose pid filter names tids until a trace
// names others. Needs root, tracefs and function_graph in instances (an
// error says which is missing); the instance is removed before it
// returns (after a SIGKILL, tracefs.ReclaimStale removes it).
func WithFuncGraph(bufferKB int, tids []int, run func(g *FuncGraph) error) error {
	if len(tids) == 0 || bufferKB < 0 {
		return fmt.Errorf("function_graph of threads %v with %d KiB per CPU: want threads and a buffer", tids, bufferKB)
	}
	settings := []tracefs.Setting{{File: "set_ftrace_pid", Value: pidList(tids)}}
	if bufferKB > 0 {
		settings = append(settings, tracefs.Setting{File: "buffer_size_kb", Value: strconv.Itoa(bufferKB)})
	}
	return traceWith("function_graph", graphSettings, graphOptional, settings, func(in tracefs.Instance) error {
		return run(&FuncGraph{in: in, tids: tids})
	})
}

// Threads runs run while g traces the threads tids (neither interrupts
// nor threads they create) and returns the vmlinux functions they called,
// in the order first seen. It fails, rather than return a partial trace,
// when the buffer lost events.
func (g *FuncGraph) Threads(tids []int, run func() error) ([]Called, error) {
	if err := g.follow(tids); err != nil {
		return nil, fmt.Errorf("trace threads %v: %w", tids, err)
	}
	raw, err := traceOne(g.in, run)
	if err != nil {
		return nil, fmt.Errorf("trace threads %v: %w", tids, err)
	}
	calls, err := parseGraph(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("trace threads %v: %w", tids, err)
	}
	return called(calls), nil
}

// Readpath traces rounds rounds of a 1-byte read(2) of each of Sources,
// made on the calling goroutine's thread (locked meanwhile), and returns
// every function seen.
func (g *FuncGraph) Readpath(rounds int) (*Readpath, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("readpath: %d rounds, want at least 1", rounds)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := g.follow([]int{unix.Gettid()}); err != nil {
		return nil, fmt.Errorf("readpath: %w", err)
	}
	traces, err := readRounds(g.in, rounds)
	if err != nil {
		return nil, fmt.Errorf("readpath: %w", err)
	}
	return readpathOf(traces, rounds)
}

// follow points g's pid filter at tids: a cheap write, function_graph
// stays on.
func (g *FuncGraph) follow(tids []int) error {
	if len(tids) == 0 {
		return fmt.Errorf("no thread to trace")
	}
	if slices.Equal(tids, g.tids) {
		return nil
	}
	if err := g.in.Write("set_ftrace_pid", pidList(tids)); err != nil {
		return err
	}
	g.tids = slices.Clone(tids)
	return nil
}

func pidList(tids []int) string {
	pids := make([]string, len(tids))
	for i, tid := range tids {
		pids[i] = strconv.Itoa(tid)
	}
	return strings.Join(pids, " ")
}

// TraceThreads is Threads in a FuncGraph of its own.
func TraceThreads(tids []int, bufferKB int, run func() error) (called []Called, err error) {
	if bufferKB == 0 {
		return nil, fmt.Errorf("trace threads %v with 0 KiB per CPU: want a buffer", tids)
	}
	err = WithFuncGraph(bufferKB, tids, func(g *FuncGraph) (err error) {
		called, err = g.Threads(tids, run)
		return err
	})
	return called, err
}

// called counts calls by vmlinux function, in the order first seen.
func called(calls []graphCall) []Called {
	var out []Called
	index := map[string]int{}
	for _, c := range calls {
		if c.module != "" {
			continue
		}
		i, ok := index[c.name]
		if !ok {
			i = len(out)
			index[c.name] = i
			out = append(out, Called{Name: c.name})
		}
		out[i].Calls++
	}
	return out
}
