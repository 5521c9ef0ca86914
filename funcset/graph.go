package funcset

import (
	"fmt"
	"io"
	"strings"
)

// graphCall is one function entered in function_graph output.
type graphCall struct {
	name, module string
	depth        int // 0: called from the syscall entry code
}

// parseGraph reads function_graph output (the default columns: CPU,
// duration, "|", the call indented two blanks per depth) and returns the
// function entries, "f() {" and "f();", in order. Returns ("}") are
// skipped, as are comment, CPU-switch and task-switch lines; an error
// names the first other line.
func parseGraph(r io.Reader) ([]graphCall, error) {
	var calls []graphCall
	err := eachLine(r, func(n int, line string) error {
		if graphMarker(line) {
			return nil
		}
		_, call, ok := strings.Cut(line, "|")
		if !ok {
			return fmt.Errorf("function_graph line %d: %q has no \"|\" column", n, line)
		}
		text := strings.TrimLeft(call, " ")
		indent := len(call) - len(text)
		if strings.HasPrefix(text, "}") {
			return nil
		}
		name, ok := strings.CutSuffix(text, "() {")
		if !ok {
			name, ok = strings.CutSuffix(text, "();")
		}
		if !ok || indent < 2 || indent%2 != 0 {
			return fmt.Errorf("function_graph line %d: %q is not a call, a leaf or a return", n, line)
		}
		name, module, err := nameAndModule(name)
		if err != nil {
			return fmt.Errorf("function_graph line %d: %w", n, err)
		}
		calls = append(calls, graphCall{name: name, module: module, depth: indent/2 - 1})
		return nil
	})
	return calls, err
}

// graphMarker reports whether line is one function_graph prints between
// calls: a "#" comment, the "------" frame and "=>" line of a task or CPU
// switch.
func graphMarker(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") || strings.Contains(t, "=>")
}

// readSyscall is what a traced read(2) ran: the calls of its handler's
// tree (the depth-0 call named *sys_read: __x64_sys_read on x86-64,
// __arm64_sys_read on arm64) with the path from the handler to each,
// then the depth-0 calls after it up to the next handler (the work every
// syscall does before returning to user space).
type readSyscall struct {
	tree     []graphCall
	paths    []string // paths[i]: "handler/.../caller" of tree[i]
	exitWork []graphCall
}

// findRead returns the first read(2) in calls, an error naming what was
// seen when there is none.
func findRead(calls []graphCall) (readSyscall, error) {
	start := -1
	for i, c := range calls {
		if c.depth == 0 && strings.HasSuffix(c.name, "sys_read") && c.module == "" {
			start = i
			break
		}
	}
	if start < 0 {
		return readSyscall{}, fmt.Errorf("no read(2) handler (a depth-0 call *sys_read) among %d function_graph calls", len(calls))
	}
	var rs readSyscall
	var stack []string
	i := start
	for ; i < len(calls) && (i == start || calls[i].depth > 0); i++ {
		c := calls[i]
		stack = append(stack[:min(c.depth, len(stack))], c.name)
		rs.tree = append(rs.tree, c)
		rs.paths = append(rs.paths, strings.Join(stack[:len(stack)-1], "/"))
	}
	// After the handler, depth-0 leaves until the next call with callees:
	// the next syscall's handler (a depth-0 call followed by depth 1).
	for ; i < len(calls) && calls[i].depth == 0 && !(i+1 < len(calls) && calls[i+1].depth > 0); i++ {
		rs.exitWork = append(rs.exitWork, calls[i])
	}
	return rs, nil
}
