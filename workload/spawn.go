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
	var rounds *barrier
	if step.Blocks() {
		rounds = newBarrier(step.threads())
	}
	var ready sync.WaitGroup
	ready.Add(step.threads())
	c.done.Add(step.threads())
	for i := range c.reads {
		go func() {
			defer c.done.Done()
			// Never unlocked: the thread exits with the goroutine, so
			// each worker is a thread of its own.
			runtime.LockOSThread()
			c.reads[i], c.errs[i] = readAll(index, step, files, func() { ready.Done(); <-c.start }, rounds)
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
					reads[i], errs[i] = readAll(index, step, files, func() {}, nil)
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

// barrier holds a blocking step's threads between rounds: the caller
// answers a round's readers one byte each, and a reader back in read(2)
// before the round ends would take a byte meant for another (then the
// next round waits for a thread that has finished). Waiting on it makes
// no read(2). A nil barrier holds nothing.
type barrier struct {
	mu      sync.Mutex
	next    *sync.Cond
	members int // threads still reading
	arrived int // of them, those done with the current round
	round   int
}

func newBarrier(members int) *barrier {
	b := &barrier{members: members}
	b.next = sync.NewCond(&b.mu)
	return b
}

// wait returns once every member has finished the current round or left.
func (b *barrier) wait() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	round := b.round
	b.arrived++
	b.releaseIfAll()
	for round == b.round {
		b.next.Wait()
	}
}

// leave takes a thread that issues no more reads (done or failed) out of
// the rounds.
func (b *barrier) leave() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.members--
	b.releaseIfAll()
}

func (b *barrier) releaseIfAll() {
	if b.arrived > 0 && b.arrived >= b.members {
		b.arrived = 0
		b.round++
		b.next.Broadcast()
	}
}
