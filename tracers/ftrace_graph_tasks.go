package tracers

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// taskNames finds the TGID and whole comm of a pid, which function_graph
// does not print: comm from saved_cmdlines, TGID from the threads at start,
// a forkWatch, else /proc/<pid>/status (unknown once the task is gone).
type taskNames struct {
	root string
	tgid map[uint32]uint32
	comm map[uint32]string
}

func (n *taskNames) fill(ev *Event) {
	if tgid, ok := n.tgidOf(ev.PID); ok {
		ev.TGID = tgid
	} else {
		ev.Unknown |= FieldTGID
	}
	if _, ok := n.comm[ev.PID]; !ok {
		n.reloadComms()
	}
	if comm, ok := n.comm[ev.PID]; ok {
		ev.Comm = comm
	} else {
		n.comm[ev.PID] = ev.Comm // not read again for every event
	}
}

// stale reports whether what n holds for ev's pid may be another task's:
// nothing yet, or a comm that does not start with the one function_graph
// printed (cut to 7 bytes), as when the pid was reused (or the task ran
// exec, which a lookup then confirms).
func (n *taskNames) stale(ev Event) bool {
	if _, ok := n.tgid[ev.PID]; !ok {
		return true
	}
	comm, ok := n.comm[ev.PID]
	// "<...>": the kernel had no comm for the pid when printing.
	return ok && ev.Comm != "<...>" && !strings.HasPrefix(comm, ev.Comm)
}

// forget drops what n holds for pid, to look it up again.
func (n *taskNames) forget(pid uint32) {
	delete(n.tgid, pid)
	delete(n.comm, pid)
}

// learn records a new task from its task_newtask event: a thread joins
// its parent's process, any other task is a process of its own.
func (n *taskNames) learn(parent, child uint32, thread bool) {
	if !thread {
		n.remember(child, child)
		return
	}
	if tgid, ok := n.tgidOf(parent); ok {
		n.remember(child, tgid)
	}
}

// know records that the threads tids belong to process tgid.
func (n *taskNames) know(tgid uint32, tids []string) {
	for _, tid := range tids {
		if pid, err := strconv.ParseUint(tid, 10, 32); err == nil {
			n.remember(uint32(pid), tgid)
		}
	}
}

func (n *taskNames) remember(pid, tgid uint32) {
	if n.tgid == nil {
		n.tgid = map[uint32]uint32{}
	}
	n.tgid[pid] = tgid
}

func (n *taskNames) tgidOf(pid uint32) (uint32, bool) {
	if tgid, ok := n.tgid[pid]; ok {
		return tgid, true
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(raw)) {
		if value, ok := strings.CutPrefix(line, "Tgid:"); ok {
			tgid, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
			if err != nil {
				return 0, false
			}
			n.remember(pid, uint32(tgid))
			return uint32(tgid), true
		}
	}
	return 0, false
}

// reloadComms reads saved_cmdlines ("pid comm" lines); a file that cannot
// be read leaves the comm function_graph printed.
func (n *taskNames) reloadComms() {
	n.comm = map[uint32]string{}
	f, err := os.Open(filepath.Join(n.root, "saved_cmdlines"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pid, comm, ok := strings.Cut(sc.Text(), " ")
		if p, err := strconv.ParseUint(pid, 10, 32); ok && err == nil {
			n.comm[uint32(p)] = comm
		}
	}
}

// threadsOf lists the thread IDs of process tgid, none if it does not exist.
func threadsOf(tgid uint32) ([]string, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", tgid))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var tids []string
	for _, e := range entries {
		tids = append(tids, e.Name())
	}
	return tids, err
}
