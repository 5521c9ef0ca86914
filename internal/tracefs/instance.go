package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// InstancePrefix starts the name of every instance tracebench creates:
// tracebench-<owner pid>-<n>, plus a suffix (see NewInstance).
const InstancePrefix = "tracebench-"

var instanceSeq atomic.Uint64

// Instance is a private tracefs ring buffer with its own tracer, filters
// and options (Documentation/trace/ftrace.rst, "Instances").
type Instance struct {
	Root string // tracefs mount point
	Dir  string // Root/instances/<name>
}

// Setting is a tracefs file, relative to an instance, and its value.
type Setting struct{ File, Value string }

// ThreshSuffix is the instance name suffix of an owner about to set
// tracing_thresh to us µs, so that ReclaimStale can reset it; "" for 0.
func ThreshSuffix(us int64) string {
	if us == 0 {
		return ""
	}
	return fmt.Sprintf("-thresh%d", us)
}

// NewInstance creates an instance named for this process with suffix
// (ThreshSuffix, "-forks" or "").
func NewInstance(root, suffix string) (Instance, error) {
	name := fmt.Sprintf("%s%d-%d%s", InstancePrefix, os.Getpid(), instanceSeq.Add(1), suffix)
	in := Instance{Root: root, Dir: filepath.Join(root, "instances", name)}
	if err := os.Mkdir(in.Dir, 0o700); err != nil {
		return Instance{}, fmt.Errorf("create tracefs instance: %w", err)
	}
	return in, nil
}

// Path returns the path of one of the instance's files.
func (in Instance) Path(file string) string { return filepath.Join(in.Dir, file) }

// Write sets one of the instance's files, e.g. "options/funcgraph-proc".
func (in Instance) Write(file, value string) error { return Write(in.Path(file), value) }

// Read reads one of the instance's files.
func (in Instance) Read(file string) (string, error) { return Read(in.Path(file)) }

// WriteAll writes settings in order.
func (in Instance) WriteAll(settings []Setting) error {
	for _, s := range settings {
		if err := in.Write(s.File, s.Value); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the instance with its tracer, filters and buffer.
func (in Instance) Remove() error {
	if err := syscall.Rmdir(in.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove tracefs instance %s: %w", in.Dir, err)
	}
	return nil
}

// BufferCounts sums the counters of per_cpu/cpu*/stats ("entries: 3").
func (in Instance) BufferCounts() (map[string]uint64, error) {
	files, err := filepath.Glob(in.Path("per_cpu/cpu*/stats"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no per-CPU ring buffer stats in %s (%v)", in.Dir, err)
	}
	sums := map[string]uint64{}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(raw)) {
			name, value, _ := strings.Cut(line, ":")
			if n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64); err == nil {
				sums[name] += n
			}
		}
	}
	return sums, nil
}

// Instances lists the instances tracebench created, of any process.
func Instances() ([]Instance, error) {
	root, err := Root()
	if err != nil {
		return nil, nil // no tracefs: nothing can be left in it
	}
	entries, err := os.ReadDir(filepath.Join(root, "instances"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Instance
	for _, e := range entries {
		if instanceName.MatchString(e.Name()) {
			out = append(out, Instance{Root: root, Dir: filepath.Join(root, "instances", e.Name())})
		}
	}
	return out, nil
}

// instanceName matches the names NewInstance gives: anything else under
// instances/ is somebody else's, even if it starts with InstancePrefix.
var instanceName = regexp.MustCompile(`^` + InstancePrefix + `[1-9][0-9]*-[0-9]+(-thresh[0-9]+|-forks)?$`)

// owner and thresholdUS decode the instance's name.
func (in Instance) owner() int {
	fields := strings.Split(strings.TrimPrefix(filepath.Base(in.Dir), InstancePrefix), "-")
	pid, _ := strconv.Atoi(fields[0])
	return pid
}

func (in Instance) thresholdUS() string {
	_, thresh, _ := strings.Cut(filepath.Base(in.Dir), "-thresh")
	return thresh
}

// ReclaimStale removes the instances of tracebench processes that no
// longer run, and resets tracing_thresh where such an instance set it and
// it still holds that value. It returns what it removed. Needs root.
func ReclaimStale() ([]string, error) {
	instances, err := Instances()
	if err != nil {
		return nil, err
	}
	var reclaimed []string
	for _, in := range instances {
		if processAlive(in.owner()) {
			continue
		}
		if err := in.Remove(); errors.Is(err, syscall.EBUSY) {
			continue // someone holds one of its files open: theirs to close
		} else if err != nil {
			return reclaimed, err
		}
		reclaimed = append(reclaimed, "tracefs instance "+in.Dir)
		restored, err := in.restoreThreshold()
		if err != nil {
			return reclaimed, err
		}
		if restored {
			reclaimed = append(reclaimed, "tracing_thresh "+in.thresholdUS()+" µs")
		}
	}
	return reclaimed, nil
}

// restoreThreshold sets tracing_thresh back to 0 if the instance's name
// says its owner set it and nobody changed it since.
func (in Instance) restoreThreshold() (bool, error) {
	want := in.thresholdUS()
	if want == "" {
		return false, nil
	}
	path := filepath.Join(in.Root, "tracing_thresh")
	if now, err := Read(path); err != nil || now != want {
		return false, err
	}
	return true, Write(path, "0")
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return pid > 0 && (err == nil || errors.Is(err, syscall.EPERM))
}

// WriteEach writes items to one of the instance's files, opened once and
// truncated, one write(2) of a line each, as set_ftrace_filter takes a
// list: each line adds to it, and an item without its line break would
// run into the next one. It returns the items the kernel refused, each
// with its error; the error is for the file itself (it cannot be opened
// or closed).
func (in Instance) WriteEach(file string, items []string) (map[string]error, error) {
	f, err := os.OpenFile(in.Path(file), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return nil, err
	}
	refused := map[string]error{}
	for _, item := range items {
		if _, err := f.WriteString(item + "\n"); err != nil {
			refused[item] = err
		}
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Path(file), err)
	}
	return refused, nil
}
