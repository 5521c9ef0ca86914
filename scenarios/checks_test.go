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
	workload.DelayedPipeReads(2, agreementDelay),
	workload.InterruptedReads(1, agreementDelay),
}

// agreementDelay is how long agreementPlan's delayed reads block.
const agreementDelay = 30 * time.Millisecond

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

// expectedErrors returns what vfs_read returned for the failing reads.
func expectedErrors(reads []workload.Read) []callResult {
	var out []callResult
	for _, rd := range reads {
		if result, ok := vfsReadResult[rd.Op]; ok {
			out = append(out, callResult{uint64(rd.Requested), result})
		}
	}
	return sortedResults(out)
}

func countErrors(truth workload.Result) int { return len(expectedErrors(truth.Reads)) }

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

// assertErrorsInjected: Stats.Errors counts exactly the failing reads.
func assertErrorsInjected(t *testing.T, r run) {
	t.Helper()
	if r.knows(t, tracers.FieldErrors, "errors == injected") {
		assert.Equal(t, uint64(countErrors(r.truth)), r.stats.Errors, "errors == injected")
	}
}

// assertErrorEvents: the events of failed calls are exactly those of the
// failing reads among reads, with vfs_read's negative errno.
func assertErrorEvents(t *testing.T, r run, reads []workload.Read) {
	t.Helper()
	if r.knows(t, tracers.FieldRequested|tracers.FieldResult, "error events (requested, result)") {
		assert.ElementsMatch(t, expectedErrors(reads), errorEvents(r.events), "error events (requested, result)")
	}
}

// assertCallsCoverReads: every workload read is counted. A mechanism that
// does not count calls is held to its events where it reports every call
// (threshold 0): one per read at least, so none was lost.
func assertCallsCoverReads(t *testing.T, r run) {
	t.Helper()
	if r.cfg.Threshold == 0 && r.stats.Unknown.Has(tracers.FieldCalls) {
		assert.GreaterOrEqual(t, len(r.events), len(r.truth.Reads),
			"events >= workload reads (calls unknown; at threshold 0 every call is an event)")
		return
	}
	if r.knows(t, tracers.FieldCalls, "calls >= workload reads") {
		assert.GreaterOrEqual(t, r.stats.Calls, uint64(len(r.truth.Reads)), "calls >= workload reads")
	}
}

// assertEverySlow: at threshold 0 every call is slow.
func assertEverySlow(t *testing.T, r run) {
	t.Helper()
	if r.knows(t, tracers.FieldCalls|tracers.FieldSlow, "slow == calls") {
		assert.Equal(t, r.stats.Calls, r.stats.Slow, "slow == calls")
	}
}

// eventOf reports whether ev is the event of rd, a read that blocked
// until the test acted, minimum at least: by thread and requested size,
// or, where the mechanism does not observe the size, by thread and a
// latency of minimum or more (identifiable says whether that is sound).
func eventOf(ev tracers.Event, rd workload.Read, minimum time.Duration) bool {
	if int(ev.PID) != rd.TID {
		return false
	}
	if ev.Unknown.Has(tracers.FieldRequested) {
		return ev.Latency >= minimum
	}
	return ev.Requested == uint64(rd.Requested)
}

// eventsOf returns the events of reads (see eventOf).
func (r run) eventsOf(reads []workload.Read, minimum time.Duration) []tracers.Event {
	var out []tracers.Event
	for _, ev := range r.events {
		if slices.ContainsFunc(reads, func(rd workload.Read) bool { return eventOf(ev, rd, minimum) }) {
			out = append(out, ev)
		}
	}
	return out
}

// identifiable reports whether eventOf tells the events of reads apart
// for this mechanism. By size it does. By latency it does unless another
// read of their threads also took minimum or more in user space (which
// encloses the vfs_read call): then it logs the check as not made.
func (r run) identifiable(t *testing.T, reads []workload.Read, minimum time.Duration) bool {
	t.Helper()
	if !r.want.unknown.event.Has(tracers.FieldRequested) {
		return true
	}
	threads := map[int]bool{}
	for _, rd := range reads {
		threads[rd.TID] = true
	}
	for _, rd := range r.truth.Reads {
		if threads[rd.TID] && !slices.Contains(reads, rd) && rd.Duration >= minimum {
			t.Logf("not checked for %s: requested unknown, and %+v also took >= %v in user space: events cannot be "+
				"told apart by latency", r.mechanism, rd, minimum)
			return false
		}
	}
	return true
}

// assertLatencies checks that the events of reads (see eventOf) number
// len(reads) and took at least minimum and, for a read the helper timed
// (a killed one it did not), at most the user-space duration around the
// system call, which encloses the vfs_read call.
func assertLatencies(t *testing.T, r run, reads []workload.Read, minimum time.Duration) {
	t.Helper()
	if !r.identifiable(t, reads, minimum) {
		return
	}
	matched := 0
	for _, rd := range reads {
		for _, ev := range r.events {
			if eventOf(ev, rd, minimum) {
				matched++
				assert.GreaterOrEqual(t, ev.Latency, minimum, "latency of %+v", ev)
				if rd.Duration > 0 {
					assert.LessOrEqual(t, ev.Latency, rd.Duration, "latency of %+v <= user-space duration of %+v", ev,
						rd)
				}
			}
		}
	}
	assert.Equal(t, len(reads), matched, "events of the reads %+v", reads)
}

// assertOthersTimedSlow: apart from the delayed reads' events, a read may
// be reported only if user space timed it at or above the threshold too
// (under emulation that is rare, not never): an event's latency is at
// most its read's user-space duration.
func assertOthersTimedSlow(t *testing.T, r run, delayed []workload.Read, minimum time.Duration) {
	t.Helper()
	others := len(r.events) - len(r.eventsOf(delayed, minimum))
	timedSlow := 0
	for _, rd := range r.truth.Reads {
		if !slices.Contains(delayed, rd) && rd.Duration >= r.cfg.Threshold {
			timedSlow++
		}
	}
	assert.LessOrEqual(t, others, timedSlow,
		"events other than the delayed reads' <= other reads timed slow in user space")
}

func checkThreads(t *testing.T, r run) {
	if r.knows(t, tracers.FieldDropped, "dropped == 0") {
		assert.Zero(t, r.stats.Dropped, "dropped")
	}
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
		assert.GreaterOrEqual(t, uint64(len(r.events))+r.stats.Missed, uint64(len(r.truth.Reads)),
			"events + missed >= reads")
		return
	}
	for tid, n := range reads {
		assert.GreaterOrEqual(t, events[tid], n, "events of thread %d", tid)
	}
}

// checkMisses: the returns a mechanism missed are exactly the entries it
// left behind, so calls + left behind accounts for every read.
func checkMisses(t *testing.T, r run) {
	reads := uint64(len(r.truth.Reads))
	if r.want.missesWhole {
		// Calls missed whole leave nothing but the system-wide count.
		seen := r.stats.Calls + r.stats.Pending
		assert.LessOrEqual(t, seen, reads, "calls + entries left <= reads")
		assert.GreaterOrEqual(t, r.stats.Missed, reads-min(seen, reads),
			"missed (all processes) >= this process's reads missed whole")
		return
	}
	if r.knows(t, tracers.FieldCalls|tracers.FieldPending, "calls + entries left == reads") {
		assert.Equal(t, reads, r.stats.Calls+r.stats.Pending, "calls + missed returns (entries left) == reads")
	}
	if r.want.mayMiss && r.knows(t, tracers.FieldMissed, "missed >= missed returns") {
		assert.GreaterOrEqual(t, r.stats.Missed, r.stats.Pending,
			"missed (all processes) >= this process's missed returns")
	}
}

// agreement compares each mechanism's run of agreementPlan with the first
// mechanism's, on the fields both observe; each run is also checked
// against the plan on its own.
var agreement = &agreementRef{}

type agreementRef struct {
	mu        sync.Mutex
	mechanism string
	summary   agreementSummary
}

// agreementSummary is what must be equal across mechanisms.
type agreementSummary struct {
	Calls, Errors uint64
	Slow          []callResult   // slow calls other than file reads
	unknown       tracers.Fields // what the mechanism did not observe
}

func (a *agreementRef) check(t *testing.T, r run) {
	assertCallsCoverReads(t, r)
	assertErrorsInjected(t, r)
	got := agreementSummary{Calls: r.stats.Calls, Errors: r.stats.Errors, Slow: slowNonFile(r.events),
		unknown: r.stats.Unknown | r.want.unknown.event}
	if r.knows(t, tracers.FieldRequested|tracers.FieldResult, "slow reads by (requested, result)") {
		want := sortedResults([]callResult{{1, 1}, {1, 1}, {2, -erestartsys}})
		assert.Equal(t, want, got.Slow, "slow reads: the two delayed pipe reads and the interrupted one")
	} else {
		assertDelayedEvents(t, r, slices.Concat(r.truth.Of(workload.DelayedPipeRead),
			r.truth.Of(workload.InterruptedRead)), agreementDelay)
	}
	a.compare(t, r.mechanism, got)
}

// assertDelayedEvents: the events of at least minimum are one per delayed
// read, for a mechanism that does not observe sizes and results.
func assertDelayedEvents(t *testing.T, r run, delayed []workload.Read, minimum time.Duration) {
	t.Helper()
	if !r.identifiable(t, delayed, minimum) {
		return
	}
	var long int
	for _, ev := range r.events {
		if ev.Latency >= minimum {
			long++
		}
	}
	assert.Equal(t, len(delayed), long, "events of at least %v: one per delayed read", minimum)
}

// compare holds got to the first mechanism's summary, field by field where
// both observe it; the first becomes the reference.
func (a *agreementRef) compare(t *testing.T, mechanism string, got agreementSummary) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mechanism == "" {
		a.mechanism, a.summary = mechanism, got
		return
	}
	ref, unknown := a.summary, a.summary.unknown|got.unknown
	if observed(t, mechanism, unknown, tracers.FieldCalls, "same calls as "+a.mechanism) {
		assert.Equal(t, ref.Calls, got.Calls, "same calls as %s", a.mechanism)
	}
	if observed(t, mechanism, unknown, tracers.FieldErrors, "same errors as "+a.mechanism) {
		assert.Equal(t, ref.Errors, got.Errors, "same errors as %s", a.mechanism)
	}
	if observed(t, mechanism, unknown, tracers.FieldRequested|tracers.FieldResult, "same slow reads as "+a.mechanism) {
		assert.Equal(t, ref.Slow, got.Slow, "same slow reads as %s", a.mechanism)
	}
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
	if r.knows(t, tracers.FieldRequested|tracers.FieldResult, "slow reads other than file reads: the socket read") {
		assert.Equal(t, sortedResults(want), slowNonFile(r.events), "slow reads other than file reads: the socket read")
	}
	assertLatencies(t, r, reads, workload.DefaultPipeDelay)
	assertOthersTimedSlow(t, r, reads, workload.DefaultPipeDelay)
	for _, ev := range r.eventsOf(reads, workload.DefaultPipeDelay) {
		t.Logf("socket read: vfs_read latency %v, writer's delay %v, user-space duration %v", ev.Latency,
			workload.DefaultPipeDelay, reads[0].Duration)
	}
}
