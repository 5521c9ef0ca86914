package tracers

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracebench/internal/tracefs"
)

// forkWatch records, in a second instance, the task_newtask events of the
// filtered tasks and their descendants, so that the TGID of a task that
// function-fork followed is known even after it exited.
type forkWatch struct {
	in   tracefs.Instance
	pipe *tracefs.Pipe
}

// cloneThread is CLONE_THREAD of include/uapi/linux/sched.h: the new task
// joins its parent's thread group.
const cloneThread = 0x00010000

// startForkWatch watches the tasks tids and their descendants.
func startForkWatch(root string, tids []string) (*forkWatch, error) {
	in, err := tracefs.NewInstance(root, "-forks")
	if err != nil {
		return nil, err
	}
	w := &forkWatch{in: in}
	settings := slices.Concat(tracefs.TextOutput, []tracefs.Setting{
		{File: "options/event-fork", Value: "1"},
		{File: "set_event_pid", Value: strings.Join(tids, " ")},
		{File: "events/task/task_newtask/enable", Value: "1"},
	})
	if err := in.WriteAll(settings); err != nil {
		w.close()
		return nil, err
	}
	if w.pipe, err = in.OpenPipe(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// drain reads the task_newtask records there are, without waiting, and
// records each new task's TGID in n. A failed read leaves the TGIDs it
// would have told unknown, as events show.
func (w *forkWatch) drain(n *taskNames) {
	for w.pipe.Read(time.Now()) == nil {
		for line, ok := w.pipe.Next(); ok; line, ok = w.pipe.Next() {
			if parent, child, flags, ok := parseNewTask(line); ok {
				n.learn(parent, child, flags&cloneThread != 0)
			}
		}
	}
}

// newTask matches a task_newtask line: "  sh-283  [001] ..... 12.3456:
// task_newtask: pid=290 comm=sh clone_flags=1200000 oom_score_adj=0".
// Groups: parent pid, new pid, clone flags (hex).
var newTask = regexp.MustCompile(`-(\d+)\s+\[\d+\].*\btask_newtask: pid=(\d+) .*\bclone_flags=([0-9a-f]+)\b`)

func parseNewTask(line string) (parent, child uint32, flags uint64, ok bool) {
	m := newTask.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, 0, false
	}
	p, err1 := strconv.ParseUint(m[1], 10, 32)
	c, err2 := strconv.ParseUint(m[2], 10, 32)
	f, err3 := strconv.ParseUint(m[3], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, 0, false
	}
	return uint32(p), uint32(c), f, true
}

// close removes the instance; safe on a partly started watch.
func (w *forkWatch) close() error {
	if w.pipe != nil {
		w.pipe.Close()
	}
	return w.in.Remove()
}
