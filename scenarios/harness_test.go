package scenarios

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/testenv"
	"tracebench/matrix"
	"tracebench/tracers"
	"tracebench/tracers/tracerstest"
	"tracebench/workload"
)

// workloadTimeout bounds one workload run: reads under TCG are ~10x
// slower, and an architecture's guest runs Slowdown times longer still
// (riscv64's own-path rows passed 2 minutes).
var workloadTimeout = matrix.Running().Limit(2 * time.Minute)

const (
	// releaseTimeout bounds the wait for the kernel to free closed
	// programs and links (after an RCU grace period).
	releaseTimeout = 10 * time.Second
	// drainTimeout bounds the wait for events of calls in flight at detach.
	drainTimeout = 5 * time.Second
	// consumePoll is how often a consumer looks whether to stop.
	consumePoll = 10 * time.Millisecond
)

// scenario is one row of the table: a workload, a tracer configuration
// derived from the helper's TGID, and what must hold afterwards beyond the
// invariants every run is checked against.
type scenario struct {
	Row
	check func(t *testing.T, r run)
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
	// functions, if set, chooses the functions the row traces (for the
	// mechanism's attach kinds) and what the ground truth knows of them;
	// a mechanism that traces vfs_read alone skips the row, saying so.
	// Without it the row traces vfs_read alone.
	functions func(t *testing.T, m tracers.Mechanism, row string) traced
	// whenBlocked, if set, runs while the readers of a blocking step sleep
	// in their read (workload.Process.WhenBlocked), their calls in flight.
	whenBlocked func(tr tracers.Tracer) error
	// reenters says the row traces functions the mechanism's own programs
	// call (helpers, the ring buffer): the kernel skips every such run
	// nested in a BPF program, whole (the trampolines' recursion guard,
	// kprobe_multi's bpf_prog_active, fprobe's recursion lock).
	reenters bool
	// consumes: a consumer reads events while the workload runs, as a
	// tool does; otherwise they are read after it.
	consumes bool
	// lingers: the helper stays alive until the tracer is detached, so that
	// its threads' exit (each other thread killed inside get_signal, which
	// never returns) leaves no call in flight in the traced functions; the
	// row detaches while they sleep and keeps where (run.asleep).
	lingers bool
}

// traced is what a row traces with one mechanism.
type traced struct {
	// functions are Config.Functions; nil traces vfs_read alone.
	functions []string
	// through says, for each function whose calls the ground truth knows,
	// which of the helper's reads call it once each.
	through map[string]func(workload.Op) bool
	// blocked are the functions a pipe read blocked in the pipe is inside.
	blocked []string
	// refused, if set, is the function of functions that the mechanism's
	// attach kinds cannot attach: Start must refuse the set, naming it.
	refused string
}

// vfsReadAlone is what a row traces without functions.
var vfsReadAlone = traced{through: map[string]func(workload.Op) bool{tracers.DefaultFunction: throughVFSRead}}

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
	// unknown is what the mechanism declares it cannot observe under the
	// row's configuration (Capabilities.Blind; per function,
	// Capabilities.OfFunction).
	unknown unknowns
	// heldAtDetach and unseenAtDetach split the calls in flight when the
	// row detached: those whose entries the mechanism keeps (in Pending),
	// those it keeps nothing of (counted nowhere).
	heldAtDetach, unseenAtDetach uint64
	// leftByMisses says entries may be left behind beyond one per reader
	// (by any thread of the process, or by each missed return where the
	// key holds the call's frame: tracers.State.KeysByFrame): those beyond
	// heldAtDetach are bounded by the runs missed, not by leftBehind.max.
	leftByMisses bool
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

// run is what one scenario produced for one mechanism, or, in a view of
// one of its functions (run.functions), for that function.
type run struct {
	mechanism string
	can       tracers.Capabilities
	want      expect
	cfg       tracers.Config
	helper    uint32
	truth     workload.Result
	events    []tracers.Event
	stats     tracers.Stats
	traced    traced
	// detached counts the calls of each blocked function in flight when
	// whenBlocked ran.
	detached uint64
	// asleep is where a lingering helper's threads slept at detach.
	asleep workload.Sleep
	// startErr is Start's refusal, where the row expects one.
	startErr error
	// function is the view's function; "" for the whole run.
	function string
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
	outcomes.track(t, m.Name, sc.Name)
	if err := sc.Plan.Supported(); errors.Is(err, workload.ErrUnavailable) {
		outcomes.skipScenario(t, m.Name, sc.Name, err.Error())
	} else {
		require.NoError(t, err)
	}
	want := sc.expectFor(m)
	if reason := sc.inapplicable(m.Name, want.unknown); reason != "" {
		outcomes.skipCell(t, m.Name, sc.Name, reason)
	}
	defer assertTracingThreshRestored(t)()
	fns := sc.tracedBy(t, m)
	if fns.refused != "" {
		sc.check(t, sc.refusal(t, m, fns))
		return
	}
	var r run
	for attempt := 1; ; attempt++ {
		r = sc.attempt(t, m, fns)
		r.want = want
		outcomes.counted(m.Name, sc.Name, r.stats)
		if want.mayMiss || r.stats.Missed == 0 || attempt == maxAttempts {
			break
		}
		t.Logf("attempt %d: the kernel skipped %d program runs, which %s does not expect of %s; repeating "+
			"after checking what misses cannot affect (%+v)", attempt, r.stats.Missed, sc.Name, m.Name, r.stats)
		checkUnaffectedByMisses(t, r)
		outcomes.retried(m.Name, sc.Name)
	}
	t.Logf("%s: %+v, %d events", sc.Doc, r.stats, len(r.events))
	checkInvariants(t, r)
	sc.check(t, r)
}

// expectFor returns what sc expects of m, from m's declaration; what m
// cannot observe does not depend on Config.TGID (the helper's, unknown yet).
func (sc scenario) expectFor(m tracers.Mechanism) expect {
	cfg := sc.Config(0)
	ld := load{inFlight: sc.inFlight, waves: sc.waves, entries: uint64(cfg.ThreadMapEntries)}
	want := expectOf(m.Can, sc.provokes, ld)
	// A set of functions every thread runs (readpath's syscall exit work):
	// a skipped return of any of the process's threads leaves its entry.
	if sc.functions != nil && m.Can.State.KeepsPerThread() && (sc.provokes & m.Can.Loses).Has(tracers.LossRecursion) {
		want.leftBehind.max, want.leftByMisses = math.MaxUint64, true
	}
	if sc.reenters && m.Can.BPF {
		want.mayMiss, want.entriesSkipped = true, true
		if m.Can.State.KeepsPerThread() { // a skipped return leaves its entry (checkOwnPath bounds them),
			want.leftBehind.max = math.MaxUint64 // which the thread's next call at its frame counts lost
			want.lostFromMisses = true
		}
	}
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

// tracedBy returns what sc traces with m: vfs_read alone, or the row's
// functions where m traces many; it skips a row of many functions for a
// mechanism that traces vfs_read alone.
func (sc scenario) tracedBy(t *testing.T, m tracers.Mechanism) traced {
	if sc.functions == nil {
		return vfsReadAlone
	}
	if !m.Can.Functions.Many {
		outcomes.skipCell(t, m.Name, sc.Name, fmt.Sprintf("the row traces many functions; %s traces %s alone "+
			"(Capabilities.Functions.Many is false)", m.Name, tracers.DefaultFunction))
	}
	return sc.functions(t, m, sc.Name)
}

// start starts m as sc configures it for the helper, tracing fns.
func (sc scenario) start(t *testing.T, m tracers.Mechanism, helper uint32, fns traced) (tracers.Config, tracers.Tracer,
	error) {
	cfg := sc.Config(helper)
	cfg.Functions = fns.functions
	tr, err := m.Start(cfg)
	if errors.Is(err, tracers.ErrUnsupported) {
		outcomes.skip(t, m.Name, sc.Name, err.Error())
	}
	return cfg, tr, err
}

// attempt runs the workload once under a fresh tracer.
func (sc scenario) attempt(t *testing.T, m tracers.Mechanism, fns traced) run {
	helper, err := workload.StartWith(sc.Plan, workload.Options{Linger: sc.lingers})
	require.NoError(t, err)
	defer assertNetNSGone(t, helper.NetNS()) // runs after Close
	defer helper.Close()

	cfg, tr, err := sc.start(t, m, helper.TGID(), fns)
	require.NoError(t, err)
	defer func() { assert.NoError(t, tr.Close()) }()
	r := run{mechanism: m.Name, can: m.Can, cfg: cfg, helper: helper.TGID(), traced: fns}
	if sc.whenBlocked != nil {
		helper.WhenBlocked(func(_ int, tids []int) error {
			r.detached += uint64(len(tids))
			return sc.whenBlocked(tr)
		})
	}
	stop := consume(tr, sc.consumes)
	r.truth, err = helper.Run(workloadTimeout)
	read, readErr := stop()
	require.NoError(t, errors.Join(err, readErr))
	if sc.lingers {
		r.asleep = detachAsleep(t, helper, tr)
	}
	rest, stats, err := tracers.DrainRest(tr, uint64(len(read)), drainTimeout)
	require.NoError(t, err)
	r.events, r.stats = append(read, rest...), stats
	return r
}

// detachAsleep detaches tr while every thread of the lingering helper
// sleeps, and returns where they slept: their calls there were in flight.
func detachAsleep(t *testing.T, helper *workload.Process, tr tracers.Tracer) workload.Sleep {
	asleep, err := helper.Asleep(time.Now().Add(workloadTimeout))
	require.NoError(t, err)
	require.NoError(t, tr.Detach())
	still, err := helper.StillAsleep(asleep)
	require.NoError(t, err)
	require.True(t, still, "a thread of the helper ran during the detach: its calls in flight then are unknown")
	return asleep
}

// consume reads tr's events while the workload runs, if on; stop ends it
// and returns what it read and the first error other than a deadline.
func consume(tr tracers.Tracer, on bool) (stop func() ([]tracers.Event, error)) {
	if !on {
		return func() ([]tracers.Event, error) { return nil, nil }
	}
	type result struct {
		events []tracers.Event
		err    error
	}
	done, out := make(chan struct{}), make(chan result, 1)
	go func() {
		var events []tracers.Event
		for {
			select {
			case <-done:
				out <- result{events, nil}
				return
			default:
			}
			ev, err := tr.ReadEvent(time.Now().Add(consumePoll))
			switch {
			case err == nil:
				events = append(events, ev)
			case !errors.Is(err, os.ErrDeadlineExceeded):
				out <- result{events, err}
				return
			}
		}
	}()
	return func() ([]tracers.Event, error) {
		close(done)
		r := <-out
		return r.events, r.err
	}
}

// refusal starts m with a set it cannot attach, which Start must refuse:
// it returns the refusal, after checking that nothing stayed attached and
// that the set without the refused function starts (and closes cleanly).
func (sc scenario) refusal(t *testing.T, m tracers.Mechanism, fns traced) run {
	cfg, tr, err := sc.start(t, m, 0, fns)
	if err == nil {
		assert.NoError(t, tr.Close())
	}
	assertNoLeftovers(t)
	rest := fns
	rest.functions = slices.DeleteFunc(slices.Clone(fns.functions), func(f string) bool { return f == fns.refused })
	_, without, werr := sc.start(t, m, 0, rest)
	if assert.NoError(t, werr, "the set without %s starts", fns.refused) {
		assert.NoError(t, without.Close())
		assertNoLeftovers(t)
	}
	return run{mechanism: m.Name, can: m.Can, cfg: cfg, traced: fns, startErr: err}
}

// checkInvariants holds for every mechanism in every scenario, for every
// value the mechanism observes, in total and for each traced function.
func checkInvariants(t *testing.T, r run) {
	checkUnaffectedByMisses(t, r)
	for _, f := range r.functions() {
		checkAccounting(t, f)
		if f.knows(t, tracers.FieldPending, "per-thread entries left behind") {
			left := f.want.leftBehind
			if f.want.mayMiss { // a call whose entry run was skipped keeps no entry
				left.min -= min(left.min, r.stats.Missed)
			}
			assert.True(t, left.holds(f.stats.Pending), "%s: per-thread entries left behind: %d, want %v (%d runs missed)",
				f.function, f.stats.Pending, left, r.stats.Missed)
		}
		if f.want.leftByMisses && f.knows(t, tracers.FieldPending|tracers.FieldMissed, "left behind <= missed") {
			assert.LessOrEqual(t, f.stats.Pending-min(f.stats.Pending, f.want.heldAtDetach), f.stats.Missed,
				"%s: entries left behind beyond the %d in flight at detach <= runs missed", f.function, f.want.heldAtDetach)
		}
		if !f.want.mayMiss && f.knows(t, tracers.FieldMissed, "missed == 0") {
			assert.Zero(t, f.stats.Missed, "%s: missed", f.function)
		}
	}
}

// functions returns a view of each traced function: its counters as the
// run's (its Missed the run's where the kernel counts them for every
// function at once), its events, what the truth knows of its calls, and
// what is expected of it.
func (r run) functions() []run {
	views := make([]run, len(r.stats.PerFunction))
	events := map[string][]tracers.Event{} // one pass: a run can hold 10^5 events of 10^3 functions
	for _, ev := range r.events {
		events[ev.Function] = append(events[ev.Function], ev)
	}
	for i, f := range r.stats.PerFunction {
		v := r
		v.function = f.Function
		v.stats = tracers.Stats{Calls: f.Calls, Slow: f.Slow, Errors: f.Errors, Dropped: f.Dropped, Lost: f.Lost,
			Overwritten: f.Overwritten, Missed: f.Missed, Pending: f.Pending, Unknown: f.Unknown,
			PerFunction: []tracers.FunctionStats{f}}
		if f.Unknown.Has(tracers.FieldMissed) && !r.stats.Unknown.Has(tracers.FieldMissed) {
			v.stats.Missed, v.stats.Unknown = r.stats.Missed, f.Unknown&^tracers.FieldMissed
		}
		v.events = events[f.Function]
		stats, event := r.can.OfFunction(r.cfg, f.Function)
		v.want.unknown = unknowns{stats: stats &^ (f.Unknown &^ v.stats.Unknown), event: event,
			eventMay: r.want.unknown.eventMay}
		if r.detached > 0 && slices.Contains(r.traced.blocked, f.Function) {
			v.want = v.want.inFlightAtDetach(r.can.State, f.Function, r.detached)
		}
		views[i] = v
	}
	return views
}

// through says which reads call the view's function once each; nil where
// the truth does not know.
func (r run) through() func(workload.Op) bool { return r.traced.through[r.function] }

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
		declared, _ := r.can.OfFunction(r.cfg, f.Function)
		assert.Equal(t, declared.String(), f.Unknown.String(), "%s: FunctionStats.Unknown is not what %s declares "+
			"(Capabilities.OfFunction)", f.Function, r.mechanism)
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
// skipped call is in no counter and has no event. It holds in total and
// for each traced function.
func checkUnaffectedByMisses(t *testing.T, r run) {
	checkStatsUnknown(t, r)
	checkPerFunction(t, r)
	checkCounts(t, r)
	for _, f := range r.functions() {
		checkUnknowns(t, f)
		checkCounts(t, f)
		checkEvents(t, f)
	}
}

// checkCounts: the counters of r (the run, or a function's view) are
// consistent with its events and with the reads through it.
func checkCounts(t *testing.T, r run) {
	label := r.label()
	if r.knows(t, tracers.FieldSlow|tracers.FieldDropped, "slow == events + dropped") {
		assert.Equal(t, r.stats.Slow, uint64(len(r.events))+r.stats.Dropped, "%s: slow == events + dropped", label)
	}
	if r.knows(t, tracers.FieldSlow|tracers.FieldCalls, "slow <= calls") {
		assert.LessOrEqual(t, r.stats.Slow, r.stats.Calls, "%s: slow <= calls", label)
	}
	if r.knows(t, tracers.FieldErrors|tracers.FieldCalls, "errors <= calls") {
		assert.LessOrEqual(t, r.stats.Errors, r.stats.Calls, "%s: errors <= calls", label)
	}
	if r.knows(t, tracers.FieldLost, "overwritten <= lost") {
		assert.LessOrEqual(t, r.stats.Overwritten, r.stats.Lost, "%s: overwritten <= lost: a part of it", label)
	}
	if r.knows(t, tracers.FieldMissed, "recursion misses <= missed") {
		assert.LessOrEqual(t, r.stats.RecursionMisses, r.stats.Missed, "%s: recursion misses <= missed: a part of it", label)
	}
	if r.function != "" && r.cfg.TGID == r.helper && r.through() != nil && r.knows(t,
		tracers.FieldCalls|tracers.FieldLost|tracers.FieldPending, "calls + lost + pending <= reads through it") {
		assert.LessOrEqual(t, r.stats.Calls+r.stats.Lost+r.stats.Pending, r.reads(),
			"%s: calls + lost + pending <= the helper's reads through it: no call is counted twice", label)
	}
}

// checkEvents: each event of a function's view is at or above the
// threshold, of the helper; of a function the reads call (vfs_read, and
// what the truth knows), of a reading thread, and no longer than user
// space timed a read.
func checkEvents(t *testing.T, r run) {
	tids := r.truth.TIDs()
	longest := r.truth.Longest()
	for _, ev := range r.events {
		assert.GreaterOrEqual(t, ev.Latency, r.cfg.Threshold, "event latency >= threshold: %+v", ev)
		if r.cfg.TGID != r.helper {
			continue
		}
		if r.eventKnows(t, ev, tracers.FieldTGID, fmt.Sprintf("event tgid is the helper's: %+v", ev)) {
			assert.Equal(t, r.helper, ev.TGID, "event tgid is the helper's: %+v", ev)
		}
		if r.through() != nil {
			assert.True(t, tids[int(ev.PID)], "event pid %d is a helper thread %v: %+v", ev.PID, tids, ev)
			// Its calls run inside read(2): a longer latency than any
			// read user space timed means a bogus entry time.
			assert.LessOrEqual(t, ev.Latency, longest, "event latency <= longest user-space read duration: %+v", ev)
		}
	}
}

// label names the run's mechanism, and its function in a view.
func (r run) label() string {
	if r.function == "" {
		return r.mechanism
	}
	return r.mechanism + " " + r.function
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
// through a function whose calls the truth knows (vfs_read, at least) is
// counted once, returned (calls), lost or pending; a call in flight when
// the row detached is pending or, where the mechanism keeps nothing of it,
// nowhere. Exact where the function's Missed (the run's, where the kernel
// counts for every function at once) is 0; otherwise the calls skipped
// whole are bounded by it. Lost is what the row expects, give or take the
// misses that can land in it.
func checkAccounting(t *testing.T, r run) {
	if r.cfg.TGID != r.helper || r.through() == nil || !r.knows(t, tracers.FieldCalls|tracers.FieldLost|
		tracers.FieldPending|tracers.FieldMissed, "calls + lost + pending == reads through it") {
		return
	}
	s, reads := r.stats, r.reads()
	testenv.AssertShortByMissed(t, s.Calls+s.Lost+s.Pending+r.want.unseenAtDetach, reads, s.Missed,
		r.function+": calls + lost + pending (+ calls in flight at detach counted nowhere) vs the helper's reads through it")
	if s.Missed == 0 {
		assert.Equal(t, r.want.lostUnmissed, s.Lost, "%s: lost, with no return missed", r.function)
		assert.Equal(t, r.want.heldAtDetach, s.Pending, "%s: entries left behind, with no return missed (in flight "+
			"at detach: %d)", r.function, r.want.heldAtDetach)
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
	assert.True(t, lost.holds(s.Lost), "%s: lost %d, want %v: %v widened by the %d program runs missed system-wide "+
		"in this run", r.function, s.Lost, lost, r.want.lost, s.Missed)
}

// vfsReads counts the helper's reads whose system call calls vfs_read.
func (r run) vfsReads() uint64 { return countReads(r.truth.Reads, throughVFSRead) }

// reads counts the helper's reads through the view's function.
func (r run) reads() uint64 { return countReads(r.truth.Reads, r.through()) }

// countReads counts the reads whose op through accepts.
func countReads(reads []workload.Read, through func(workload.Op) bool) uint64 {
	var n uint64
	for _, rd := range reads {
		if through(rd.Op) {
			n++
		}
	}
	return n
}
