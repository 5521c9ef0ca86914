package tracefs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KprobeGroupPrefix names the tracefs event groups cilium/ebpf creates for
// tracebench's kprobes when they cannot use the perf kprobe PMU
// (maxactive), so that leftovers can be recognised.
const KprobeGroupPrefix = "tracebench"

// KprobeEvents returns the kprobe_events lines of tracebench's groups,
// e.g. "r10:tracebench_1a2b/vfs_read vfs_read", with the file they are in.
func KprobeEvents() ([]string, error) {
	var found []string
	for _, root := range Roots {
		path := filepath.Join(root, "kprobe_events")
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // not mounted there: nothing can be left in it
		}
		if err != nil {
			return nil, err
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			if _, event, ok := strings.Cut(scanner.Text(), ":"); ok && strings.HasPrefix(event, KprobeGroupPrefix+"_") {
				found = append(found, scanner.Text()+" in "+path)
			}
		}
		err = scanner.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return found, nil // the other root is usually the same mount
	}
	return found, nil
}
