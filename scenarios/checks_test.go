package scenarios

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"

	"tracebench/internal/testenv"
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

// checkT is what a check needs of a *testing.T; tests of the checks
// themselves pass a recorder.
type checkT interface {
	assert.TestingT
	Helper()
	Logf(format string, args ...any)
}

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

// assertErrorEvents: the failed calls among events are exactly the
// failing reads among reads, with vfs_read's negative errno.
func assertErrorEvents(t *testing.T, r run, events []tracers.Event, reads []workload.Read) {
	t.Helper()
	if r.knows(t, tracers.FieldRequested|tracers.FieldResult, "error events (requested, result)") {
		assert.ElementsMatch(t, expectedErrors(reads), errorEvents(events), "error events (requested, result)")
	}
}

// assertCallsCountReads: every workload read through vfs_read is a call,
// exactly where the run's Missed is 0, else bounded by it. A mechanism that
// does not count calls is held to its events where it reports every call
// (threshold 0): one per read at least, so none was lost.
func assertCallsCountReads(t *testing.T, r run) {
	t.Helper()
	reads := r.vfsReads()
	if r.cfg.Threshold == 0 && r.stats.Unknown.Has(tracers.FieldCalls) {
		assert.GreaterOrEqual(t, uint64(len(r.events)), reads,
			"events >= workload reads (calls unknown; at threshold 0 every call is an event)")
		return
	}
	if !r.knows(t, tracers.FieldCalls|tracers.FieldMissed, "calls == workload reads") {
		return
	}
	testenv.AssertShortByMissed(t, r.stats.Calls, reads, r.stats.Missed, "calls vs workload reads through vfs_read")
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
func (r run) identifiable(t checkT, reads []workload.Read, minimum time.Duration) bool {
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

// assertLatencies checks that each of reads has an event of its own (see
// eventOf and pairEvents) that took at least minimum and, for a read the
// helper timed (a killed one it did not), at most the user-space duration
// around the system call, which encloses the vfs_read call. It returns the
// events paired, nil where they cannot be told apart (identifiable).
func assertLatencies(t checkT, r run, reads []workload.Read, minimum time.Duration) map[int]bool {
	t.Helper()
	if !r.identifiable(t, reads, minimum) {
		return nil
	}
	paired := map[int]bool{}
	for i, j := range r.pairEvents(reads, minimum) {
		if j < 0 {
			continue
		}
		paired[j] = true
		ev, rd := r.events[j], reads[i]
		assert.GreaterOrEqual(t, ev.Latency, minimum, "latency of %+v", ev)
		if rd.Duration > 0 {
			assert.LessOrEqual(t, ev.Latency, rd.Duration, "latency of %+v <= user-space duration of %+v", ev, rd)
		}
	}
	assert.Equal(t, len(reads), len(paired), "events of the reads %+v", reads)
	return paired
}

// pairEvents gives each of reads a distinct event of it (eventOf), by
// index, -1 for none: reads of one thread and size are told apart by
// latency, the shortest-timed read taking the longest event its
// user-space duration encloses.
func (r run) pairEvents(reads []workload.Read, minimum time.Duration) []int {
	order := make([]int, len(reads))
	for i := range order {
		order[i] = i
	}
	timed := func(rd workload.Read) time.Duration { return cmp.Or(rd.Duration, time.Duration(math.MaxInt64)) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(timed(reads[a]), timed(reads[b])) })
	pair := make([]int, len(reads))
	taken := make([]bool, len(r.events))
	for _, i := range order {
		pair[i] = -1
		rd := reads[i]
		fits := func(j int) bool { return r.events[j].Latency <= timed(rd) }
		for j, ev := range r.events {
			if taken[j] || !eventOf(ev, rd, minimum) {
				continue
			}
			best := pair[i]
			if best < 0 || fits(j) && (!fits(best) || ev.Latency > r.events[best].Latency) {
				pair[i] = j
			}
		}
		if pair[i] >= 0 {
			taken[pair[i]] = true
		}
	}
	return pair
}

// assertOnlyDelayedSlow is the one rule of every row that expects only its
// delayed reads to be slow: every delayed read has its event
// (assertLatencies), and each other event is that of a read user space
// also timed slow (under emulation that is rare, not never): a read of its
// own, of the same thread and size where observed, whose user-space
// duration encloses the event's latency.
func assertOnlyDelayedSlow(t checkT, r run, delayed []workload.Read, minimum time.Duration) {
	t.Helper()
	paired := assertLatencies(t, r, delayed, minimum)
	taken := make([]bool, len(r.truth.Reads))
	for k, ev := range r.events {
		if paired[k] || paired == nil && slices.ContainsFunc(delayed, func(rd workload.Read) bool {
			return eventOf(ev, rd, minimum)
		}) {
			continue
		}
		i := -1
		for j, rd := range r.truth.Reads {
			if !taken[j] && !slices.Contains(delayed, rd) && timedSlowFor(ev, rd, r.cfg.Threshold) {
				i = j
				break
			}
		}
		if assert.GreaterOrEqual(t, i, 0, "event %+v is of no delayed read, nor of a read user space timed "+
			"slow (at least %v and at least its latency) that has no event yet", ev, r.cfg.Threshold) {
			taken[i] = true
			t.Logf("event of a read user space also timed slow: %+v, read %+v", ev, r.truth.Reads[i])
		}
	}
}

// timedSlowFor reports whether rd can be the read of ev: same thread,
// same size where observed, timed at least threshold and at least ev's
// latency in user space.
func timedSlowFor(ev tracers.Event, rd workload.Read, threshold time.Duration) bool {
	return int(ev.PID) == rd.TID && rd.Duration >= threshold && rd.Duration >= ev.Latency &&
		(ev.Unknown.Has(tracers.FieldRequested) || ev.Requested == uint64(rd.Requested))
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
		// Misses are counted per program, not per thread: a thread
		// has at most its reads' events, the total is bounded.
		t.Logf("kernel skipped %d program runs; events per thread <= its reads", r.stats.Missed)
		for tid, n := range reads {
			assert.LessOrEqual(t, events[tid], n, "events of thread %d <= its reads", tid)
		}
		assert.GreaterOrEqual(t, uint64(len(r.events))+r.stats.Missed, uint64(len(r.truth.Reads)),
			"events >= reads - missed, bounded by the %d program runs the kernel skipped system-wide in this run",
			r.stats.Missed)
		return
	}
	for tid, n := range reads {
		assert.Equal(t, n, events[tid], "events of thread %d == its reads (missed 0)", tid)
	}
}

// checkLost: where every call returned or was lost, slow == calls (every
// read was delayed) and the per-thread entries and lost calls are as the
// declaration predicts (checkInvariants holds them to it); it logs what
// the loss cost.
func checkLost(t *testing.T, r run) {
	assertEverySlow(t, r)
	t.Logf("%s: %d reads, %d calls, %d lost (want %v), %d entries left (want %v), %d missed system-wide",
		r.mechanism, r.vfsReads(), r.stats.Calls, r.stats.Lost, r.want.lost, r.stats.Pending, r.want.leftBehind,
		r.stats.Missed)
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
	assertCallsCountReads(t, r)
	assertErrorsInjected(t, r)
	delayed := slices.Concat(r.truth.Of(workload.DelayedPipeRead), r.truth.Of(workload.InterruptedRead))
	assertOnlyDelayedSlow(t, r, delayed, agreementDelay)
	got := agreementSummary{Calls: r.stats.Calls, Errors: r.stats.Errors,
		Slow: results(r.eventsOf(delayed, agreementDelay)), unknown: r.stats.Unknown | r.want.unknown.event}
	if r.knows(t, tracers.FieldRequested|tracers.FieldResult, "slow reads by (requested, result)") {
		want := sortedResults([]callResult{{1, 1}, {1, 1}, {2, -erestartsys}})
		assert.Equal(t, want, got.Slow, "slow reads: the two delayed pipe reads and the interrupted one")
	}
	a.compare(t, r.mechanism, got)
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
	return results(slices.DeleteFunc(slices.Clone(events), func(ev tracers.Event) bool { return ev.Requested == 4096 }))
}

// results returns the events' (requested, result), sorted.
func results(events []tracers.Event) []callResult {
	var out []callResult
	for _, ev := range events {
		out = append(out, callResult{ev.Requested, ev.Result})
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
	assertOnlyDelayedSlow(t, r, reads, workload.DefaultPipeDelay)
	for _, ev := range r.eventsOf(reads, workload.DefaultPipeDelay) {
		t.Logf("socket read: vfs_read latency %v, writer's delay %v, user-space duration %v", ev.Latency,
			workload.DefaultPipeDelay, reads[0].Duration)
	}
}
