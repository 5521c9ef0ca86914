package workload

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	RunHelperIfRequested()
	os.Exit(m.Run())
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		plan    Plan
		wantErr string
	}{
		{Plan{FileReads(64, 4096), DelayedPipeReads(1, DefaultPipeDelay)}, ""},
		{Plan{{Op: "mmap", Count: 1, Size: 1}}, `step 0: unknown op "mmap"`},
		{Plan{FileReads(0, 4096)}, "step 0 (file-read): count 0 is not positive"},
		{Plan{FileReads(1, 1), FileReads(1, -1)}, "step 1 (file-read): size -1 bytes is not positive"},
		{Plan{{Op: DelayedPipeRead, Count: 1, Size: 2}}, "step 0 (delayed-pipe-read): size 2 bytes, pipe reads are 1 byte"},
		{Plan{DelayedPipeReads(1, -time.Millisecond)}, "step 0 (delayed-pipe-read): delay -1ms is negative"},
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
	require.Len(t, res.TIDs(), 1, "all reads from the one locked thread")
	for i, rd := range res.Reads {
		switch {
		case i < 8:
			assert.Equal(t, Read{Step: 0, Op: FileRead, TID: rd.TID, Requested: 512, Result: 512, Duration: rd.Duration}, rd)
		case i < 10:
			assert.Equal(t, Read{Step: 1, Op: DelayedPipeRead, TID: rd.TID, Requested: 1, Result: 1, Duration: rd.Duration}, rd)
			assert.GreaterOrEqual(t, rd.Duration, delay, "pipe read %d", i)
		default:
			assert.Equal(t, Read{Step: 2, Op: FileRead, TID: rd.TID, Requested: 100, Result: 100, Duration: rd.Duration}, rd)
		}
	}
	assert.Len(t, res.Of(DelayedPipeRead), 2)
}

func TestHelperFailureIsReported(t *testing.T) {
	p, err := Start(Plan{FileReads(1, 1)})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(p.dir)) // the helper cannot open its data file
	_, err = p.Run(time.Minute)
	assert.ErrorContains(t, err, "open "+p.dir+"/data")
	assert.NoError(t, p.Close())
}
