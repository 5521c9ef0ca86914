package scenarios

import (
	"cmp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"

	"tracebench/tracers"
	"tracebench/workload"
)

// erestartsys is ERESTARTSYS of include/linux/errno.h, an errno user space
// never sees.
const erestartsys = 512

// vfsReadResult is what vfs_read itself returns for the reads the workload
// makes fail. A pipe read woken by a signal returns -ERESTARTSYS; only on
// the way out to user space does the signal code turn it into EINTR (no
// SA_RESTART) or restart the call, so a tracer legitimately reports -512
// where read(2) returned -EINTR. A SIGKILLed reader returns the same way
// before its thread exits.
var vfsReadResult = map[workload.Op]int64{
	workload.DirRead:         -int64(unix.EISDIR),
	workload.EmptyPipeRead:   -int64(unix.EAGAIN),
	workload.InterruptedRead: -erestartsys,
	workload.KilledRead:      -erestartsys,
}

// errorPlan injects 6 failing reads among ordinary ones.
var errorPlan = workload.Plan{
	workload.DirReads(3),
	workload.EmptyPipeReads(2),
	workload.InterruptedReads(1, workload.DefaultPipeDelay),
	workload.FileReads(16, 4096),
}

// agreementPlan mixes every kind of read whose outcome does not depend on
// timing: fast successes, fast failures, slow successes, a slow failure.
var agreementPlan = workload.Plan{
	workload.FileReads(32, 4096),
	workload.DirReads(2),
	workload.EmptyPipeReads(2),
	workload.DelayedPipeReads(2, 30*time.Millisecond),
	workload.InterruptedReads(1, 30*time.Millisecond),
}

// missThreads is how many readers block at once in kretprobe-misses.
const missThreads = 4

// callResult identifies a read by what vfs_read saw.
type callResult struct {
	Requested uint64
	Result    int64
}

func sortedResults(rs []callResult) []callResult {
	slices.SortFunc(rs, func(a, b callResult) int {
		return cmp.Or(cmp.Compare(a.Requested, b.Requested), cmp.Compare(a.Result, b.Result))
	})
	return rs
}

// expectedErrors returns what vfs_read returned for the failing reads of truth.
func expectedErrors(truth workload.Result) []callResult {
	var out []callResult
	for _, rd := range truth.Reads {
		if result, ok := vfsReadResult[rd.Op]; ok {
			out = append(out, callResult{uint64(rd.Requested), result})
		}
	}
	return sortedResults(out)
}

func countErrors(truth workload.Result) int { return len(expectedErrors(truth)) }

// errorEvents returns the events of failed calls.
func errorEvents(events []tracers.Event) []callResult {
	var out []callResult
	for _, ev := range events {
		if ev.Result < 0 {
			out = append(out, callResult{ev.Requested, ev.Result})
		}
	}
	return sortedResults(out)
}

// assertLatencies checks that the events of reads (matched by thread and
// requested size) number len(reads) and took at least minimum and, for a
// read the helper timed (a killed one it did not), at most the user-space
// duration around the system call, which encloses the vfs_read call.
func assertLatencies(t *testing.T, r run, reads []workload.Read, minimum time.Duration) {
	t.Helper()
	matched := 0
	for _, rd := range reads {
		for _, ev := range r.events {
			if int(ev.PID) == rd.TID && ev.Requested == uint64(rd.Requested) {
				matched++
				assert.GreaterOrEqual(t, ev.Latency, minimum, "latency of %+v", ev)
				if rd.Duration > 0 {
					assert.LessOrEqual(t, ev.Latency, rd.Duration, "latency of %+v <= user-space duration of %+v", ev, rd)
				}
			}
		}
	}
	assert.Equal(t, len(reads), matched, "events of the reads %+v", reads)
}

func checkThreads(t *testing.T, r run) {
	assert.Zero(t, r.stats.Dropped, "dropped")
	reads := map[int]int{}
	for _, rd := range r.truth.Reads {
		reads[rd.TID]++
	}
	assert.Len(t, reads, 4+3, "threads that read")
	events := map[int]int{}
	for _, ev := range r.events {
		events[int(ev.PID)]++
	}
	if r.stats.Missed > 0 {
		// Misses are counted per program, not per thread: only the
		// total can be accounted for.
		t.Logf("kernel skipped %d program runs; checking the total only", r.stats.Missed)
		assert.GreaterOrEqual(t, uint64(len(r.events))+r.stats.Missed, uint64(len(r.truth.Reads)), "events + missed >= reads")
		return
	}
	for tid, n := range reads {
		assert.GreaterOrEqual(t, events[tid], n, "events of thread %d", tid)
	}
}

// checkMisses: the returns a mechanism missed are exactly the entries it
// left behind, so calls + left behind accounts for every read.
func checkMisses(t *testing.T, r run) {
	assert.Equal(t, uint64(len(r.truth.Reads)), r.stats.Calls+r.stats.Pending, "calls + missed returns (entries left) == reads")
	if r.want.mayMiss {
		assert.GreaterOrEqual(t, r.stats.Missed, r.stats.Pending, "missed (all processes) >= this process's missed returns")
	}
}

// agreement compares each mechanism's run of agreementPlan with the first
// mechanism's; each run is also checked against the plan on its own.
var agreement = &agreementRef{}

type agreementRef struct {
	mu        sync.Mutex
	mechanism string
	summary   agreementSummary
}

// agreementSummary is what must be equal across mechanisms.
type agreementSummary struct {
	Calls, Errors uint64
	Slow          []callResult // slow calls other than file reads
}

func (a *agreementRef) check(t *testing.T, r run) {
	got := agreementSummary{Calls: r.stats.Calls, Errors: r.stats.Errors, Slow: slowNonFile(r.events)}
	assert.GreaterOrEqual(t, got.Calls, uint64(len(r.truth.Reads)), "calls >= workload reads")
	assert.Equal(t, uint64(countErrors(r.truth)), got.Errors, "errors == injected")
	want := sortedResults([]callResult{{1, 1}, {1, 1}, {2, -erestartsys}})
	assert.Equal(t, want, got.Slow, "slow reads: the two delayed pipe reads and the interrupted one")

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mechanism == "" {
		a.mechanism, a.summary = r.mechanism, got
		return
	}
	assert.Equal(t, a.summary, got, "same calls, errors and slow reads as %s", a.mechanism)
}

// slowNonFile returns the events other than file reads (4096 bytes): a page
// cache read is slow only when the thread was preempted in it, which no
// mechanism controls.
func slowNonFile(events []tracers.Event) []callResult {
	var out []callResult
	for _, ev := range events {
		if ev.Requested != 4096 {
			out = append(out, callResult{ev.Requested, ev.Result})
		}
	}
	return sortedResults(out)
}

// checkSocketRead: read(2) of a socket goes through vfs_read
// (sock_read_iter), so the delayed socket read is reported like a pipe read.
func checkSocketRead(t *testing.T, r run) {
	reads := r.truth.Of(workload.DelayedSocketRead)
	var want []callResult
	for _, rd := range reads {
		assert.Equal(t, int64(1), rd.Result, "the helper read the one byte written")
		want = append(want, callResult{uint64(rd.Requested), rd.Result})
	}
	assert.Equal(t, sortedResults(want), slowNonFile(r.events), "slow reads other than file reads: the socket read")
	assertLatencies(t, r, reads, workload.DefaultPipeDelay)
	for _, ev := range r.events {
		if ev.Requested == workload.SocketReadSize {
			t.Logf("socket read: vfs_read latency %v, writer's delay %v, user-space duration %v", ev.Latency, workload.DefaultPipeDelay, reads[0].Duration)
		}
	}
}
