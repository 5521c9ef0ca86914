package scenarios

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/testenv"
	"tracebench/matrix"
	"tracebench/tracers"
	"tracebench/workload"
)

// selectedMechanisms are the registry's mechanisms -tracebench.mechanisms
// names, in the registry's order; an unknown name fails t.
func selectedMechanisms(t *testing.T) []tracers.Mechanism {
	if *tableMechanisms == "" {
		return tracers.Mechanisms()
	}
	var selected []tracers.Mechanism
	for name := range strings.SplitSeq(*tableMechanisms, ",") {
		m, err := tracers.Lookup(name)
		require.NoError(t, err, "-%s", matrix.MechanismsFlag)
		selected = append(selected, m)
	}
	names := make([]string, len(tracers.Mechanisms()))
	for i, m := range tracers.Mechanisms() {
		names[i] = m.Name
	}
	slices.SortFunc(selected, func(a, b tracers.Mechanism) int {
		return cmp.Compare(slices.Index(names, a.Name), slices.Index(names, b.Name))
	})
	return slices.CompactFunc(selected, func(a, b tracers.Mechanism) bool { return a.Name == b.Name })
}

// seedPlan is the workload of the seed scenarios: fast page-cache reads and
// one pipe read answered DefaultPipeDelay after the reader blocked.
var seedPlan = workload.Plan{
	workload.FileReads(64, 4096),
	workload.DelayedPipeReads(1, workload.DefaultPipeDelay),
}

var scenarios = append([]scenario{
	{
		name:   "pid-filter-miss",
		doc:    "TGID filter matches no process: nothing counted, nothing reported",
		plan:   seedPlan,
		config: func(uint32) tracers.Config { return tracers.Config{TGID: testenv.NoProcess} },
		check: func(t *testing.T, r run) {
			if r.knows(t, tracers.FieldCalls, "calls == 0") {
				assert.Zero(t, r.stats.Calls, "calls")
			}
			assert.Empty(t, r.events, "events")
		},
	},
	{
		name:   "high-threshold",
		doc:    "10 s threshold: every read counted, none slow",
		plan:   seedPlan,
		config: helperOnly(10 * time.Second),
		check: func(t *testing.T, r run) {
			assertCallsCountReads(t, r)
			if r.knows(t, tracers.FieldSlow, "slow == 0") {
				assert.Zero(t, r.stats.Slow, "slow")
			}
			assert.Empty(t, r.events, "events")
		},
	},
	{
		name:   "slow-pipe-read",
		doc:    "10 ms threshold: the 50 ms pipe read is reported with a bounded latency, fast reads are not",
		plan:   seedPlan,
		config: helperOnly(10 * time.Millisecond),
		check:  checkSlowPipeRead,
	},
	{
		name:   "zero-threshold",
		doc:    "0 threshold: every call is slow and reported or dropped",
		plan:   seedPlan,
		config: helperOnly(0),
		check: func(t *testing.T, r run) {
			assertCallsCountReads(t, r)
			assertEverySlow(t, r)
		},
	},
	{
		name: "drops",
		doc: "one-page ring buffer, 0 threshold, 4 threads reading flat out, consumer paused: drops are counted " +
			"exactly",
		plan: workload.Plan{workload.FileReads(1000, 64).OnThreads(4)},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, RingBufferBytes: os.Getpagesize()}
		},
		check: func(t *testing.T, r run) {
			assertCallsCountReads(t, r)
			assertEverySlow(t, r)
			if r.knows(t, tracers.FieldDropped, "dropped > 0") {
				assert.Positive(t, r.stats.Dropped, "dropped")
			}
		},
		needs:    tracers.FieldDropped,
		provokes: tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: 4,
	},
	{
		name: "errors",
		doc: "EISDIR, EAGAIN and EINTR reads, 0 threshold: errors == injected, each event carries vfs_read's " +
			"negative errno",
		plan:   errorPlan,
		config: helperOnly(0),
		check: func(t *testing.T, r run) {
			assertErrorsInjected(t, r)
			assertErrorEvents(t, r, r.events, r.truth.Reads)
		},
		needs: tracers.FieldErrors | tracers.FieldResult,
	},
	{
		name: "slow-eintr",
		doc: "10 ms threshold: the read interrupted after 50 ms is both an error and slow; the fast failures are " +
			"errors only",
		plan:   errorPlan,
		config: helperOnly(10 * time.Millisecond),
		check: func(t *testing.T, r run) {
			assertErrorsInjected(t, r)
			interrupted := r.truth.Of(workload.InterruptedRead)
			assertOnlyDelayedSlow(t, r, interrupted, workload.DefaultPipeDelay)
			assertErrorEvents(t, r, r.eventsOf(interrupted, workload.DefaultPipeDelay), interrupted)
		},
	},
	{
		name: "threads",
		doc: "TGID filter, 4 threads of file reads and 3 of delayed pipe reads: every thread's reads count, events " +
			"carry thread pid and process tgid",
		plan: workload.Plan{
			workload.FileReads(50, 4096).OnThreads(4),
			workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(3),
		},
		config:   helperOnly(0),
		check:    checkThreads,
		provokes: tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: 7,
	},
	{
		name: "killed-reader",
		doc: "SIGKILL of a process whose 2 threads are blocked in a pipe read: the reads still return through " +
			"vfs_read (-ERESTARTSYS), no state is left",
		plan:   workload.Plan{workload.KilledReads(2, workload.DefaultPipeDelay)},
		config: helperOnly(10 * time.Millisecond),
		check: func(t *testing.T, r run) {
			assertErrorEvents(t, r, r.events, r.truth.Reads)
			assertLatencies(t, r, r.truth.Reads, workload.DefaultPipeDelay)
		},
	},
	{
		name: "kretprobe-misses",
		doc: "maxactive 1, 4 threads blocked in pipe reads at once: kretprobe misses the returns beyond maxactive, " +
			"kprobe-session on a rethook pool (6.12) may miss whole calls, the others miss none",
		plan: workload.Plan{workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads)},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, KretprobeMaxActive: 1}
		},
		check:    checkMisses,
		needs:    tracers.FieldCalls | tracers.FieldPending,
		provokes: tracers.LossMaxActive | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: missThreads,
	},
	{
		name: "map-full",
		doc: fmt.Sprintf("per-thread map of %d entries, %d threads blocked in pipe reads at once: the hash-map "+
			"designs count the %d that find no room as lost, the others lose none", mapFullEntries, mapFullThreads,
			mapFullThreads-mapFullEntries),
		plan: workload.Plan{workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(mapFullThreads)},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, ThreadMapEntries: mapFullEntries,
				KretprobeMaxActive: 2 * mapFullThreads}
		},
		check:    checkLost,
		needs:    tracers.FieldLost,
		provokes: tracers.LossMapFull | tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: mapFullThreads,
	},
	{
		name: "stale-entries",
		doc: fmt.Sprintf("per-thread map of %d entries, kretprobe maxactive 1; %d threads blocked in pipe reads "+
			"at once exit, then %d new ones do the same: the returns missed leave entries of exited threads in a "+
			"hash map for good, and the later threads find no room", missThreads, missThreads, missThreads),
		plan: workload.Plan{
			workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads),
			workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads),
		},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, ThreadMapEntries: missThreads,
				KretprobeMaxActive: 1}
		},
		check:    checkLost,
		needs:    tracers.FieldLost,
		provokes: tracers.LossMaxActive | tracers.LossMapFull | tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: missThreads,
		waves:    2,
	},
	{
		name:   "agreement",
		doc:    "the same deterministic workload gives every mechanism the same calls, errors and slow reads",
		plan:   agreementPlan,
		config: helperOnly(10 * time.Millisecond),
		check:  agreement.check,
	},
	{
		name: "socket-read",
		doc: "10 ms threshold: a TCP read(2) on loopback in a private network namespace, answered 50 ms after the " +
			"reader blocked, is the one slow read, its latency between the delay and the user-space duration",
		plan:   workload.Plan{workload.FileReads(16, 4096), workload.DelayedSocketReads(1, workload.DefaultPipeDelay)},
		config: helperOnly(10 * time.Millisecond),
		check:  checkSocketRead,
	},
}, slices.Concat(coverageScenarios(), manyFunctionScenarios())...)

// helperOnly traces the workload helper's process with threshold.
func helperOnly(threshold time.Duration) func(uint32) tracers.Config {
	return func(helper uint32) tracers.Config {
		return tracers.Config{TGID: helper, Threshold: threshold}
	}
}

// checkSlowPipeRead: the pipe read has one event, with vfs_read's result
// 1 and a latency between the writer's delay and the user-space duration;
// the fast file reads have none unless user space timed them slow too.
func checkSlowPipeRead(t *testing.T, r run) {
	pipeReads := r.truth.Of(workload.DelayedPipeRead)
	assertOnlyDelayedSlow(t, r, pipeReads, workload.DefaultPipeDelay)
	for _, ev := range r.eventsOf(pipeReads, workload.DefaultPipeDelay) {
		if r.eventKnows(t, ev, tracers.FieldResult, "the pipe read's result is 1") {
			assert.Equal(t, int64(1), ev.Result, "the pipe read's result: %+v", ev)
		}
	}
}

// tableMechanisms limits TestScenarios to some mechanisms, comma-separated
// (the kernel matrix's guests each run a part of the table); empty: all.
var tableMechanisms = flag.String(matrix.MechanismsFlag, "", "run TestScenarios for only these mechanisms, comma-separated")

// TestScenarios is matrix.TableTest: the table, a subtest per mechanism.
func TestScenarios(t *testing.T) {
	requireRoot(t)
	for _, m := range selectedMechanisms(t) {
		t.Run(m.Name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, m) })
			}
		})
	}
}
