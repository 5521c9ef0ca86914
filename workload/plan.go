// Package workload drives controlled vfs_read load with known ground truth.
//
// A plan runs in a helper process (this program re-executed) whose TGID the
// caller knows before any read happens, so a tracer can filter on it; the
// helper issues raw read(2) calls on locked OS threads (one, or Threads per
// step), measures each in user space, and reports what it did. The caller's
// process acts on reads that block: it writes, signals or kills only once
// the helper's threads are seen blocked in the read, so the read's kernel
// latency is at least the step's delay.
package workload

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Op is a kind of read the helper issues.
type Op string

const (
	// FileRead is read(2) of a regular file, Size bytes at a time, served
	// from the page cache.
	FileRead Op = "file-read"
	// DelayedPipeRead is a 1-byte read(2) of an empty pipe whose writer
	// waits Delay after the reader blocks, then writes one byte.
	DelayedPipeRead Op = "delayed-pipe-read"
	// DirRead is read(2) of a directory: vfs_read fails with EISDIR.
	DirRead Op = "dir-read"
	// EmptyPipeRead is read(2) of an empty non-blocking pipe: vfs_read
	// fails with EAGAIN at once.
	EmptyPipeRead Op = "empty-pipe-read"
	// InterruptedRead is read(2) of an empty pipe that the caller
	// interrupts Delay after the reader blocked, with a signal whose
	// handler is installed without SA_RESTART: read(2) returns EINTR.
	InterruptedRead Op = "interrupted-read"
	// KilledRead is read(2) of an empty pipe; Delay after the readers
	// blocked the caller kills the helper with SIGKILL. It must be the
	// plan's last step, with Count 1.
	KilledRead Op = "killed-read"
	// DelayedSocketRead is read(2) of a TCP socket that the helper's main
	// thread connected over loopback inside a network namespace of its
	// own; the caller, at the other end, writes one byte Delay after the
	// reader blocked. The read returns 1 byte.
	DelayedSocketRead Op = "delayed-socket-read"
	// PipeRead is a 1-byte read(2) of a pipe the helper filled before the
	// step: it returns at once.
	PipeRead Op = "pipe-read"
)

// The coverage ops read Size bytes of the same regular file as FileRead,
// each through another system call path, to find out which paths reach
// vfs_read.
const (
	PreadRead    Op = "pread64"  // pread64(2) at offset 0
	ReadvRead    Op = "readv"    // readv(2) into two halves of the buffer
	SendfileRead Op = "sendfile" // sendfile(2) to /dev/null
	MmapRead     Op = "mmap"     // copy out of a fresh shared mapping: page faults only
	IoUringRead  Op = "io_uring" // one IORING_OP_READ on a one-entry ring, waited for
)

// blocking says which ops block until the caller acts.
var blocking = map[Op]bool{DelayedPipeRead: true, InterruptedRead: true, KilledRead: true, DelayedSocketRead: true}

// fromDataFile says which ops read the data file, within its first
// Count*Size bytes.
var fromDataFile = map[Op]bool{FileRead: true, PreadRead: true, ReadvRead: true, SendfileRead: true, MmapRead: true,
	IoUringRead: true}

// DefaultPipeDelay is the writer's delay of DelayedPipeReads.
const DefaultPipeDelay = 50 * time.Millisecond

// Step is Count reads of one Op on each of Threads threads.
type Step struct {
	Op    Op
	Count int           // reads per thread
	Size  int           // bytes requested per read
	Delay time.Duration // blocking ops: the caller's wait once all readers block
	// Threads issue the reads concurrently, each from its own OS thread
	// and (for files) its own file descriptor, starting together; 0 or
	// 1 means the helper's one main thread, unless Spawn is set.
	Threads int
	// Spawn says when the step's threads are created (default: when the
	// step starts).
	Spawn Spawn
	// Gap is busy time in user space (no system call) between two reads
	// of a thread: a tracer that takes a call's entry time from the
	// thread's previous call reports at least Gap for it.
	Gap time.Duration
}

func (s Step) threads() int { return max(1, s.Threads) }

// Blocks reports whether the step's reads block until the caller acts,
// Delay after they all blocked: such a read takes at least Delay in the
// kernel.
func (s Step) Blocks() bool { return blocking[s.Op] }

// ownThreads reports whether the step runs on threads of its own rather
// than the helper's main thread.
func (s Step) ownThreads() bool { return s.Threads > 1 || s.Spawn != SpawnAtStep }

// FileReads returns a step of n reads of size bytes from a regular file.
func FileReads(n, size int) Step { return Step{Op: FileRead, Count: n, Size: size} }

// FileReadsBy returns a step of n reads of size bytes from a regular file
// through op, one of FileRead and the coverage ops.
func FileReadsBy(op Op, n, size int) Step { return Step{Op: op, Count: n, Size: size} }

// SocketReadSize is what a DelayedSocketRead asks for: more than the one
// byte it gets, and a size no other op's constructor uses, so that its
// events are told apart.
const SocketReadSize = 8

// DelayedSocketReads returns a step of n TCP socket reads in a private
// network namespace, each answered with one byte delay after the reader
// blocked.
func DelayedSocketReads(n int, delay time.Duration) Step {
	return Step{Op: DelayedSocketRead, Count: n, Size: SocketReadSize, Delay: delay}
}

// DelayedPipeReads returns a step of n 1-byte pipe reads, each answered
// delay after the reader blocked.
func DelayedPipeReads(n int, delay time.Duration) Step {
	return Step{Op: DelayedPipeRead, Count: n, Size: 1, Delay: delay}
}

// PipeReads returns a step of n 1-byte reads of a pipe that holds a byte
// for each.
func PipeReads(n int) Step { return Step{Op: PipeRead, Count: n, Size: 1} }

// pipeCapacity is what a new pipe holds (PIPE_DEF_BUFFERS pages): a
// PipeRead step's bytes are written before it reads, so they must fit.
const pipeCapacity = 16 * 4096

// DirReads returns a step of n reads of a directory (EISDIR).
func DirReads(n int) Step { return Step{Op: DirRead, Count: n, Size: 64} }

// EmptyPipeReads returns a step of n non-blocking reads of an empty pipe
// (EAGAIN).
func EmptyPipeReads(n int) Step { return Step{Op: EmptyPipeRead, Count: n, Size: 32} }

// InterruptedReads returns a step of n pipe reads, each interrupted by a
// signal delay after the reader blocked (EINTR).
func InterruptedReads(n int, delay time.Duration) Step {
	return Step{Op: InterruptedRead, Count: n, Size: 2, Delay: delay}
}

// KilledReads returns a step of one pipe read on each of threads threads,
// whose process is killed delay after they all blocked.
func KilledReads(threads int, delay time.Duration) Step {
	return Step{Op: KilledRead, Count: 1, Size: 1, Delay: delay, Threads: threads}
}

// OnThreads returns s issued by n threads at once, Count reads each.
func (s Step) OnThreads(n int) Step {
	s.Threads = n
	return s
}

// OnEarlyThreads returns s issued by n threads created before the helper
// reports ready, so they exist when a tracer attaches.
func (s Step) OnEarlyThreads(n int) Step {
	s.Threads, s.Spawn = n, SpawnEarly
	return s
}

// OnFreshThreads returns s issued by n threads created one after another,
// each exiting after its Count reads: n thread IDs over the step.
func (s Step) OnFreshThreads(n int) Step {
	s.Threads, s.Spawn = n, SpawnFresh
	return s
}

// WithGap returns s with gap of user-space busy time between two reads of
// a thread.
func (s Step) WithGap(gap time.Duration) Step {
	s.Gap = gap
	return s
}

// Plan is the steps a helper runs in order.
type Plan []Step

// Validate names the first bad step.
func (p Plan) Validate() error {
	for i, s := range p {
		switch {
		case !known[s.Op]:
			return fmt.Errorf("step %d: unknown op %q", i, s.Op)
		case s.Threads < 0:
			return fmt.Errorf("step %d (%s): %d threads", i, s.Op, s.Threads)
		case s.Op == KilledRead && (i != len(p)-1 || s.Count != 1):
			return fmt.Errorf("step %d (%s): must be the last step, with count 1", i, s.Op)
		case s.Count < 1:
			return fmt.Errorf("step %d (%s): count %d is not positive", i, s.Op, s.Count)
		case s.Size < 1:
			return fmt.Errorf("step %d (%s): size %d bytes is not positive", i, s.Op, s.Size)
		case s.Op == PipeRead && s.Count*s.Size > pipeCapacity:
			return fmt.Errorf("step %d (%s): %d bytes, more than a pipe holds (%d)", i, s.Op, s.Count*s.Size, pipeCapacity)
		case s.Op == DelayedPipeRead && s.Size != 1:
			return fmt.Errorf("step %d (%s): size %d bytes, pipe reads are 1 byte", i, s.Op, s.Size)
		case s.Op == DelayedSocketRead && s.threads() != 1:
			// Only the main thread joins the namespace and connects.
			return fmt.Errorf("step %d (%s): %d threads, socket reads are the main thread's", i, s.Op, s.Threads)
		case s.Delay < 0:
			return fmt.Errorf("step %d (%s): delay %v is negative", i, s.Op, s.Delay)
		case s.Gap < 0:
			return fmt.Errorf("step %d (%s): gap %v is negative", i, s.Op, s.Gap)
		case !spawns[s.Spawn]:
			return fmt.Errorf("step %d (%s): unknown spawn %q", i, s.Op, s.Spawn)
		case s.Spawn == SpawnFresh && blocking[s.Op]:
			// The caller acts once all of a step's readers block.
			return fmt.Errorf("step %d (%s): fresh threads never block at once", i, s.Op)
		case s.Spawn != SpawnAtStep && s.Op == DelayedSocketRead:
			return fmt.Errorf("step %d (%s): spawn %q, socket reads are the main thread's", i, s.Op, s.Spawn)
		}
	}
	return nil
}

var known = map[Op]bool{
	FileRead: true, DelayedPipeRead: true, DirRead: true, EmptyPipeRead: true, InterruptedRead: true, KilledRead: true,
	DelayedSocketRead: true, PipeRead: true, PreadRead: true, ReadvRead: true, SendfileRead: true, MmapRead: true, IoUringRead: true,
}

// ErrUnavailable is wrapped by Plan.Supported's error when the running
// kernel cannot run one of the plan's ops.
var ErrUnavailable = errors.New("not available in this kernel")

// requires holds, for ops that depend on an optional kernel feature, a
// probe that fails with an error wrapping ErrUnavailable without it.
var requires = map[Op]func() error{IoUringRead: ioUringSupported}

// Supported reports whether the running kernel can run every op of p: nil,
// an error wrapping ErrUnavailable that names the missing feature and how
// it was detected, or another error when probing itself failed.
func (p Plan) Supported() error {
	for _, s := range p {
		if probe, ok := requires[s.Op]; ok {
			if err := probe(); err != nil {
				return fmt.Errorf("%s: %w", s.Op, err)
			}
		}
	}
	return nil
}

// killed reports whether the plan ends with the helper killed.
func (p Plan) killed() bool { return len(p) > 0 && p[len(p)-1].Op == KilledRead }

// readsSocket reports whether the helper needs a socket in a private
// network namespace.
func (p Plan) readsSocket() bool {
	return slices.ContainsFunc(p, func(s Step) bool { return s.Op == DelayedSocketRead })
}

// fileBytes is the size of the data file: enough for the longest step that
// reads it.
func (p Plan) fileBytes() int {
	n := 0
	for _, s := range p {
		if fromDataFile[s.Op] {
			n = max(n, s.Count*s.Size)
		}
	}
	return n
}

// Read is the ground truth of one read(2) as the helper measured it. For a
// KilledRead, which never returns, the caller fills in Step, Op, TID,
// Requested and, as an upper bound, Duration; Result is 0.
type Read struct {
	Step      int           // index of the step in the Plan
	Op        Op            // the step's Op
	TID       int           // thread that issued the read
	Requested int           // count argument, bytes
	Result    int64         // bytes read, or -errno
	Duration  time.Duration // user-space time around the syscall; for KilledRead, the parent's upper bound
}

// Result is what a helper did.
type Result struct {
	TGID int // the helper's process ID
	// Reads are in issue order per thread; the threads of a multi-thread
	// step follow each other. A killed helper reports nothing: Reads
	// holds only the killed reads.
	Reads  []Read
	Killed bool // the plan ended with KilledRead
}

// Of returns the reads of one Op.
func (r Result) Of(op Op) []Read {
	var reads []Read
	for _, rd := range r.Reads {
		if rd.Op == op {
			reads = append(reads, rd)
		}
	}
	return reads
}

// Longest returns the longest user-space duration of any read.
func (r Result) Longest() time.Duration {
	var longest time.Duration
	for _, rd := range r.Reads {
		longest = max(longest, rd.Duration)
	}
	return longest
}

// TIDs returns the set of threads that issued reads.
func (r Result) TIDs() map[int]bool {
	tids := map[int]bool{}
	for _, rd := range r.Reads {
		tids[rd.TID] = true
	}
	return tids
}
