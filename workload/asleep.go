package workload

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"tracebench/internal/poll"
)

// settle is how long every thread must stay asleep before Asleep trusts
// their stacks: an idle Go runtime (a lingering helper) stops waking
// within milliseconds.
const settle = 200 * time.Millisecond

// Sleep is where the helper's threads sleep in the kernel: a call on a
// sleeping thread's kernel stack is in flight until the thread runs.
type Sleep struct {
	// switches holds each thread's context switches (voluntary plus
	// involuntary, /proc/PID/task/TID/status), which any run changes.
	switches map[int]uint64
	// stacks holds the functions on each thread's kernel stack
	// (/proc/PID/task/TID/stack: root and CONFIG_STACKTRACE), innermost first.
	stacks map[int][]string
}

// ErrNoKernelStack is wrapped by Asleep's error where the kernel showed no
// stack of a sleeping thread until the deadline (/proc/PID/task/TID/stack
// empty: no CONFIG_STACKTRACE, or an unwinder that does not walk other
// tasks). An empty stack alone is looked at again: a thread already in
// state S but still on its CPU, not yet switched out, shows none (seen in
// the 7.2 guest).
var ErrNoKernelStack = errors.New("the kernel shows no stack of a sleeping thread")

// Asleep waits until every thread of the helper sleeps and none ran for
// 200 ms, and returns where they sleep. It fails if deadline passes first,
// or if the kernel does not show a thread's stack (ErrNoKernelStack).
func (p *Process) Asleep(deadline time.Time) (Sleep, error) {
	var last Sleep
	var noStack error // the last look's, if a sleeping thread showed no stack
	settled := func() (bool, error) {
		now, err := p.sleep()
		if noStack = nil; errors.Is(err, ErrNoKernelStack) {
			noStack, err = err, nil
		}
		if err != nil || now.switches == nil {
			return false, err
		}
		if !now.Same(last) {
			last = now
			return false, nil
		}
		return true, nil
	}
	err := poll.Until(deadline, settle, "every helper thread asleep for "+settle.String(), settled)
	if err != nil && noStack != nil {
		err = fmt.Errorf("%w: %w", err, noStack)
	}
	return last, err
}

// StillAsleep reports whether no thread of the helper ran since s and
// none came or went.
func (p *Process) StillAsleep(s Sleep) (bool, error) {
	now, err := p.sleep()
	return now.Same(s), err
}

// Same reports whether s and o saw the same threads with the same
// context switches.
func (s Sleep) Same(o Sleep) bool { return s.switches != nil && maps.Equal(s.switches, o.switches) }

// In returns how many of the threads sleep with function on their stack;
// a thread counts once, however often function recurs on its stack.
func (s Sleep) In(function string) uint64 {
	var n uint64
	for _, stack := range s.stacks {
		if slices.Contains(stack, function) {
			n++
		}
	}
	return n
}

// sleep reads every thread once; its switches are nil if one ran (or
// came or went) while it was read.
func (p *Process) sleep() (Sleep, error) {
	dir := fmt.Sprintf("/proc/%d/task/", p.TGID())
	tids, err := numberedEntries(dir)
	if err != nil {
		return Sleep{}, err
	}
	s := Sleep{switches: map[int]uint64{}, stacks: map[int][]string{}}
	for _, tid := range tids {
		task := fmt.Sprintf("%s%d/", dir, tid)
		switches, stack, asleep, err := readAsleep(task)
		if taskGone(err) || (err == nil && !asleep) {
			return Sleep{}, nil // exited or running: look again
		}
		if err != nil {
			return Sleep{}, err
		}
		s.switches[tid], s.stacks[tid] = switches, stack
	}
	return s, nil
}

// readAsleep reads the thread at task (/proc/PID/task/TID/): asleep says
// it did not run while its stack was read.
func readAsleep(task string) (switches uint64, stack []string, asleep bool, err error) {
	before, running, err := readSwitches(task + "status")
	if err != nil || running {
		return 0, nil, false, err
	}
	raw, err := os.ReadFile(task + "stack")
	if err != nil {
		return 0, nil, false, fmt.Errorf("a sleeping thread's kernel stack (CONFIG_STACKTRACE, root): %w", err)
	}
	after, running, err := readSwitches(task + "status")
	if asleep = err == nil && !running && after == before; asleep && len(raw) == 0 {
		return 0, nil, false, fmt.Errorf("%sstack: %w", task, ErrNoKernelStack)
	}
	return before, StackFunctions(raw), asleep, err
}

// readSwitches returns a status file's context switches and whether its
// thread is running (state R).
func readSwitches(status string) (switches uint64, running bool, err error) {
	raw, err := os.ReadFile(status)
	if err != nil {
		return 0, false, err
	}
	for line := range bytes.Lines(raw) {
		key, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch string(key) {
		case "State":
			running = bytes.HasPrefix(value, []byte("R"))
		case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches":
			n, err := strconv.ParseUint(string(value), 10, 64)
			if err != nil {
				return 0, false, fmt.Errorf("%s: %s: %w", status, key, err)
			}
			switches += n
		}
	}
	return switches, running, nil
}

// StackFunctions returns the functions of a /proc/PID/stack text, one
// frame a line ("[<0>] futex_wait+0x10f/0x1e0", with " [module]" for a
// module's), innermost first.
func StackFunctions(raw []byte) []string {
	var functions []string
	for line := range bytes.Lines(raw) {
		_, frame, ok := bytes.Cut(line, []byte("] "))
		if !ok {
			continue
		}
		if name, _, ok := bytes.Cut(frame, []byte("+")); ok {
			functions = append(functions, string(name))
		}
	}
	return functions
}
