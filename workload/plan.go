// Package workload drives controlled vfs_read load with known ground truth.
//
// A plan runs in a helper process (this program re-executed) whose TGID the
// caller knows before any read happens, so a tracer can filter on it; the
// helper issues raw read(2) calls on one locked OS thread, measures each in
// user space, and reports what it did. The caller's process acts as the
// delayed writer of pipe reads, and writes only once the helper's thread is
// seen blocked in the read, so the read's kernel latency is at least the
// delay.
package workload

import (
	"fmt"
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
)

// DefaultPipeDelay is the writer's delay of DelayedPipeReads.
const DefaultPipeDelay = 50 * time.Millisecond

// Step is Count reads of one Op.
type Step struct {
	Op    Op
	Count int
	Size  int           // bytes requested per read
	Delay time.Duration // DelayedPipeRead only: writer's wait once the reader blocks
}

// FileReads returns a step of n reads of size bytes from a regular file.
func FileReads(n, size int) Step { return Step{Op: FileRead, Count: n, Size: size} }

// DelayedPipeReads returns a step of n 1-byte pipe reads, each answered
// delay after the reader blocked.
func DelayedPipeReads(n int, delay time.Duration) Step {
	return Step{Op: DelayedPipeRead, Count: n, Size: 1, Delay: delay}
}

// Plan is the steps a helper runs in order.
type Plan []Step

// Validate names the first bad step.
func (p Plan) Validate() error {
	for i, s := range p {
		switch {
		case s.Op != FileRead && s.Op != DelayedPipeRead:
			return fmt.Errorf("step %d: unknown op %q", i, s.Op)
		case s.Count < 1:
			return fmt.Errorf("step %d (%s): count %d is not positive", i, s.Op, s.Count)
		case s.Size < 1:
			return fmt.Errorf("step %d (%s): size %d bytes is not positive", i, s.Op, s.Size)
		case s.Op == DelayedPipeRead && s.Size != 1:
			return fmt.Errorf("step %d (%s): size %d bytes, pipe reads are 1 byte", i, s.Op, s.Size)
		case s.Delay < 0:
			return fmt.Errorf("step %d (%s): delay %v is negative", i, s.Op, s.Delay)
		}
	}
	return nil
}

// fileBytes is the size of the data file: enough for the longest FileRead step.
func (p Plan) fileBytes() int {
	n := 0
	for _, s := range p {
		if s.Op == FileRead {
			n = max(n, s.Count*s.Size)
		}
	}
	return n
}

// Read is the ground truth of one read(2) as the helper measured it.
type Read struct {
	Step      int           // index of the step in the Plan
	Op        Op            // the step's Op
	TID       int           // thread that issued the read
	Requested int           // count argument, bytes
	Result    int64         // bytes read, or -errno
	Duration  time.Duration // user-space time around the syscall
}

// Result is what a helper did.
type Result struct {
	TGID  int    // the helper's process ID
	Reads []Read // in issue order
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

// TIDs returns the set of threads that issued reads.
func (r Result) TIDs() map[int]bool {
	tids := map[int]bool{}
	for _, rd := range r.Reads {
		tids[rd.TID] = true
	}
	return tids
}
