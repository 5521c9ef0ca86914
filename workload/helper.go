package workload

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
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
	// Socket is the address to connect to inside the namespace at
	// netnsFD, when the plan reads a socket.
	Socket string
	// Linger: after reporting the result, wait for a signal to exit.
	Linger bool
}

// helperReady is the helper's first line on stdout.
type helperReady struct {
	TID      int
	SocketFD int // the connected socket, or -1
}

// helperFiles is what the steps read besides files of their own.
type helperFiles struct {
	dataFile string
	socketFD int
}

// RunHelperIfRequested turns this process into a workload helper or a
// busy reader and exits, if Start or StartBusy launched it; otherwise it
// returns at once. Call it first thing in TestMain or main of any program
// that uses them.
func RunHelperIfRequested() {
	RunRoleIfRequested(helperEnv, "workload helper", runHelper)
	RunRoleIfRequested(busyEnv, "busy reader", runBusy)
}

// RunRoleIfRequested turns this process into another one and exits, if
// the environment variable env is set: it runs role with env's value, then
// exits 0, or 1 after printing "name: error" on stderr. Otherwise it
// returns at once. A test binary re-executed with env set plays a helper
// process this way (Start's workload helper is one).
func RunRoleIfRequested(env, name string, role func(value string) error) {
	value, ok := os.LookupEnv(env)
	if !ok {
		return
	}
	if err := role(value); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
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
	files := helperFiles{dataFile: spec.DataFile, socketFD: -1}
	if spec.Socket != "" {
		var err error
		if files.socketFD, err = connectInNetNS(spec.Socket); err != nil {
			return err
		}
	}
	steps, err := mapStepWord(stepsFD)
	if err != nil {
		return err
	}
	early := earlyCrews(spec.Plan, files)
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(helperReady{TID: unix.Gettid(), SocketFD: files.socketFD}); err != nil {
		return err
	}
	<-start

	result := Result{TGID: os.Getpid()}
	for i, step := range spec.Plan {
		if step.Blocks() {
			steps.started(i)
		}
		reads, err := runStep(i, step, files, early[i])
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i, step.Op, err)
		}
		result.Reads = append(result.Reads, reads...)
	}
	if err := out.Encode(result); err != nil || !spec.Linger {
		return err
	}
	<-start // Close's signal to exit
	return nil
}

// interruptSignal is what the caller sends a thread blocked in an
// InterruptedRead.
const interruptSignal = unix.SIGUSR2

// saRestart is SA_RESTART of <asm/signal.h>.
const saRestart = 0x10000000

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
// threads of the step's own (early holds those created before ready).
func runStep(index int, step Step, files helperFiles, early *crew) ([]Read, error) {
	switch {
	case early != nil:
		return early.run()
	case step.Spawn == SpawnFresh:
		return runFresh(index, step, files)
	case step.ownThreads():
		return newCrew(index, step, files).run()
	}
	return readAll(index, step, files, func() {}, nil)
}

// readAll opens what step reads, calls ready, then issues its reads,
// each after the previous round's where rounds is not nil.
func readAll(index int, step Step, files helperFiles, ready func(), rounds *barrier) ([]Read, error) {
	defer rounds.leave()
	src, err := openFor(step, files)
	ready()
	if err != nil {
		return nil, err
	}
	defer src.close()
	buf := make([]byte, step.Size)
	reads := make([]Read, step.Count)
	for i := range reads {
		if i > 0 {
			rounds.wait()
			spin(step.Gap)
		}
		if reads[i], err = timedRead(src.read, buf); err != nil {
			return nil, err
		}
		reads[i].Step, reads[i].Op = index, step.Op
	}
	return reads, nil
}

// source is what one thread of a step reads from.
type source struct {
	read  func(buf []byte) (int, error) // issues one read
	close func()
}

// fdSource reads fd with read(2), without the retries of os.File.
func fdSource(fd int, close func()) source {
	return source{read: func(buf []byte) (int, error) { return unix.Read(fd, buf) }, close: close}
}

// openFor returns what step reads.
func openFor(step Step, files helperFiles) (source, error) {
	op := step.Op
	switch op {
	case DelayedPipeRead, InterruptedRead, KilledRead: // the pipe the caller answers, shared by every step
		return fdSource(pipeFD, func() {}), nil
	case DelayedSocketRead: // connected once, shared by every step
		return fdSource(files.socketFD, func() {}), nil
	case EmptyPipeRead, PipeRead:
		return ownPipe(op == PipeRead, step)
	}
	path, flags := files.dataFile, unix.O_RDONLY|unix.O_CLOEXEC
	if op == DirRead {
		path, flags = filepath.Dir(files.dataFile), flags|unix.O_DIRECTORY
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		return source{}, fmt.Errorf("open %s: %w", path, err)
	}
	closeFD := func() { unix.Close(fd) }
	if op != IoUringRead {
		read := fileReaders[op]
		return source{read: func(buf []byte) (int, error) { return read(fd, buf) }, close: closeFD}, nil
	}
	ring, err := newIoUring()
	if err != nil {
		closeFD()
		return source{}, err
	}
	return source{read: func(buf []byte) (int, error) { return ring.read(fd, buf) },
		close: func() { ring.close(); closeFD() }}, nil
}

// ownPipe returns a pipe of the helper's own: filled with what step reads
// (a PipeRead), or empty and non-blocking (an EmptyPipeRead, EAGAIN).
func ownPipe(filled bool, step Step) (source, error) {
	var fds [2]int
	flags := unix.O_CLOEXEC
	if !filled {
		flags |= unix.O_NONBLOCK
	}
	if err := unix.Pipe2(fds[:], flags); err != nil {
		return source{}, fmt.Errorf("pipe: %w", err)
	}
	src := fdSource(fds[0], func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if filled {
		if _, err := unix.Write(fds[1], make([]byte, step.Count*step.Size)); err != nil {
			src.close()
			return source{}, fmt.Errorf("fill pipe: %w", err)
		}
	}
	return src, nil
}

// fileReaders read a regular file (or a directory, for DirRead) into buf
// through each op's system call.
var fileReaders = map[Op]func(fd int, buf []byte) (int, error){
	FileRead:  unix.Read,
	DirRead:   unix.Read,
	PreadRead: func(fd int, buf []byte) (int, error) { return unix.Pread(fd, buf, 0) },
	ReadvRead: func(fd int, buf []byte) (int, error) {
		return unix.Readv(fd, [][]byte{buf[:len(buf)/2], buf[len(buf)/2:]})
	},
	SendfileRead: sendfileToNull,
	MmapRead:     mmapCopy,
}

// sendfileToNull copies len(buf) bytes of fd to /dev/null in the kernel;
// buf is not used.
func sendfileToNull(fd int, buf []byte) (int, error) {
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(null)
	return unix.Sendfile(null, fd, nil, len(buf))
}

// mmapCopy maps the first len(buf) bytes of fd afresh and copies them: the
// copy's page faults are the only way the file is read.
func mmapCopy(fd int, buf []byte) (int, error) {
	m, err := unix.Mmap(fd, 0, len(buf), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	n := copy(buf, m)
	return n, unix.Munmap(m)
}

// timedRead issues one read and measures it. The read's own failure (a
// bare errno) is its result; any other error is the helper's.
func timedRead(read func([]byte) (int, error), buf []byte) (Read, error) {
	start := time.Now()
	n, err := read(buf)
	elapsed := time.Since(start)
	result := int64(n)
	if errno, ok := err.(unix.Errno); ok {
		result = -int64(errno)
	} else if err != nil {
		return Read{}, err
	}
	return Read{TID: unix.Gettid(), Requested: len(buf), Result: result, Duration: elapsed}, nil
}
