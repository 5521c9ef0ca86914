package scenarios

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
	"tracebench/workload"
)

// seedPlan is the workload of the seed scenarios: fast page-cache reads and
// one pipe read answered DefaultPipeDelay after the reader blocked.
var seedPlan = workload.Plan{
	workload.FileReads(64, 4096),
	workload.DelayedPipeReads(1, workload.DefaultPipeDelay),
}

// noProcess is a TGID no process has (pid_max is at most 2^22).
const noProcess = math.MaxUint32

var scenarios = []scenario{
	{
		name:   "pid-filter-miss",
		doc:    "TGID filter matches no process: nothing counted, nothing reported",
		plan:   seedPlan,
		config: func(uint32) tracers.Config { return tracers.Config{TGID: noProcess} },
		check: func(t *testing.T, r run) {
			assert.Zero(t, r.stats.Calls, "calls")
			assert.Empty(t, r.events, "events")
		},
	},
	{
		name:   "high-threshold",
		doc:    "10 s threshold: every read counted, none slow",
		plan:   seedPlan,
		config: helperOnly(10 * time.Second),
		check: func(t *testing.T, r run) {
			assert.GreaterOrEqual(t, r.stats.Calls, uint64(len(r.truth.Reads)), "calls >= workload reads")
			assert.Zero(t, r.stats.Slow, "slow")
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
			assert.GreaterOrEqual(t, r.stats.Calls, uint64(len(r.truth.Reads)), "calls >= workload reads")
			assert.Equal(t, r.stats.Calls, r.stats.Slow, "slow == calls")
		},
	},
}

// helperOnly traces the workload helper's process with threshold.
func helperOnly(threshold time.Duration) func(uint32) tracers.Config {
	return func(helper uint32) tracers.Config {
		return tracers.Config{TGID: helper, Threshold: threshold}
	}
}

func checkSlowPipeRead(t *testing.T, r run) {
	pipeRead := r.truth.Of(workload.DelayedPipeRead)[0]
	var found bool
	for _, ev := range r.events {
		if ev.Requested == 1 && ev.Result == 1 {
			found = true
			assert.GreaterOrEqual(t, ev.Latency, workload.DefaultPipeDelay, "pipe read latency >= writer delay")
			assert.LessOrEqual(t, ev.Latency, pipeRead.Duration, "pipe read latency <= user-space duration")
		}
	}
	assert.True(t, found, "an event for the pipe read (requested 1, result 1) among %v", r.events)

	// A file read may be reported only if user space measured it at or
	// above the threshold too (under emulation that is rare, not never).
	var fileEvents, slowFileReads int
	for _, ev := range r.events {
		if ev.Requested == 4096 {
			fileEvents++
		}
	}
	for _, rd := range r.truth.Of(workload.FileRead) {
		if rd.Duration >= r.cfg.Threshold {
			slowFileReads++
		}
	}
	assert.LessOrEqual(t, fileEvents, slowFileReads, "file-read events <= file reads measured slow in user space")
}

func TestScenarios(t *testing.T) {
	requireRoot(t)
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, m) })
			}
		})
	}
}
