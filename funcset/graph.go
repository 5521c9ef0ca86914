package funcset

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// graphCall is one function entered in function_graph output.
type graphCall struct {
	name, module string
	depth        int // 0: the outermost call traced
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
// tree (the first call named sys_read or __ARCH_sys_read: __x64_sys_read
// on x86-64, __arm64_sys_read on arm64) with the path from the handler to
// each, then the leaves after it, no deeper than it, up to the next call
// with callees (the work every syscall does before returning to user
// space). The handler's depth is whatever the kernel's entry code puts
// above it: 0 where the syscall table's dispatcher is not traced (7.2),
// 1 under a traced x64_sys_call (6.12).
type readSyscall struct {
	tree     []graphCall
	paths    []string // paths[i]: "handler/.../caller" of tree[i]
	exitWork []graphCall
}

// readHandler reports whether c is read(2)'s syscall handler: sys_read or
// a wrapper of it (__x64_sys_read, __arm64_sys_read; __se_ and __do_
// where SYSCALL_DEFINE's inner functions are not inlined), never
// ksys_read it calls nor a file's read named like one (proc_sys_read,
// fb_sys_read).
func readHandler(c graphCall) bool {
	if c.module != "" {
		return false
	}
	arch, ok := strings.CutPrefix(strings.TrimSuffix(c.name, "_sys_read"), "__")
	return c.name == "sys_read" || ok && strings.HasSuffix(c.name, "_sys_read") && arch != "" &&
		!strings.ContainsRune(arch, '_')
}

// findRead returns the first read(2) in calls, an error naming what was
// seen when there is none.
func findRead(calls []graphCall) (readSyscall, error) {
	start := slices.IndexFunc(calls, readHandler)
	if start < 0 {
		return readSyscall{}, fmt.Errorf("no read(2) handler (a call sys_read or __ARCH_sys_read) among %d function_graph calls", len(calls))
	}
	top := calls[start].depth
	var rs readSyscall
	var stack []string
	i := start
	for ; i < len(calls) && (i == start || calls[i].depth > top); i++ {
		c := calls[i]
		stack = append(stack[:min(c.depth-top, len(stack))], c.name)
		rs.tree = append(rs.tree, c)
		rs.paths = append(rs.paths, strings.Join(stack[:len(stack)-1], "/"))
	}
	// After the handler, leaves no deeper than it until the next call with
	// callees: the next syscall's handler or its dispatcher.
	for ; i < len(calls) && calls[i].depth <= top && !(i+1 < len(calls) && calls[i+1].depth > calls[i].depth); i++ {
		rs.exitWork = append(rs.exitWork, calls[i])
	}
	return rs, nil
}
