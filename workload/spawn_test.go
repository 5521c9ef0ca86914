package workload

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/poll"
)

func TestSpawnValidate(t *testing.T) {
	for _, tt := range []struct {
		plan    Plan
		wantErr string
	}{
		{Plan{FileReads(2, 8).OnEarlyThreads(3), FileReads(1, 8).OnFreshThreads(5).WithGap(time.Millisecond)}, ""},
		{Plan{DelayedPipeReads(1, 0).OnEarlyThreads(2)}, ""},
		{Plan{DelayedPipeReads(1, 0).OnFreshThreads(2)}, "step 0 (delayed-pipe-read): fresh threads never block at once"},
		{Plan{FileReads(1, 8).WithGap(-time.Second)}, "step 0 (file-read): gap -1s is negative"},
		{Plan{{Op: FileRead, Count: 1, Size: 1, Spawn: "later"}}, `step 0 (file-read): unknown spawn "later"`},
		{Plan{DelayedSocketReads(1, 0).OnEarlyThreads(1)},
			`step 0 (delayed-socket-read): spawn "early", socket reads are the main thread's`},
	} {
		err := tt.plan.Validate()
		if tt.wantErr == "" {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, tt.wantErr)
		}
	}
}

// TestEarlyThreads: an early step's threads exist before Run, a step's
// own threads do not, and neither is the main thread.
func TestEarlyThreads(t *testing.T) {
	p, err := Start(Plan{FileReads(2, 64).OnEarlyThreads(3), FileReads(2, 64).OnThreads(3)})
	require.NoError(t, err)
	defer p.Close()
	before, err := p.Threads()
	require.NoError(t, err)
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	require.Len(t, res.Reads, 12)

	threadsOf := func(step int) map[int]bool {
		tids := map[int]bool{}
		for _, rd := range res.Reads {
			if rd.Step == step {
				tids[rd.TID] = true
			}
		}
		return tids
	}
	early, late := threadsOf(0), threadsOf(1)
	assert.Len(t, early, 3)
	assert.Len(t, late, 3)
	for tid := range early {
		assert.Contains(t, before, tid, "early thread %d existed before Run (threads then: %v)", tid, before)
		assert.NotEqual(t, res.TGID, tid, "an early thread is not the main thread")
	}
	for tid := range late {
		assert.NotContains(t, early, tid)
	}
}

// TestFreshThreads: every fresh thread is new and reads Count times, with
// at least the gap between two of its reads.
func TestFreshThreads(t *testing.T) {
	const threads, gap = 40, 2 * time.Millisecond
	p, err := StartWith(Plan{FileReads(2, 64).OnFreshThreads(threads).WithGap(gap)}, Options{Linger: true})
	require.NoError(t, err)
	defer p.Close()
	before, err := p.Threads()
	require.NoError(t, err)
	start := time.Now()
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	require.Len(t, res.Reads, 2*threads)
	assert.Len(t, res.TIDs(), threads, "one thread ID per fresh thread")
	// The Go runtime may lock one onto a thread it made earlier and left
	// idle (never the main thread); that thread then exits too.
	reused := 0
	for tid := range res.TIDs() {
		if slices.Contains(before, tid) {
			reused++
			assert.NotEqual(t, res.TGID, tid)
		}
	}
	assert.Less(t, reused, len(before), "threads of before Run reused: %d of %v", reused, before)
	// A locked thread exits after its goroutine has returned: wait for it.
	var alive []int
	require.NoError(t, poll.Until(time.Now().Add(10*time.Second), pollInterval, "fresh threads to exit", func() (bool, error) {
		after, err := p.Threads() // lingering: the helper is still there
		alive = slices.DeleteFunc(after, func(tid int) bool { return !res.TIDs()[tid] })
		return len(alive) == 0, err
	}), "fresh threads still alive after their step: %v", alive)
	// Each thread spins gap between its two reads; freshParallel at once.
	assert.GreaterOrEqual(t, time.Since(start), threads/freshParallel*gap)
}

// TestLingerAndPIDNamespace: a lingering helper still runs after Run and
// exits cleanly on Close; in its own PID namespace it is PID 1 there.
func TestLingerAndPIDNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("CLONE_NEWPID needs CAP_SYS_ADMIN; running as euid %d", os.Geteuid())
	}
	p, err := StartWith(Plan{FileReads(3, 64), FileReads(1, 64).OnEarlyThreads(2)}, Options{PIDNamespace: true, Linger: true})
	require.NoError(t, err)
	ids, err := p.Threads()
	require.NoError(t, err)
	assert.Contains(t, ids, 1, "the main thread is PID 1 of its namespace")
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 1, res.TGID)
	assert.Len(t, res.Reads, 5)
	for tid := range res.TIDs() {
		assert.True(t, slices.Contains(ids, tid), "read on thread %d, not one of %v", tid, ids)
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d", p.TGID()))
	assert.NoError(t, err, "the lingering helper still runs after Run")
	assert.NoError(t, p.Close())
	assert.NotNil(t, p.cmd.ProcessState)
	assert.True(t, p.cmd.ProcessState.Success(), "exited cleanly when told: %v", p.cmd.ProcessState)
}
