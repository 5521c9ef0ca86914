package scenarios

import (
	"math"
	"os"
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

var scenarios = append([]scenario{
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
	{
		name: "drops",
		doc:  "one-page ring buffer, 0 threshold, 4 threads reading flat out, consumer paused: drops are counted exactly",
		plan: workload.Plan{workload.FileReads(1000, 64).OnThreads(4)},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, RingBufferBytes: os.Getpagesize()}
		},
		check: func(t *testing.T, r run) {
			assert.GreaterOrEqual(t, r.stats.Calls+r.stats.Missed, uint64(len(r.truth.Reads)), "calls + missed >= workload reads")
			assert.Equal(t, r.stats.Calls, r.stats.Slow, "slow == calls")
			assert.Positive(t, r.stats.Dropped, "dropped")
		},
		// Trampoline programs run preemptible (migration disabled only):
		// a thread preempted inside one holds the program's per-CPU
		// recursion guard, and the kernel skips the program for another
		// thread entering vfs_read on that CPU (seen in the 7.2 guest:
		// hundreds of the 4000 reads). A skipped fexit leaves its thread's
		// entry until that thread's next read overwrites it, or, in task
		// local storage, until the thread exits (the helper has by
		// Drain). kprobe handlers run with preemption off and miss none
		// here.
		per: map[string]expect{
			"fsession":                 {mayMiss: true},
			"fentry-fexit":             {mayMiss: true, leftBehind: between{0, 4}},
			"fentry-fexit-taskstorage": {mayMiss: true},
			"fsession-multi":           {mayMiss: true},
		},
	},
	{
		name:   "errors",
		doc:    "EISDIR, EAGAIN and EINTR reads, 0 threshold: errors == injected, each event carries vfs_read's negative errno",
		plan:   errorPlan,
		config: helperOnly(0),
		check: func(t *testing.T, r run) {
			assert.Equal(t, uint64(countErrors(r.truth)), r.stats.Errors, "errors == injected")
			assert.ElementsMatch(t, expectedErrors(r.truth), errorEvents(r.events), "error events (requested, result)")
		},
	},
	{
		name:   "slow-eintr",
		doc:    "10 ms threshold: the read interrupted after 50 ms is both an error and slow; the fast failures are errors only",
		plan:   errorPlan,
		config: helperOnly(10 * time.Millisecond),
		check: func(t *testing.T, r run) {
			assert.Equal(t, uint64(countErrors(r.truth)), r.stats.Errors, "errors == injected")
			interrupted := r.truth.Of(workload.InterruptedRead)
			assert.ElementsMatch(t, expectedErrors(workload.Result{Reads: interrupted}), errorEvents(r.events), "slow error events")
			assertLatencies(t, r, interrupted, workload.DefaultPipeDelay)
		},
	},
	{
		name: "threads",
		doc:  "TGID filter, 4 threads of file reads and 3 of delayed pipe reads: every thread's reads count, events carry thread pid and process tgid",
		plan: workload.Plan{
			workload.FileReads(50, 4096).OnThreads(4),
			workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(3),
		},
		config: helperOnly(0),
		check:  checkThreads,
		// Seven threads on two CPUs: the trampoline recursion guard may
		// skip some calls, as in "drops" (counted in Stats.Missed).
		per: map[string]expect{
			"fsession":                 {mayMiss: true},
			"fentry-fexit":             {mayMiss: true, leftBehind: between{0, 7}},
			"fentry-fexit-taskstorage": {mayMiss: true},
			"fsession-multi":           {mayMiss: true},
		},
	},
	{
		name:   "killed-reader",
		doc:    "SIGKILL of a process whose 2 threads are blocked in a pipe read: the reads still return through vfs_read (-ERESTARTSYS), no state is left",
		plan:   workload.Plan{workload.KilledReads(2, workload.DefaultPipeDelay)},
		config: helperOnly(10 * time.Millisecond),
		check: func(t *testing.T, r run) {
			assert.ElementsMatch(t, expectedErrors(r.truth), errorEvents(r.events), "killed reads' events")
			assertLatencies(t, r, r.truth.Reads, workload.DefaultPipeDelay)
		},
		// Stated for each mechanism although equal: the issue expected
		// the hash-map designs to leak here, the kernel says otherwise.
		per: map[string]expect{
			"fsession": {}, "fentry-fexit": {}, "kprobe-kretprobe": {},
			"kprobe-session": {}, "fentry-fexit-taskstorage": {}, "fsession-multi": {},
		},
	},
	{
		name: "kretprobe-misses",
		doc:  "maxactive 1, 4 threads blocked in pipe reads at once: kretprobe misses the returns beyond maxactive, the others miss none",
		plan: workload.Plan{workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads)},
		config: func(helper uint32) tracers.Config {
			return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, KretprobeMaxActive: 1}
		},
		check: checkMisses,
		// The kprobe half stores an entry for every read; the returns the
		// kretprobe missed leave theirs behind: all but the one holding
		// the single instance, or all when another process's read held
		// it as the helper's readers entered.
		per: map[string]expect{"kprobe-kretprobe": {leftBehind: between{missThreads - 1, missThreads}, mayMiss: true}},
	},
	{
		name:   "agreement",
		doc:    "the same deterministic workload gives every mechanism the same calls, errors and slow reads",
		plan:   agreementPlan,
		config: helperOnly(10 * time.Millisecond),
		check:  agreement.check,
	},
	{
		name:   "socket-read",
		doc:    "10 ms threshold: a TCP read(2) on loopback in a private network namespace, answered 50 ms after the reader blocked, is the one slow read, its latency between the delay and the user-space duration",
		plan:   workload.Plan{workload.FileReads(16, 4096), workload.DelayedSocketReads(1, workload.DefaultPipeDelay)},
		config: helperOnly(10 * time.Millisecond),
		check:  checkSocketRead,
	},
}, coverageScenarios()...)

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
