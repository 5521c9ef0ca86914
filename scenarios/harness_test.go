package scenarios

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/testenv"
	"tracebench/tracers"
	"tracebench/tracers/tracerstest"
	"tracebench/workload"
)

const (
	// workloadTimeout bounds one workload run; reads under TCG are ~10x slower.
	workloadTimeout = 2 * time.Minute
	// releaseTimeout bounds the wait for the kernel to free closed
	// programs and links (after an RCU grace period).
	releaseTimeout = 10 * time.Second
	// drainTimeout bounds the wait for events of calls in flight at detach.
	drainTimeout = 5 * time.Second
)

// scenario is one row of the table: a workload, a tracer configuration
// derived from the helper's TGID, and what must hold afterwards beyond the
// invariants every run is checked against.
type scenario struct {
	name   string
	doc    string
	plan   workload.Plan
	config func(helperTGID uint32) tracers.Config
	check  func(t *testing.T, r run)
	// provokes are the ways of losing calls the workload can trigger, with
	// inFlight reads in flight at once; expectOf turns them and each
	// mechanism's declaration into its expect.
	provokes tracers.Losses
	inFlight uint64
	// waves is how many times inFlight new threads read once and exit
	// (0 or 1: once).
	waves uint64
	// needs are the fields the row is about: a mechanism that declares
	// every one of them unknown under the row's configuration would be
	// checked against the invariants only, so the row skips it, saying so.
	needs tracers.Fields
}

// expect is what one mechanism is expected to do where mechanisms differ.
type expect struct {
	// leftBehind bounds Stats.Pending after Drain: per-thread entries
	// whose return was never seen.
	leftBehind between
	// mayMiss says the kernel may skip the mechanism's programs for some
	// calls in this scenario (kretprobe maxactive exhausted; trampoline
	// recursion protection); without it Stats.Missed must be 0.
	mayMiss bool
	// missesWhole says a missed call runs neither program half, so it
	// is neither counted nor left behind (kprobe-session on a rethook
	// pool); otherwise a missed return leaves its entry.
	missesWhole bool
	// lost bounds Stats.Lost, calls that found no room in the per-thread
	// map (Config.ThreadMapEntries); lostUnmissed is its exact value when
	// the run's Missed is 0 (no return missed, so nothing left behind).
	lost         between
	lostUnmissed uint64
	// lostFromMisses says a missed return can be counted in Stats.Lost
	// when its thread's next call overwrites the entry left behind, so
	// Lost may exceed lost by up to Missed.
	lostFromMisses bool
	// entriesSkipped says the kernel may skip a call's entry half, which
	// then takes no room: Lost may fall short of lost by up to Missed.
	entriesSkipped bool
	// leftByMisses says each missed return may leave an entry of its own
	// (tracers.State.KeysByFrame): Stats.Pending is bounded by
	// Stats.Missed instead of leftBehind.max.
	leftByMisses bool
	// unknown is what the mechanism declares it cannot observe under the
	// row's configuration (Capabilities.Blind).
	unknown unknowns
}

// between is an inclusive range; the zero value means exactly 0.
type between struct{ min, max uint64 }

func (b between) holds(n uint64) bool { return b.min <= n && n <= b.max }

func (b between) String() string {
	if b.min == b.max {
		return fmt.Sprint(b.min)
	}
	return fmt.Sprintf("%d..%d", b.min, b.max)
}

// run is what one scenario produced for one mechanism.
type run struct {
	mechanism string
	want      expect
	cfg       tracers.Config
	helper    uint32
	truth     workload.Result
	events    []tracers.Event
	stats     tracers.Stats
}

// maxAttempts bounds how often a run is repeated because the kernel
// skipped program runs the scenario does not expect (see scenario.run).
const maxAttempts = 3

// run runs sc for m and checks the outcome. Stats.Missed counts skips of
// every process on the system: under preemption the trampoline recursion
// guard skips programs now and then (proven by the "drops" row), so a run
// whose count is not expected is repeated, up to maxAttempts. Every
// attempt is held to the invariants misses cannot affect; the last one to
// every assertion. The outcome table counts the repeats.
func (sc scenario) run(t *testing.T, m tracers.Mechanism) {
	defer assertNoLeftovers(t)
	outcomes.track(t, m.Name, sc.name)
	if err := sc.plan.Supported(); errors.Is(err, workload.ErrUnavailable) {
		outcomes.skipScenario(t, m.Name, sc.name, err.Error())
	} else {
		require.NoError(t, err)
	}
	want := sc.expectFor(m)
	if reason := sc.inapplicable(m.Name, want.unknown); reason != "" {
		outcomes.skipCell(t, m.Name, sc.name, reason)
	}
	defer assertTracingThreshRestored(t)()
	var r run
	for attempt := 1; ; attempt++ {
		r = sc.attempt(t, m)
		r.want = want
		outcomes.counted(m.Name, sc.name, r.stats)
		if want.mayMiss || r.stats.Missed == 0 || attempt == maxAttempts {
			break
		}
		t.Logf("attempt %d: the kernel skipped %d program runs, which %s does not expect of %s; repeating "+
			"after checking what misses cannot affect (%+v)", attempt, r.stats.Missed, sc.name, m.Name, r.stats)
		checkUnaffectedByMisses(t, r)
		outcomes.retried(m.Name, sc.name)
	}
	t.Logf("%s: %+v, %d events", sc.doc, r.stats, len(r.events))
	checkInvariants(t, r)
	sc.check(t, r)
}

// expectFor returns what sc expects of m, from m's declaration; what m
// cannot observe does not depend on Config.TGID (the helper's, unknown yet).
func (sc scenario) expectFor(m tracers.Mechanism) expect {
	cfg := sc.config(0)
	ld := load{inFlight: sc.inFlight, waves: sc.waves, entries: uint64(cfg.ThreadMapEntries)}
	want := expectOf(m.Can, sc.provokes, ld)
	want.unknown = unknownsOf(m, cfg)
	return want
}

// inapplicable says why sc checks nothing of mechanism beyond the
// invariants, or "".
func (sc scenario) inapplicable(mechanism string, u unknowns) string {
	if sc.needs == 0 || !(u.stats | u.event).Has(sc.needs) {
		return ""
	}
	return fmt.Sprintf("the row checks %s, which %s does not observe under its configuration"+
		" (unknown there: %s of Stats, %s of every event)", sc.needs, mechanism, u.stats, u.event)
}

// attempt runs the workload once under a fresh tracer.
func (sc scenario) attempt(t *testing.T, m tracers.Mechanism) run {
	helper, err := workload.Start(sc.plan)
	require.NoError(t, err)
	defer assertNetNSGone(t, helper.NetNS()) // runs after Close
	defer helper.Close()

	cfg := sc.config(helper.TGID())
	tr, err := m.Start(cfg)
	if errors.Is(err, tracers.ErrUnsupported) {
		outcomes.skip(t, m.Name, sc.name, err.Error())
	}
	require.NoError(t, err)
	defer func() { assert.NoError(t, tr.Close()) }()

	truth, err := helper.Run(workloadTimeout)
	require.NoError(t, err)
	events, stats, err := tracers.Drain(tr, drainTimeout)
	require.NoError(t, err)
	return run{mechanism: m.Name, cfg: cfg, helper: helper.TGID(), truth: truth, events: events, stats: stats}
}

// checkInvariants holds for every mechanism in every scenario, for every
// value the mechanism observes.
func checkInvariants(t *testing.T, r run) {
	checkUnaffectedByMisses(t, r)
	checkAccounting(t, r)
	if r.knows(t, tracers.FieldPending, "per-thread entries left behind") {
		assert.True(t, r.want.leftBehind.holds(r.stats.Pending), "per-thread entries left behind: %d, want %v",
			r.stats.Pending, r.want.leftBehind)
	}
	if r.want.leftByMisses && r.knows(t, tracers.FieldMissed, "entries left behind <= missed") {
		assert.LessOrEqual(t, r.stats.Pending-min(r.stats.Pending, r.want.leftBehind.min), r.stats.Missed,
			"per-thread entries left behind beyond %d <= runs missed", r.want.leftBehind.min)
	}
	if !r.want.mayMiss && r.knows(t, tracers.FieldMissed, "missed == 0") {
		assert.Zero(t, r.stats.Missed, "missed")
	}
	checkPerFunction(t, r)
}

// checkPerFunction: Stats.PerFunction lists the traced functions in order,
// each counter known of every function sums to its total, and every event
// is of a traced function.
func checkPerFunction(t *testing.T, r run) {
	traced := r.cfg.TracedFunctions()
	var names []string
	sums := map[tracers.Field]uint64{}
	var unknown tracers.Fields
	for _, f := range r.stats.PerFunction {
		names = append(names, f.Function)
		unknown |= f.Unknown
		for field, v := range functionValues(f) {
			sums[field] += v
		}
		assertReadZero(t, functionValues(f), f.Unknown, f.Function+"'s counters")
	}
	assert.Equal(t, traced, names, "Stats.PerFunction's functions")
	for field, total := range statsValues(r.stats) {
		if !(unknown | r.stats.Unknown).Has(field) {
			assert.Equal(t, total, sums[field], "Stats' %s == the sum of every function's", field)
		}
	}
	for _, ev := range r.events {
		assert.Contains(t, traced, ev.Function, "event of a traced function: %+v", ev)
	}
}

// checkUnaffectedByMisses holds whatever calls the kernel skipped: a
// skipped call is in no counter and has no event.
func checkUnaffectedByMisses(t *testing.T, r run) {
	checkUnknowns(t, r)
	if r.knows(t, tracers.FieldSlow|tracers.FieldDropped, "slow == events + dropped") {
		assert.Equal(t, r.stats.Slow, uint64(len(r.events))+r.stats.Dropped, "slow == events + dropped")
	}
	if r.knows(t, tracers.FieldSlow|tracers.FieldCalls, "slow <= calls") {
		assert.LessOrEqual(t, r.stats.Slow, r.stats.Calls, "slow <= calls")
	}
	if r.knows(t, tracers.FieldErrors|tracers.FieldCalls, "errors <= calls") {
		assert.LessOrEqual(t, r.stats.Errors, r.stats.Calls, "errors <= calls")
	}
	if r.cfg.TGID == r.helper && r.knows(t, tracers.FieldCalls|tracers.FieldLost|tracers.FieldPending,
		"calls + lost + pending <= reads through vfs_read") {
		assert.LessOrEqual(t, r.stats.Calls+r.stats.Lost+r.stats.Pending, r.vfsReads(),
			"calls + lost + pending <= the helper's reads through vfs_read: no call is counted twice")
	}
	tids := r.truth.TIDs()
	longest := r.truth.Longest()
	for _, ev := range r.events {
		assert.GreaterOrEqual(t, ev.Latency, r.cfg.Threshold, "event latency >= threshold: %+v", ev)
		if r.cfg.TGID == r.helper {
			if r.eventKnows(t, ev, tracers.FieldTGID, fmt.Sprintf("event tgid is the helper's: %+v", ev)) {
				assert.Equal(t, r.helper, ev.TGID, "event tgid is the helper's: %+v", ev)
			}
			assert.True(t, tids[int(ev.PID)], "event pid %d is a helper thread %v: %+v", ev.PID, tids, ev)
			// vfs_read runs inside read(2): a longer latency than any
			// read user space timed means a bogus entry time.
			assert.LessOrEqual(t, ev.Latency, longest, "event latency <= longest user-space read duration: %+v", ev)
		}
	}
}

func requireRoot(t *testing.T) {
	if why := testenv.Tracing.Missing(); why != "" {
		outcomes.skipAll(t, why)
	}
}

// assertNetNSGone fails t if anything still holds the helper's private
// network namespace (nsfs inode ino; 0 for none) releaseTimeout after
// Close (workload.WaitNetNSReleased).
func assertNetNSGone(t *testing.T, ino uint64) {
	t.Helper()
	if ino == 0 {
		return
	}
	holders, err := workload.WaitNetNSReleased(ino, time.Now().Add(releaseTimeout))
	assert.NoError(t, err, "network namespace net:[%d] still held by %v", ino, holders)
}

// assertNoLeftovers fails t if any tracer's program, link or tracefs event
// is still in the kernel.
func assertNoLeftovers(t *testing.T) {
	t.Helper()
	if t.Skipped() {
		return // nothing was loaded
	}
	left, err := tracerstest.WaitNoLeftovers(releaseTimeout)
	assert.NoError(t, err, "enumerate kernel objects")
	assert.Empty(t, left, "kernel objects left behind %v after the tracer closed", releaseTimeout)
}

// assertTracingThreshRestored reads tracing_thresh and returns a function
// that fails t if it differs when called: a tracer must put back the
// global setting it changed.
func assertTracingThreshRestored(t *testing.T) func() {
	before := testenv.TracingThresh(t)
	return func() {
		t.Helper()
		assert.Equal(t, before, testenv.TracingThresh(t), "tracing_thresh after the tracer is gone")
	}
}

// checkAccounting: with the TGID filter on the helper, each of its reads
// through vfs_read is counted once, returned (calls), lost or pending.
// Exact where the run's Missed (system-wide) is 0; otherwise the calls
// skipped whole are bounded by it. Lost is what the row expects, give or
// take the misses that can land in it.
func checkAccounting(t *testing.T, r run) {
	if r.cfg.TGID != r.helper || !r.knows(t, tracers.FieldCalls|tracers.FieldLost|tracers.FieldPending|
		tracers.FieldMissed, "calls + lost + pending == reads through vfs_read") {
		return
	}
	s, reads := r.stats, r.vfsReads()
	testenv.AssertShortByMissed(t, s.Calls+s.Lost+s.Pending, reads, s.Missed,
		"calls + lost + pending vs the helper's reads through vfs_read")
	if s.Missed == 0 {
		assert.Equal(t, r.want.lostUnmissed, s.Lost, "lost, with no return missed")
		assert.Zero(t, s.Pending, "entries left behind, with no return missed")
		return
	}
	// A call skipped at entry takes no room; a missed return may be
	// overwritten and counted lost where the declaration says so.
	lost := r.want.lost
	if r.want.entriesSkipped {
		lost.min -= min(lost.min, s.Missed)
	}
	if r.want.lostFromMisses {
		lost.max += s.Missed
	}
	assert.True(t, lost.holds(s.Lost), "lost %d, want %v: %v widened by the %d program runs missed system-wide "+
		"in this run", s.Lost, lost, r.want.lost, s.Missed)
}

// vfsReads counts the helper's reads whose system call calls vfs_read.
func (r run) vfsReads() uint64 {
	var n uint64
	for _, rd := range r.truth.Reads {
		if throughVFSRead(rd.Op) {
			n++
		}
	}
	return n
}
