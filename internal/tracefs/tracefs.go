// Package tracefs is tracebench's plumbing to the kernel's tracefs: where it
// is mounted, private instances, trace_pipe reading, the global
// tracing_thresh, kprobe_events, and reclaiming what a killed process left.
// It never mounts tracefs itself.
package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Roots are where tracefs is usually mounted; the first holding
// available_tracers is used.
var Roots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// Root returns where tracefs is mounted: an error wrapping os.ErrNotExist
// if nowhere, another one (e.g. permission denied) if it could not tell.
func Root() (string, error) {
	for _, root := range Roots {
		_, err := os.Stat(filepath.Join(root, "available_tracers"))
		if err == nil {
			return root, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("tracefs: %w", err)
		}
	}
	return "", fmt.Errorf("tracefs is not mounted at %s: %w", strings.Join(Roots, " or "), os.ErrNotExist)
}

// Write writes value to a tracefs file in a single write(2): tracefs takes
// each write as one command.
func Write(path, value string) error {
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

// Read returns a tracefs file's content without surrounding white space.
func Read(path string) (string, error) {
	raw, err := os.ReadFile(path)
	return strings.TrimSpace(string(raw)), err
}

// LockThresh takes an exclusive flock(2) on tracing_thresh until unlock, so
// that two tracebench processes cannot both find it unset and both set it
// (advisory: other tracefs users ignore it).
func LockThresh(root string) (unlock func(), err error) {
	f, err := os.Open(filepath.Join(root, "tracing_thresh"))
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock tracing_thresh: %w", err)
	}
	return func() { f.Close() }, nil // closing drops the lock
}
