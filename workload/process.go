package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"tracebench/internal/poll"
)

// NoProcess is a TGID no process has (pid_max is at most 2^22): a TGID
// filter that every call misses.
const NoProcess = math.MaxUint32

// StartTimeout bounds how long Start waits for the helper to be ready; Go
// start-up under software emulation takes seconds.
const StartTimeout = 60 * time.Second

// pollInterval is how often the writer looks at the helper's thread.
const pollInterval = time.Millisecond

// Process is a running helper, ready but not yet reading.
type Process struct {
	plan Plan
	opts Options
	// reported: a lingering helper sent its result and waits to be told
	// to exit.
	reported bool
	cmd      *exec.Cmd
	dir      string      // holds the data file
	pipeW    *os.File    // write end of the helper's pipe
	steps    stepWord    // the blocking step the helper is at
	sock     *socketPeer // the other end of DelayedSocketReads, or nil
	// sockFD is the helper's descriptor of its socket.
	sockFD int
	// mainTID is the thread that issues the reads of one-thread steps.
	mainTID int
	lines   chan string
	stderr  bytes.Buffer
	// blocked, if set, runs once a blocking step's readers are seen
	// blocked, before the step's delay (WhenBlocked).
	blocked func(step int, tids []int) error
}

// WhenBlocked makes Run call fn each time the readers of a blocking step
// are seen asleep in their read, before it waits the step's delay and
// ends their reads: fn sees calls in flight. An error of fn ends Run.
func (p *Process) WhenBlocked(fn func(step int, tids []int) error) { p.blocked = fn }

// Start launches a helper for plan and waits until it is ready: from then
// on the helper issues no read(2) until Run. The helper is this program
// re-executed, which must call RunHelperIfRequested first.
func Start(plan Plan) (*Process, error) { return StartWith(plan, Options{}) }

// StartWith is Start with options.
func StartWith(plan Plan, opts Options) (_ *Process, err error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	p := &Process{plan: plan, opts: opts, lines: make(chan string, 2)}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.dir, err = os.MkdirTemp(opts.DataDir, "tracebench-workload-"); err != nil {
		return nil, err
	}
	dataFile := filepath.Join(p.dir, "data")
	if err := os.WriteFile(dataFile, make([]byte, plan.fileBytes()), 0o600); err != nil {
		return nil, err
	}
	spec := helperSpec{Plan: plan, DataFile: dataFile, Linger: opts.Linger}
	if plan.readsSocket() {
		if p.sock, err = newSocketPeer(); err != nil {
			return nil, err
		}
		spec.Socket = p.sock.addr
	}
	if err := p.launch(spec); err != nil {
		return nil, err
	}
	var ready helperReady
	if err := p.receive(&ready, time.Now().Add(StartTimeout)); err != nil {
		return nil, fmt.Errorf("workload helper not ready: %w", err)
	}
	p.mainTID = ready.TID
	if p.sock != nil {
		p.sockFD = ready.SocketFD
		if err := p.sock.accept(int(p.TGID()), ready.SocketFD); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// NetNS returns the nsfs inode number (the N of net:[N]) of the helper's
// private network namespace, or 0 if the plan reads no socket. Once Close
// returned, NetNSHolders(NetNS()) must be empty.
func (p *Process) NetNS() uint64 {
	if p.sock == nil {
		return 0
	}
	return p.sock.ino
}

func (p *Process) launch(spec helperSpec) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	// Blocking pipe (no O_NONBLOCK): the helper's read must sleep in
	// pipe_read, not return EAGAIN.
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	pipeR := os.NewFile(uintptr(fds[0]), "helper-pipe-r")
	defer pipeR.Close()
	p.pipeW = os.NewFile(uintptr(fds[1]), "helper-pipe-w")

	p.cmd = exec.Command(self)
	p.cmd.Env = append(os.Environ(),
		helperEnv+"="+string(raw),
		// A fixed GOMAXPROCS stops the runtime from re-reading cgroup
		// files (read(2) calls of its own) while the plan runs.
		"GOMAXPROCS=2",
		// No garbage collection: no background scavenger, whose timer
		// wakes the netpoller with a read(2) of its eventfd
		// (runtime.findRunnable -> runtime.read: 3 reads among 103400
		// planned ones of threads created one after another, 7.2 guest).
		"GOGC=off",
		"GODEBUG=asyncpreemptoff=1",
		// A test binary built with cgo (go test's default where a C
		// compiler is found) has glibc make a thread's arena, which reads
		// /sys/devices/system/cpu/online once (a read(2) of 1024 bytes)
		// unless the arena count is fixed.
		"GLIBC_TUNABLES=glibc.malloc.arena_max=1",
	)
	var stepsFile *os.File
	if p.steps, stepsFile, err = newStepWord(); err != nil {
		return err
	}
	defer stepsFile.Close()
	p.cmd.ExtraFiles = []*os.File{pipeR, stepsFile} // pipeFD, stepsFD
	if p.sock != nil {
		p.cmd.ExtraFiles = append(p.cmd.ExtraFiles, p.sock.ns) // netnsFD
	}
	p.cmd.Stderr = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if p.opts.PIDNamespace {
		p.cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start workload helper %s: %w", self, err)
	}
	go func() {
		defer close(p.lines)
		scanner := bufio.NewScanner(stdout)
		scanner.Buffer(nil, 64<<20)
		for scanner.Scan() {
			p.lines <- scanner.Text()
		}
	}()
	return nil
}

// receive decodes the helper's next stdout line into v.
func (p *Process) receive(v any, deadline time.Time) error {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return fmt.Errorf("helper exited early: %v; stderr: %s", p.cmd.Wait(), strings.TrimSpace(p.stderr.String()))
		}
		return json.Unmarshal([]byte(line), v)
	case <-time.After(time.Until(deadline)):
		return fmt.Errorf("no answer from helper %d by its deadline (%s)", p.TGID(), deadline.Format(time.TimeOnly))
	}
}

// MainTID returns the helper's thread that issues the reads of the
// steps on one thread (Step.Threads 0 or 1), to trace it from before
// Run.
func (p *Process) MainTID() int { return p.mainTID }

// TGID returns the helper's process ID, to filter on.
func (p *Process) TGID() uint32 { return uint32(p.cmd.Process.Pid) }

// Run lets the helper issue its reads, acts on its blocking reads, and
// returns what the helper measured. It fails if the helper takes longer
// than timeout. For a plan ending in KilledRead it returns, once the helper
// is dead, only the killed reads, with Killed set.
func (p *Process) Run(timeout time.Duration) (Result, error) {
	started := time.Now()
	deadline := started.Add(timeout)
	if err := p.cmd.Process.Signal(unix.SIGUSR1); err != nil {
		return Result{}, fmt.Errorf("start helper: %w", err)
	}
	var killed []Read
	for i, step := range p.plan {
		if !blocking[step.Op] {
			continue
		}
		if err := poll.Until(deadline, pollInterval, fmt.Sprintf("the helper at step %d", i), func() (bool, error) {
			return p.steps.reached(i), nil
		}); err != nil {
			return Result{}, err
		}
		for range step.Count {
			tids, err := p.waitBlocked(step.threads(), p.endOf(step.Op), deadline)
			if err == nil && p.blocked != nil {
				err = p.blocked(i, tids)
			}
			if err != nil {
				return Result{}, fmt.Errorf("step %d (%s): %w", i, step.Op, err)
			}
			time.Sleep(step.Delay) // the delay under test, not a wait for a condition
			if err := p.act(step, tids, deadline); err != nil {
				return Result{}, fmt.Errorf("step %d (%s): %w", i, step.Op, err)
			}
			if step.Op == KilledRead {
				for _, tid := range tids {
					// The helper cannot time a read it dies in; the
					// parent's start-to-death time bounds it from above.
					killed = append(killed, Read{Step: i, Op: step.Op, TID: tid, Requested: step.Size,
						Duration: time.Since(started)})
				}
			}
		}
	}
	if p.plan.killed() {
		return Result{TGID: int(p.TGID()), Reads: killed, Killed: true}, nil
	}
	var result Result
	if err := p.receive(&result, deadline); err != nil {
		return Result{}, fmt.Errorf("workload result: %w", err)
	}
	if p.opts.Linger {
		p.reported = true
		return result, nil
	}
	if err := p.cmd.Wait(); err != nil {
		return Result{}, fmt.Errorf("workload helper: %w; stderr: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return result, nil
}

// act ends the blocked reads of threads tids as step.Op says.
func (p *Process) act(step Step, tids []int, deadline time.Time) error {
	switch step.Op {
	case DelayedPipeRead, DelayedSocketRead:
		// One byte at a time: each write wakes one reader, which takes it.
		end := p.endOf(step.Op)
		for range tids {
			if _, err := end.w.Write([]byte{'x'}); err != nil {
				return fmt.Errorf("write to helper %s: %w", end.name, err)
			}
			if err := poll.Until(deadline, pollInterval, "helper consumed the "+end.name+" byte", end.empty); err != nil {
				return err
			}
		}
	case InterruptedRead:
		for _, tid := range tids {
			if err := unix.Tgkill(int(p.TGID()), tid, interruptSignal); err != nil {
				return fmt.Errorf("signal helper thread %d: %w", tid, err)
			}
		}
	case KilledRead:
		if err := p.cmd.Process.Kill(); err != nil {
			return fmt.Errorf("kill helper: %w", err)
		}
		if err := p.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			return fmt.Errorf("helper did not die of SIGKILL: %v; stderr: %s", err,
				strings.TrimSpace(p.stderr.String()))
		}
	}
	return nil
}

// readEnd is what the readers of a blocking op wait on: the helper's
// descriptor, the caller's writing end, and how many bytes written the
// readers have not taken yet.
type readEnd struct {
	name    string
	fd      int // the helper's
	w       *os.File
	pending func() (int, error)
}

func (e readEnd) empty() (bool, error) {
	n, err := e.pending()
	return n == 0, err
}

// endOf returns what op's readers read.
func (p *Process) endOf(op Op) readEnd {
	if op == DelayedSocketRead {
		return readEnd{name: "socket", fd: p.sockFD, w: p.sock.conn, pending: p.sock.pending}
	}
	return readEnd{name: "pipe", fd: pipeFD, w: p.pipeW, pending: p.pipeQueued}
}

// waitBlocked waits until n of the helper's threads sleep in read(2) of
// end with nothing to read, i.e. inside vfs_read, and returns their thread
// IDs.
func (p *Process) waitBlocked(n int, end readEnd, deadline time.Time) ([]int, error) {
	var tids []int
	err := poll.Until(deadline, pollInterval, fmt.Sprintf("%d helper threads blocked in read(2) of its %s", n, end.name), func() (bool,
		error) {
		var err error
		tids, err = p.blockedReaders(end)
		return len(tids) >= n, err
	})
	return tids, err
}

// blockedReaders returns the helper's threads asleep in read(2) of end
// while it is empty. A thread woken by a write or a signal is runnable at
// once, so it never counts twice.
func (p *Process) blockedReaders(end readEnd) ([]int, error) {
	if empty, err := end.empty(); err != nil || !empty {
		return nil, err
	}
	dir := fmt.Sprintf("/proc/%d/task/", p.TGID())
	threads, err := numberedEntries(dir)
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, tid := range threads {
		blocked, err := blockedInRead(fmt.Sprintf("%s%d/", dir, tid), end.fd)
		if taskGone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if blocked {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// blockedInRead reports whether the thread at task (a /proc/PID/task/TID/
// directory) is asleep in read(2) of fd.
func blockedInRead(task string, fd int) (bool, error) {
	stat, err := os.ReadFile(task + "stat")
	if err != nil {
		return false, err
	}
	// The state follows the parenthesised comm, which may contain spaces.
	_, afterComm, _ := bytes.Cut(stat, []byte(") "))
	if !bytes.HasPrefix(afterComm, []byte("S ")) {
		return false, nil
	}
	syscallLine, err := os.ReadFile(task + "syscall")
	if err != nil {
		return false, err
	}
	return bytes.HasPrefix(syscallLine, fmt.Appendf(nil, "%d 0x%x ", unix.SYS_READ, fd)), nil
}

// taskGone reports whether err of reading a thread's /proc files says
// the thread exited (ENOENT) or is exiting: its files still open, but
// reading them fails with ESRCH (seen in the guest when a finished step's
// threads exit during the next).
func taskGone(err error) bool { return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) }

// numberedEntries returns the numeric names in dir, e.g. the thread IDs
// of /proc/PID/task or the descriptors of /proc/PID/fd.
func numberedEntries(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var numbers []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			numbers = append(numbers, n)
		}
	}
	return numbers, nil
}

// pipeQueued returns the bytes in the helper's pipe.
func (p *Process) pipeQueued() (int, error) {
	return unix.IoctlGetInt(int(p.pipeW.Fd()), unix.TIOCINQ) // = FIONREAD
}

// Close ends the helper if it still runs (a lingering one is told to
// exit, others are killed) and removes its files.
func (p *Process) Close() error {
	var errs []error
	if p.cmd != nil && p.cmd.Process != nil && p.cmd.ProcessState == nil {
		errs = append(errs, p.endHelper())
	}
	if p.pipeW != nil {
		errs = append(errs, p.pipeW.Close())
	}
	errs = append(errs, p.steps.unmap())
	if p.sock != nil {
		errs = append(errs, p.sock.close())
	}
	if p.dir != "" {
		errs = append(errs, os.RemoveAll(p.dir))
	}
	return errors.Join(errs...)
}
