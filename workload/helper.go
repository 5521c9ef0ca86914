package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

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
	if err := interruptingSignal(); err != nil {
		return err
	}
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

// interruptSignal is what the caller sends a thread blocked in an
// InterruptedRead.
const interruptSignal = unix.SIGUSR2

// saRestart is SA_RESTART of <asm/signal.h>.
const saRestart = 0x10000000

// kernelSigaction is struct sigaction of rt_sigaction(2) on x86-64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// interruptingSignal makes interruptSignal interrupt blocking reads: Go
// installs every handler with SA_RESTART, under which the kernel restarts
// an interrupted read(2) instead of returning EINTR. It keeps Go's handler
// and clears only that flag.
func interruptingSignal() error {
	signal.Notify(make(chan os.Signal, 64), interruptSignal) // makes Go install its handler
	var act kernelSigaction
	if err := rtSigaction(interruptSignal, nil, &act); err != nil {
		return err
	}
	act.flags &^= saRestart
	return rtSigaction(interruptSignal, &act, nil)
}

func rtSigaction(sig unix.Signal, act, old *kernelSigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), unsafe.Sizeof(act.mask), 0, 0)
	if errno != 0 {
		return fmt.Errorf("rt_sigaction(%v): %w", sig, errno)
	}
	return nil
}

// runStep issues one step's reads: on this (locked) thread, or on
// step.Threads new locked threads that start reading together.
func runStep(index int, step Step, dataFile string) ([]Read, error) {
	if step.threads() == 1 {
		return readAll(index, step, dataFile, func() {})
	}
	reads := make([][]Read, step.threads())
	errs := make([]error, step.threads())
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(step.threads())
	done.Add(step.threads())
	for i := range reads {
		go func() {
			defer done.Done()
			// Never unlocked: the thread exits with the goroutine, so
			// each worker is a thread of its own.
			runtime.LockOSThread()
			reads[i], errs[i] = readAll(index, step, dataFile, func() { ready.Done(); <-start })
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return slices.Concat(reads...), errors.Join(errs...)
}

// readAll opens what step reads, calls ready, then issues its reads.
func readAll(index int, step Step, dataFile string, ready func()) ([]Read, error) {
	fd, closeFD, err := openFor(step.Op, dataFile)
	ready()
	if err != nil {
		return nil, err
	}
	defer closeFD()
	buf := make([]byte, step.Size)
	reads := make([]Read, step.Count)
	for i := range reads {
		reads[i] = timedRead(fd, buf)
		reads[i].Step, reads[i].Op = index, step.Op
	}
	return reads, nil
}

// openFor returns the file descriptor op reads and how to close it.
func openFor(op Op, dataFile string) (int, func(), error) {
	path, flags := dataFile, unix.O_RDONLY|unix.O_CLOEXEC
	switch op {
	case FileRead:
	case DirRead:
		path, flags = filepath.Dir(dataFile), flags|unix.O_DIRECTORY
	case EmptyPipeRead:
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			return 0, nil, fmt.Errorf("pipe: %w", err)
		}
		return fds[0], func() { unix.Close(fds[0]); unix.Close(fds[1]) }, nil
	default: // the pipe the caller answers, shared by every step
		return pipeFD, func() {}, nil
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, func() { unix.Close(fd) }, nil
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
