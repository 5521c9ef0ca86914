package workload

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv carries the helper's instructions; its presence makes
// RunHelperIfRequested take over the process.
const helperEnv = "TRACEBENCH_WORKLOAD_HELPER"

// pipeFD is where the helper finds the read end of its pipe (ExtraFiles[0]).
const pipeFD = 3

// helperSpec is what the parent tells the helper.
type helperSpec struct {
	Plan     Plan
	DataFile string
}

// helperReady is the helper's first line on stdout.
type helperReady struct {
	TID int
}

// RunHelperIfRequested turns this process into a workload helper and
// exits, if Start launched it; otherwise it returns at once. Call it first
// thing in TestMain or main of any program that uses Start.
func RunHelperIfRequested() {
	raw, ok := os.LookupEnv(helperEnv)
	if !ok {
		return
	}
	if err := runHelper(raw); err != nil {
		fmt.Fprintln(os.Stderr, "workload helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runHelper issues the planned reads from one locked thread. Between the
// ready line and the last read it makes no read(2) other than the planned
// ones: it waits for SIGUSR1 instead of reading a start command.
func runHelper(raw string) error {
	runtime.LockOSThread()
	var spec helperSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("decode %s: %w", helperEnv, err)
	}
	start := make(chan os.Signal, 1)
	signal.Notify(start, unix.SIGUSR1)
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(helperReady{TID: unix.Gettid()}); err != nil {
		return err
	}
	<-start

	result := Result{TGID: os.Getpid()}
	for i, step := range spec.Plan {
		reads, err := runStep(i, step, spec.DataFile)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i, step.Op, err)
		}
		result.Reads = append(result.Reads, reads...)
	}
	return out.Encode(result)
}

func runStep(index int, step Step, dataFile string) ([]Read, error) {
	fd := pipeFD
	if step.Op == FileRead {
		var err error
		if fd, err = unix.Open(dataFile, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return nil, fmt.Errorf("open %s: %w", dataFile, err)
		}
		defer unix.Close(fd)
	}
	buf := make([]byte, step.Size)
	reads := make([]Read, step.Count)
	for i := range reads {
		reads[i] = timedRead(fd, buf)
		reads[i].Step, reads[i].Op = index, step.Op
	}
	return reads, nil
}

// timedRead issues one read(2), without the retries of os.File.
func timedRead(fd int, buf []byte) Read {
	start := time.Now()
	n, err := unix.Read(fd, buf)
	elapsed := time.Since(start)
	result := int64(n)
	if errno, ok := err.(unix.Errno); ok {
		result = -int64(errno)
	}
	return Read{TID: unix.Gettid(), Requested: len(buf), Result: result, Duration: elapsed}
}
