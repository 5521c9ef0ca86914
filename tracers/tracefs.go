package tracers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tracefsRoots are where tracefs is usually mounted; the first holding
// available_tracers is used. tracebench never mounts it itself.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// tracefsRoot returns where tracefs is mounted: an error wrapping
// os.ErrNotExist if nowhere, another one (e.g. permission denied for
// non-root) if it could not tell.
func tracefsRoot() (string, error) {
	for _, root := range tracefsRoots {
		_, err := os.Stat(filepath.Join(root, "available_tracers"))
		if err == nil {
			return root, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("tracefs: %w", err)
		}
	}
	return "", fmt.Errorf("tracefs is not mounted at %s: %w", strings.Join(tracefsRoots, " or "), os.ErrNotExist)
}

// instancePrefix starts the name of every tracefs instance tracebench
// creates: tracebench-<owner pid>-<n>, plus -thresh<µs> when the owner set
// the global tracing_thresh to that value.
const instancePrefix = "tracebench-"

var instanceSeq atomic.Uint64

// instance is a private tracefs ring buffer with its own tracer, filters
// and options (Documentation/trace/ftrace.rst, "Instances"); removing its
// directory removes all of that.
type instance struct {
	root string // tracefs mount point
	dir  string // root/instances/<name>
}

// newInstance creates an instance named for this process, with suffix
// ("-thresh<µs>" when its owner is about to set tracing_thresh to that,
// for ReclaimStale; "-forks" for a forkWatch; or "").
func newInstance(root, suffix string) (instance, error) {
	name := fmt.Sprintf("%s%d-%d%s", instancePrefix, os.Getpid(), instanceSeq.Add(1), suffix)
	in := instance{root: root, dir: filepath.Join(root, "instances", name)}
	if err := os.Mkdir(in.dir, 0o700); err != nil {
		return instance{}, fmt.Errorf("create tracefs instance: %w", err)
	}
	return in, nil
}

// write sets one of the instance's files, e.g. "options/funcgraph-proc".
func (in instance) write(file, value string) error {
	return writeTracefs(filepath.Join(in.dir, file), value)
}

// writeAll writes settings in order.
func (in instance) writeAll(settings []setting) error {
	for _, s := range settings {
		if err := in.write(s.file, s.value); err != nil {
			return err
		}
	}
	return nil
}

// writeTracefs writes value to a tracefs file; tracefs takes a write as
// one command, so it must be a single write(2).
func writeTracefs(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

func readTracefs(path string) (string, error) {
	raw, err := os.ReadFile(path)
	return strings.TrimSpace(string(raw)), err
}

// remove deletes the instance with its tracer, filters and buffer.
func (in instance) remove() error {
	if err := syscall.Rmdir(in.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove tracefs instance %s: %w", in.dir, err)
	}
	return nil
}

// ownInstances lists the tracefs instances tracebench created (of any
// process), by directory.
func ownInstances() ([]instance, error) {
	root, err := tracefsRoot()
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
	var out []instance
	for _, e := range entries {
		if instanceName.MatchString(e.Name()) {
			out = append(out, instance{root: root, dir: filepath.Join(root, "instances", e.Name())})
		}
	}
	return out, nil
}

// instanceName matches the names newInstance gives: anything else under
// instances/ is somebody else's, even if it starts with instancePrefix.
var instanceName = regexp.MustCompile(`^` + instancePrefix + `[1-9][0-9]*-[0-9]+(-thresh[0-9]+|-forks)?$`)

// owner and thresholdUS decode the instance's name (see instancePrefix).
func (in instance) owner() int {
	fields := strings.Split(strings.TrimPrefix(filepath.Base(in.dir), instancePrefix), "-")
	pid, _ := strconv.Atoi(fields[0])
	return pid
}

func (in instance) thresholdUS() string {
	_, thresh, _ := strings.Cut(filepath.Base(in.dir), "-thresh")
	return thresh
}

// ReclaimStale removes the tracefs instances of tracebench processes that
// no longer run (a SIGKILLed ftrace-graph tracer cannot remove its own)
// and resets tracing_thresh to 0 where such an instance had set it and it
// still holds that value. It returns what it removed. Needs root.
func ReclaimStale() ([]string, error) {
	instances, err := ownInstances()
	if err != nil {
		return nil, err
	}
	var reclaimed []string
	for _, in := range instances {
		if processAlive(in.owner()) {
			continue
		}
		if err := in.remove(); errors.Is(err, syscall.EBUSY) {
			continue // someone holds one of its files open: theirs to close
		} else if err != nil {
			return reclaimed, err
		}
		reclaimed = append(reclaimed, "tracefs instance "+in.dir)
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
func (in instance) restoreThreshold() (bool, error) {
	want := in.thresholdUS()
	if want == "" {
		return false, nil
	}
	path := filepath.Join(in.root, "tracing_thresh")
	if now, err := readTracefs(path); err != nil || now != want {
		return false, err
	}
	return true, writeTracefs(path, "0")
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return pid > 0 && (err == nil || errors.Is(err, syscall.EPERM))
}

// instanceLeftovers describes the instances left by any tracebench process.
func instanceLeftovers() ([]string, error) {
	instances, err := ownInstances()
	var found []string
	for _, in := range instances {
		found = append(found, "tracefs instance "+in.dir)
	}
	return found, err
}

// pipeLines reads an instance's trace_pipe, opened non-blocking (it is
// pollable, so the Go runtime's poller serves read deadlines and Close
// interrupts a read), and hands out whole lines.
type pipeLines struct {
	file       *os.File
	raw        syscall.RawConn
	chunk, buf []byte // read buffer; bytes read but not yet handed out
}

func (in instance) openPipe() (*pipeLines, error) {
	f, err := os.OpenFile(filepath.Join(in.dir, "trace_pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pipeLines{file: f, raw: raw, chunk: make([]byte, 64<<10)}, nil
}

// next returns the next whole line read so far.
func (p *pipeLines) next() (string, bool) {
	line, rest, ok := bytes.Cut(p.buf, []byte{'\n'})
	if !ok {
		return "", false
	}
	p.buf = rest
	return string(line), true
}

// read appends what trace_pipe has, waiting until deadline; a deadline
// already passed still takes what is there without waiting. It returns
// os.ErrDeadlineExceeded when nothing came, and also at end of file: once
// tracing is off, an emptied trace_pipe reads as end of file and nothing
// can come any more.
func (p *pipeLines) read(deadline time.Time) error {
	var n int
	var readErr error
	read := func(fd uintptr) bool {
		n, readErr = unix.Read(int(fd), p.chunk)
		return readErr != unix.EAGAIN
	}
	var err error
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		err = p.raw.Control(func(fd uintptr) { read(fd) })
	} else if err = p.file.SetReadDeadline(deadline); err == nil {
		err = p.raw.Read(read)
	}
	switch {
	case err != nil:
		return err
	case readErr == unix.EAGAIN || readErr == nil && n == 0:
		return os.ErrDeadlineExceeded
	case readErr != nil:
		return fmt.Errorf("read trace_pipe: %w", readErr)
	}
	p.buf = append(p.buf, p.chunk[:n]...)
	return nil
}

func (p *pipeLines) close() error { return p.file.Close() }
