package workload

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// busyEnv makes this program a busy reader (RunHelperIfRequested).
const busyEnv = "TRACEBENCH_BUSY_READER"

// busyReady is the line a busy reader prints once its first read
// returned.
const busyReady = "reading"

// Busy is load for the CPUs: processes of their own (TGIDs no tracer
// filters in) that each read 1 byte of /dev/zero in a loop until Stop.
type Busy struct {
	readers []*exec.Cmd
}

// StartBusy starts n busy readers (this program re-executed; its main or
// TestMain calls RunHelperIfRequested) and returns once each has read,
// or an error after StartTimeout. A reader dies with its parent.
func StartBusy(n int) (*Busy, error) {
	if n < 1 {
		return nil, fmt.Errorf("busy readers: %d, want 1 or more", n)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b := &Busy{}
	ready := make(chan error, n)
	for range n {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), busyEnv+"=1", "GOMAXPROCS=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("start a busy reader: %w", err), b.Stop())
		}
		b.readers = append(b.readers, cmd)
		go func() {
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err == nil && line != busyReady+"\n" {
				err = fmt.Errorf("a busy reader said %q", line)
			}
			ready <- err
		}()
	}
	timeout := time.After(StartTimeout)
	for range n {
		select {
		case err = <-ready:
		case <-timeout:
			err = fmt.Errorf("busy readers not reading after %v", StartTimeout)
		}
		if err != nil {
			return nil, errors.Join(err, b.Stop())
		}
	}
	return b, nil
}

// PIDs returns the readers' process IDs.
func (b *Busy) PIDs() []int {
	pids := make([]int, len(b.readers))
	for i, r := range b.readers {
		pids[i] = r.Process.Pid
	}
	return pids
}

// Stop kills the readers and waits for them; an error says which did not
// die of the kill.
func (b *Busy) Stop() error {
	var errs []error
	for _, r := range b.readers {
		r.Process.Kill()
	}
	for _, r := range b.readers {
		err := r.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			errs = append(errs, fmt.Errorf("busy reader %d: %v, not killed", r.Process.Pid, err))
		}
	}
	b.readers = nil
	return errors.Join(errs...)
}

// runBusy is a busy reader's main: it never returns but on an error.
func runBusy(string) error {
	fd, err := unix.Open("/dev/zero", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	buf := make([]byte, 1)
	if _, err := unix.Read(fd, buf); err != nil {
		return err
	}
	if _, err := os.Stdout.WriteString(busyReady + "\n"); err != nil {
		return err
	}
	for {
		if _, err := unix.Read(fd, buf); err != nil {
			return fmt.Errorf("read /dev/zero: %w", err)
		}
	}
}
