package workload

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Threads returns the IDs of the helper's threads as the helper numbers
// them (Read.TID): the last NSpid field of each /proc/PID/task/TID/status,
// the ID in the helper's own PID namespace.
func (p *Process) Threads() ([]int, error) {
	dir := fmt.Sprintf("/proc/%d/task/", p.TGID())
	tasks, err := numberedEntries(dir)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, task := range tasks {
		id, err := innermostID(fmt.Sprintf("%s%d/status", dir, task))
		if taskGone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// innermostID reads the last NSpid field of a status file.
func innermostID(status string) (int, error) {
	raw, err := os.ReadFile(status)
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(raw) {
		if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
			fields := bytes.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.Atoi(string(fields[len(fields)-1]))
		}
	}
	return 0, fmt.Errorf("%s: no NSpid line", status)
}
