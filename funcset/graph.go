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

// parseGraph reads function_graph output (the columns CPU, comm-pid if
// funcgraph-proc, duration, each ended by "|", then the call indented two
// blanks per depth; a comm may hold "|", a call never) and returns the
// function entries, "f() {" and "f();", in order. Returns ("}") are
// skipped, as are comment, CPU-switch and task-switch lines; an error
// names the first other line.
func parseGraph(r io.Reader) ([]graphCall, error) {
	var calls []graphCall
	err := eachLine(r, func(n int, line string) error {
		c, isCall, err := graphLine(line)
		if err != nil {
			return fmt.Errorf("function_graph line %d: %w", n, err)
		}
		if isCall {
			calls = append(calls, c)
		}
		return nil
	})
	return calls, err
}

// graphLine parses one line of function_graph output: a call or a leaf
// (isCall), a return or a line printed between calls (neither), or an
// error naming it. A line is a call by its last column, whatever the comm
// before it holds ("=>" too).
func graphLine(line string) (c graphCall, isCall bool, err error) {
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") {
		return graphCall{}, false, nil // a comment, the frame of a task or CPU switch
	}
	bar := strings.LastIndexByte(line, '|')
	call := line[bar+1:]
	text := strings.TrimLeft(call, " ")
	indent := len(call) - len(text)
	if bar >= 0 && strings.HasPrefix(text, "}") {
		return graphCall{}, false, nil
	}
	name, ok := strings.CutSuffix(text, "() {")
	if !ok {
		name, ok = strings.CutSuffix(text, "();")
	}
	switch {
	case bar >= 0 && ok && indent >= 2 && indent%2 == 0:
		name, module, err := nameAndModule(name)
		return graphCall{name: name, module: module, depth: indent/2 - 1}, err == nil, err
	case strings.Contains(line, "=>"):
		return graphCall{}, false, nil // a task or CPU switch: " 1)  sh-285   =>  proto-310"
	case bar < 0:
		return graphCall{}, false, fmt.Errorf("%q has no \"|\" column", line)
	}
	return graphCall{}, false, fmt.Errorf("%q is not a call, a leaf or a return", line)
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
