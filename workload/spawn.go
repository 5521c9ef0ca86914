package workload

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Spawn says when a step's threads are created. A tracer that lists a
// process's threads when it attaches (perf -p) sees only those created
// before; one that keeps per-thread state sees one entry per thread ID.
type Spawn string

const (
	// SpawnAtStep creates the threads when the step starts and releases
	// them together once all have opened what they read.
	SpawnAtStep Spawn = ""
	// SpawnEarly creates the threads before the helper reports ready;
	// they wait, their sources open, and are released together when the
	// step starts.
	SpawnEarly Spawn = "early"
	// SpawnFresh creates the threads one after another, at most
	// freshParallel alive at once; each issues its Count reads and exits,
	// so the step uses Threads thread IDs as long as the kernel does not
	// reuse one (it does after wrapping at /proc/sys/kernel/pid_max). As
	// with SpawnAtStep, the Go runtime may run one on a thread it created
	// earlier and left idle, which then exits with it.
	SpawnFresh Spawn = "fresh"
)

var spawns = map[Spawn]bool{SpawnAtStep: true, SpawnEarly: true, SpawnFresh: true}

// freshParallel bounds the fresh threads alive at once: enough to keep
// both vCPUs of a guest busy creating threads.
const freshParallel = 4

// crew is a step's threads, created and waiting to be released.
type crew struct {
	reads [][]Read
	errs  []error
	start chan struct{}
	done  sync.WaitGroup
}

// newCrew creates the step's threads and returns once each has opened
// what it reads (or failed to).
func newCrew(index int, step Step, files helperFiles) *crew {
	c := &crew{reads: make([][]Read, step.threads()), errs: make([]error, step.threads()), start: make(chan struct{})}
	var ready sync.WaitGroup
	ready.Add(step.threads())
	c.done.Add(step.threads())
	for i := range c.reads {
		go func() {
			defer c.done.Done()
			// Never unlocked: the thread exits with the goroutine, so
			// each worker is a thread of its own.
			runtime.LockOSThread()
			c.reads[i], c.errs[i] = readAll(index, step, files, func() { ready.Done(); <-c.start })
		}()
	}
	ready.Wait()
	return c
}

// run releases the threads and returns their reads once all are done.
func (c *crew) run() ([]Read, error) {
	close(c.start)
	c.done.Wait()
	return slices.Concat(c.reads...), errors.Join(c.errs...)
}

// earlyCrews creates the threads of the plan's SpawnEarly steps, by step
// index.
func earlyCrews(plan Plan, files helperFiles) map[int]*crew {
	crews := map[int]*crew{}
	for i, step := range plan {
		if step.Spawn == SpawnEarly {
			crews[i] = newCrew(i, step, files)
		}
	}
	return crews
}

// runFresh issues a SpawnFresh step: each read's thread is new and exits
// after its reads.
func runFresh(index int, step Step, files helperFiles) ([]Read, error) {
	reads := make([][]Read, step.threads())
	errs := make([]error, step.threads())
	next := make(chan int)
	var workers sync.WaitGroup
	for range min(freshParallel, step.threads()) {
		workers.Go(func() {
			for i := range next {
				thread := make(chan struct{})
				go func() {
					defer close(thread)
					runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
					reads[i], errs[i] = readAll(index, step, files, func() {})
				}()
				<-thread
			}
		})
	}
	for i := range reads {
		next <- i
	}
	close(next)
	workers.Wait()
	return slices.Concat(reads...), errors.Join(errs...)
}

// spin keeps the thread busy in user space for d: time.Now reads the
// clock through the vDSO, so no read(2) is made.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
