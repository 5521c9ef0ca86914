package funcset

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"tracebench/internal/tracefs"
)

// Called is a vmlinux function that traced threads called.
type Called struct {
	Name  string
	Calls int
}

// TraceThreads runs run while function_graph, in a private tracefs
// instance of bufferKB KiB per CPU, traces the threads tids (neither
// interrupts nor threads they create) and returns the vmlinux functions
// they called, in the order first seen. It fails, rather than return a
// partial trace, when the buffer lost events. Needs root, tracefs and
// function_graph in instances (an error says which is missing); the
// instance is removed before it returns.
func TraceThreads(tids []int, bufferKB int, run func() error) ([]Called, error) {
	if len(tids) == 0 || bufferKB <= 0 {
		return nil, fmt.Errorf("trace threads %v with %d KiB per CPU: want threads and a buffer", tids, bufferKB)
	}
	pids := make([]string, len(tids))
	for i, tid := range tids {
		pids[i] = strconv.Itoa(tid)
	}
	var raw []byte
	err := traceWith("function_graph", graphSettings, graphOptional, []tracefs.Setting{
		{File: "buffer_size_kb", Value: strconv.Itoa(bufferKB)},
		{File: "set_ftrace_pid", Value: strings.Join(pids, " ")},
	}, func(in tracefs.Instance) (err error) {
		raw, err = traceOne(in, run)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trace threads %v: %w", tids, err)
	}
	calls, err := parseGraph(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("trace threads %v: %w", tids, err)
	}
	return called(calls), nil
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
