package scenarios

import (
	"cmp"
	"flag"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// scenarios are Rows with their checks, in the rows' order.
var scenarios = withChecks(Rows(), vfsReadChecks, coverageChecks(), manyFunctionChecks())

// withChecks joins each row with its checks, by name; a row without
// checks has none (TestEveryRowChecked fails).
func withChecks(rows []Row, checks ...map[string]scenario) []scenario {
	all := map[string]scenario{}
	for _, c := range checks {
		maps.Copy(all, c)
	}
	joined := make([]scenario, len(rows))
	for i, r := range rows {
		joined[i] = all[r.Name]
		joined[i].Row = r
	}
	return joined
}

// vfsReadChecks are the checks of vfsReadRows, by name.
var vfsReadChecks = map[string]scenario{
	"pid-filter-miss": {
		check: func(t *testing.T, r run) {
			if r.knows(t, tracers.FieldCalls, "calls == 0") {
				assert.Zero(t, r.stats.Calls, "calls")
			}
			assert.Empty(t, r.events, "events")
		},
	},
	"high-threshold": {
		check: func(t *testing.T, r run) {
			assertCallsCountReads(t, r)
			if r.knows(t, tracers.FieldSlow, "slow == 0") {
				assert.Zero(t, r.stats.Slow, "slow")
			}
			assert.Empty(t, r.events, "events")
		},
	},
	"slow-pipe-read": {check: checkSlowPipeRead},
	"zero-threshold": {
		check: func(t *testing.T, r run) {
			assertCallsCountReads(t, r)
			assertEverySlow(t, r)
		},
	},
	"drops": {
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
	"errors": {
		check: func(t *testing.T, r run) {
			assertErrorsInjected(t, r)
			assertErrorEvents(t, r, r.events, r.truth.Reads)
		},
		needs: tracers.FieldErrors | tracers.FieldResult,
	},
	"slow-eintr": {
		check: func(t *testing.T, r run) {
			assertErrorsInjected(t, r)
			interrupted := r.truth.Of(workload.InterruptedRead)
			assertOnlyDelayedSlow(t, r, interrupted, workload.DefaultPipeDelay)
			assertErrorEvents(t, r, r.eventsOf(interrupted, workload.DefaultPipeDelay), interrupted)
		},
	},
	"threads": {
		check:    checkThreads,
		provokes: tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: 7,
	},
	"killed-reader": {
		check: func(t *testing.T, r run) {
			assertErrorEvents(t, r, r.events, r.truth.Reads)
			assertLatencies(t, r, r.truth.Reads, workload.DefaultPipeDelay)
		},
	},
	"kretprobe-misses": {
		check:    checkMisses,
		needs:    tracers.FieldCalls | tracers.FieldPending,
		provokes: tracers.LossMaxActive | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: missThreads,
	},
	"map-full": {
		check:    checkLost,
		needs:    tracers.FieldLost,
		provokes: tracers.LossMapFull | tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: mapFullThreads,
	},
	"stale-entries": {
		check:    checkLost,
		needs:    tracers.FieldLost,
		provokes: tracers.LossMaxActive | tracers.LossMapFull | tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
		inFlight: missThreads,
		waves:    2,
	},
	"agreement":   {check: agreement.check},
	"socket-read": {check: checkSocketRead},
}

// Every row has its checks, and every check its row.
func TestEveryRowChecked(t *testing.T) {
	checked := map[string]bool{}
	for _, c := range []map[string]scenario{vfsReadChecks, coverageChecks(), manyFunctionChecks()} {
		for name := range c {
			checked[name] = true
		}
	}
	for _, r := range Rows() {
		assert.True(t, checked[r.Name], "row %s has no checks", r.Name)
		delete(checked, r.Name)
	}
	assert.Empty(t, checked, "checks of no row")
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
				t.Run(sc.Name, func(t *testing.T) { sc.run(t, m) })
			}
		})
	}
}
