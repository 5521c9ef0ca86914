package workload

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/testenv"
)

func TestMain(m *testing.M) {
	RunHelperIfRequested()
	runParentIfRequested()
	RunRoleIfRequested(roleEnv, "test role", func(value string) error {
		if value != "ok" {
			return fmt.Errorf("asked for %q", value)
		}
		return nil
	})
	os.Exit(m.Run())
}

// roleEnv makes this test binary play TestRunRoleIfRequested's role.
const roleEnv = "TRACEBENCH_WORKLOAD_TEST_ROLE"

// A role that returns nil exits 0; one that fails exits 1, naming itself
// and the error.
func TestRunRoleIfRequested(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for value, want := range map[string]struct {
		exit   int
		stderr string
	}{"ok": {0, ""}, "": {1, "test role: asked for \"\"\n"}, "fail": {1, "test role: asked for \"fail\"\n"}} {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), roleEnv+"="+value)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.True(t, err == nil || errors.As(err, &exit), "%q: %v", value, err)
		assert.Equal(t, want.exit, cmd.ProcessState.ExitCode(), "%q", value)
		assert.Equal(t, want.stderr, stderr.String(), "%q", value)
	}
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		plan    Plan
		wantErr string
	}{
		{Plan{FileReads(64, 4096), DelayedPipeReads(1, DefaultPipeDelay)}, ""},
		{Plan{{Op: "splice", Count: 1, Size: 1}}, `step 0: unknown op "splice"`},
		{Plan{FileReads(0, 4096)}, "step 0 (file-read): count 0 is not positive"},
		{Plan{FileReads(1, 1), FileReads(1, -1)}, "step 1 (file-read): size -1 bytes is not positive"},
		{Plan{{Op: DelayedPipeRead, Count: 1, Size: 2}},
			"step 0 (delayed-pipe-read): size 2 bytes, pipe reads are 1 byte"},
		{Plan{DelayedPipeReads(1, -time.Millisecond)}, "step 0 (delayed-pipe-read): delay -1ms is negative"},
		{Plan{KilledReads(1, 0), FileReads(1, 1)}, "step 0 (killed-read): must be the last step, with count 1"},
		{Plan{FileReads(1, 1).OnThreads(-1)}, "step 0 (file-read): -1 threads"},
		{Plan{DelayedSocketReads(1, 0).OnThreads(2)},
			"step 0 (delayed-socket-read): 2 threads, socket reads are the main thread's"},
		{Plan{FileReadsBy(MmapRead, 1, 0)}, "step 0 (mmap): size 0 bytes is not positive"},
		{Plan{PipeReads(pipeCapacity + 1)}, "step 0 (pipe-read): 65537 bytes, more than a pipe holds (65536)"},
	}
	for _, tt := range tests {
		err := tt.plan.Validate()
		if tt.wantErr == "" {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, tt.wantErr)
		}
	}
}

// TestGroundTruth runs a real helper: every planned read is reported with
// its result, and the writer's delay bounds the pipe read from below.
func TestGroundTruth(t *testing.T) {
	const delay = 20 * time.Millisecond
	p, err := Start(Plan{FileReads(8, 512), DelayedPipeReads(2, delay), FileReads(3, 100)})
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Run(time.Minute)
	require.NoError(t, err)

	assert.Equal(t, int(p.TGID()), res.TGID)
	require.Len(t, res.Reads, 13)
	require.Equal(t, map[int]bool{p.MainTID(): true}, res.TIDs(), "all reads from the one locked main thread")
	for i, rd := range res.Reads {
		switch {
		case i < 8:
			assert.Equal(t, Read{Step: 0, Op: FileRead, TID: rd.TID, Requested: 512, Result: 512,
				Duration: rd.Duration}, rd)
		case i < 10:
			assert.Equal(t, Read{Step: 1, Op: DelayedPipeRead, TID: rd.TID, Requested: 1, Result: 1,
				Duration: rd.Duration}, rd)
			assert.GreaterOrEqual(t, rd.Duration, delay, "pipe read %d", i)
		default:
			assert.Equal(t, Read{Step: 2, Op: FileRead, TID: rd.TID, Requested: 100, Result: 100,
				Duration: rd.Duration}, rd)
		}
	}
	assert.Len(t, res.Of(DelayedPipeRead), 2)
}

// A filled pipe's reads return at once, one byte each; WhenBlocked sees
// the blocked readers of each blocking step before their reads end.
func TestPipeReadsAndWhenBlocked(t *testing.T) {
	const delay = 20 * time.Millisecond
	p, err := Start(Plan{PipeReads(5), DelayedPipeReads(2, delay).OnThreads(3)})
	require.NoError(t, err)
	defer p.Close()
	var seen [][]int
	p.WhenBlocked(func(step int, tids []int) error {
		assert.Equal(t, 1, step, "the blocking step")
		queued, err := p.pipeQueued()
		assert.Zero(t, queued, "nothing written to the blocked readers yet (%v)", err)
		seen = append(seen, slices.Sorted(slices.Values(tids)))
		return nil
	})
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	for _, rd := range res.Of(PipeRead) {
		assert.Equal(t, int64(1), rd.Result)
		assert.Less(t, rd.Duration, delay, "a filled pipe's read does not block")
	}
	assert.Len(t, res.Of(PipeRead), 5)
	readers := map[int]bool{}
	for _, rd := range res.Of(DelayedPipeRead) {
		readers[rd.TID] = true
	}
	require.Len(t, seen, 2, "one call per read of each reader")
	for _, tids := range seen {
		assert.Equal(t, slices.Sorted(maps.Keys(readers)), tids, "the step's readers, blocked")
	}

	p, err = Start(Plan{DelayedPipeReads(1, delay)})
	require.NoError(t, err)
	defer p.Close()
	p.WhenBlocked(func(int, []int) error { return errors.New("detach failed") })
	_, err = p.Run(time.Minute)
	assert.EqualError(t, err, "step 0 (delayed-pipe-read): detach failed")
}

func TestHelperFailureIsReported(t *testing.T) {
	p, err := Start(Plan{FileReads(1, 1)})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(p.dir)) // the helper cannot open its data file
	_, err = p.Run(time.Minute)
	assert.ErrorContains(t, err, "open "+p.dir+"/data")
	assert.NoError(t, p.Close())
}

// TestFailingAndThreadedReads checks the ground truth of the error
// injections and of a multi-thread step.
func TestFailingAndThreadedReads(t *testing.T) {
	const delay = 10 * time.Millisecond
	p, err := Start(Plan{DirReads(2), EmptyPipeReads(3), InterruptedReads(2, delay), FileReads(5, 256).OnThreads(3),
		DelayedPipeReads(1, delay).OnThreads(2)})
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Run(time.Minute)
	require.NoError(t, err)

	results := func(op Op) (out []int64) {
		for _, rd := range res.Of(op) {
			out = append(out, rd.Result)
		}
		return out
	}
	assert.Equal(t, []int64{-int64(unix.EISDIR), -int64(unix.EISDIR)}, results(DirRead))
	assert.Equal(t, []int64{-int64(unix.EAGAIN), -int64(unix.EAGAIN), -int64(unix.EAGAIN)}, results(EmptyPipeRead))
	assert.Equal(t, []int64{-int64(unix.EINTR), -int64(unix.EINTR)}, results(InterruptedRead))
	for _, rd := range res.Of(InterruptedRead) {
		assert.GreaterOrEqual(t, rd.Duration, delay, "interrupted read blocked until the signal")
	}
	assert.Len(t, results(FileRead), 15)
	assert.Equal(t, []int64{1, 1}, results(DelayedPipeRead))
	threads := map[int]int{}
	for _, rd := range res.Of(FileRead) {
		assert.Equal(t, int64(256), rd.Result)
		threads[rd.TID]++
	}
	assert.Equal(t, []int{5, 5, 5}, slices.Collect(maps.Values(threads)), "5 reads on each of 3 threads")
	assert.NotContains(t, threads, res.Reads[0].TID, "worker threads are not the main thread")
}

func TestKilledRead(t *testing.T) {
	p, err := Start(Plan{KilledReads(2, 5*time.Millisecond)})
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	assert.True(t, res.Killed)
	require.Len(t, res.Reads, 2)
	assert.Len(t, res.TIDs(), 2)
	for _, rd := range res.Reads {
		assert.GreaterOrEqual(t, rd.Duration, 5*time.Millisecond, "upper bound covers the delay")
	}
}

// TestCoverageReads checks that every coverage op really reads the file:
// each read returns the bytes asked for.
func TestCoverageReads(t *testing.T) {
	const size = 3 * 4096
	ops := []Op{FileRead, PreadRead, ReadvRead, SendfileRead, MmapRead, IoUringRead}
	var plan Plan
	for _, op := range ops {
		plan = append(plan, FileReadsBy(op, 2, size))
	}
	if err := plan.Supported(); errors.Is(err, ErrUnavailable) {
		t.Logf("without io_uring: %v", err)
		plan = plan[:len(plan)-1]
	} else {
		require.NoError(t, err)
	}
	p, err := Start(plan)
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	for _, step := range plan {
		reads := res.Of(step.Op)
		require.Len(t, reads, 2, "%s", step.Op)
		for _, rd := range reads {
			assert.Equal(t, int64(size), rd.Result, "%s", step.Op)
		}
	}
}

// TestSocketRead: the helper reads a TCP socket in a namespace of its own,
// the writer's delay bounds the read from below, and Close leaves nothing
// holding the namespace.
func TestSocketRead(t *testing.T) {
	testenv.NetNS.Require(t)
	const delay = 20 * time.Millisecond
	p, err := Start(Plan{DelayedSocketReads(2, delay), DelayedPipeReads(1, delay)})
	require.NoError(t, err)
	defer p.Close()
	ino := p.NetNS()
	holders, err := NetNSHolders(ino)
	require.NoError(t, err)
	require.NotEmpty(t, holders, "the live namespace is seen held")
	inNS, err := os.Readlink(fmt.Sprintf("/proc/%d/task/%d/ns/net", p.TGID(), p.TGID()))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("net:[%d]", ino), inNS, "the helper's main thread is in the namespace")

	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	reads := res.Of(DelayedSocketRead)
	require.Len(t, reads, 2)
	for _, rd := range reads {
		assert.Equal(t, Read{Step: 0, Op: DelayedSocketRead, TID: rd.TID, Requested: SocketReadSize, Result: 1,
			Duration: rd.Duration}, rd)
		assert.GreaterOrEqual(t, rd.Duration, delay)
	}
	require.NoError(t, p.Close())
	holders, err = NetNSHolders(ino)
	require.NoError(t, err)
	assert.Empty(t, holders, "namespace held after Close")
}

// Every round of a blocking step on many threads finds all of them
// blocked: a thread that took a round's byte cannot take another of the
// same round (without a barrier between rounds one did, and the last round
// waited for a thread that had finished).
func TestBlockingRoundsOnManyThreads(t *testing.T) {
	const rounds, threads = 40, 4
	p, err := Start(Plan{DelayedPipeReads(rounds, 0).OnThreads(threads)})
	require.NoError(t, err)
	defer p.Close()
	blocked := 0
	p.WhenBlocked(func(_ int, tids []int) error {
		assert.Len(t, tids, threads, "round %d", blocked)
		blocked++
		return nil
	})
	res, err := p.Run(time.Minute)
	require.NoError(t, err)
	assert.Equal(t, rounds, blocked)
	perThread := map[int]int{}
	for _, rd := range res.Reads {
		perThread[rd.TID]++
	}
	assert.Len(t, perThread, threads)
	for tid, n := range perThread {
		assert.Equal(t, rounds, n, "reads of thread %d", tid)
	}
}
