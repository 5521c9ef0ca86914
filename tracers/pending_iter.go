package tracers

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// pendingIterName is the SEC("iter/task") program with which an object
// whose per-thread state lives in task local storage reports it: it
// writes the 4-byte thread ID of every task with a call pending.
const pendingIterName = "count_pending"

// countPendingTasks runs the task iterator prog once over every task
// (BPF task iterators, Linux 5.8) and counts the thread IDs it wrote.
func countPendingTasks(prog *ebpf.Program) (uint64, error) {
	it, err := link.AttachIter(link.IterOptions{Program: prog})
	if err != nil {
		return 0, fmt.Errorf("attach task iterator: %w", err)
	}
	defer it.Close()
	r, err := it.Open()
	if err != nil {
		return 0, fmt.Errorf("open task iterator: %w", err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return 0, fmt.Errorf("read task iterator: %w", err)
	}
	return uint64(n) / 4, nil
}
