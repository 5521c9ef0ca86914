package workload

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Options change how StartWith runs the helper.
type Options struct {
	// PIDNamespace starts the helper as PID 1 of a new PID namespace
	// (CLONE_NEWPID, needs CAP_SYS_ADMIN); TGID still returns its ID in
	// the caller's namespace, Result's IDs are the helper's own.
	PIDNamespace bool
	// Linger keeps the helper alive after Run returned, until Close: a
	// tracer that exits with the traced process (bpftrace -p) can still
	// be inspected then.
	Linger bool
	// DataDir is where the data file goes (default os.TempDir()), e.g. on
	// the file system a tracer watches.
	DataDir string
}

// lingerExitTimeout bounds how long Close waits for a lingering helper to
// exit once told to.
const lingerExitTimeout = 30 * time.Second

// endHelper ends a helper that still runs: a lingering one that has
// reported its result is told to exit (SIGUSR1) and waited for; any other,
// or one that does not exit in time, is killed.
func (p *Process) endHelper() error {
	if !p.reported || p.cmd.Process.Signal(unix.SIGUSR1) != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		return nil
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(lingerExitTimeout):
		p.cmd.Process.Kill()
		<-exited
		return fmt.Errorf("lingering workload helper %d did not exit within %v of SIGUSR1; killed", p.TGID(),
			lingerExitTimeout)
	}
}
