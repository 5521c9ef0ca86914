package peers

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/histogram"
	"tracebench/tracers"
)

// fakeTracer is a detached tracer with fixed counters and histogram.
type fakeTracer struct {
	stats tracers.Stats
	hist  histogram.Log2
}

func (f fakeTracer) ReadEvent(time.Time) (tracers.Event, error) { return tracers.Event{}, nil }
func (f fakeTracer) Stats() (tracers.Stats, error)              { return f.stats, nil }
func (f fakeTracer) Detach() error                              { return nil }
func (f fakeTracer) Close() error                               { return nil }
func (f fakeTracer) Histogram() (histogram.Log2, error)         { return f.hist, nil }
func (f fakeTracer) PerTGID() (tracers.TGIDTable, error)        { return tracers.TGIDTable{}, nil }

func TestBucketsOf(t *testing.T) {
	b := BucketsOf(histogram.Log2{0: 1, 3: 2, histogram.Slots - 1: 4})
	require.Len(t, b, histogram.Slots)
	assert.Equal(t, Bucket{LowUS: 0, HighUS: 2, Count: 1}, b[0])
	assert.Equal(t, Bucket{LowUS: 8, HighUS: 16, Count: 2}, b[3])
	assert.Equal(t, uint64(math.MaxUint64), b[histogram.Slots-1].HighUS, "the last slot is open-ended")
	res := Result{Buckets: b, Calls: 7}
	h, err := res.Slots()
	require.NoError(t, err)
	assert.Equal(t, histogram.Log2{0: 1, 3: 2, histogram.Slots - 1: 4}, h, "Slots inverts BucketsOf")
}

// TestOwnResult: tracebench's warnings become notices counting their
// calls, so a loss it reports is visible and one it does not is silent.
func TestOwnResult(t *testing.T) {
	truth := Truth{{Max: time.Millisecond}, {Max: time.Millisecond}, {Max: time.Millisecond}}
	res, missed, err := ownResult(fakeTracer{stats: tracers.Stats{Calls: 1, Missed: 90, Pending: 2}, hist: histogram.Log2{9: 1}})
	require.NoError(t, err)
	assert.Equal(t, uint64(90), missed)
	require.Len(t, res.Notices, 2)
	assert.Equal(t, uint64(2), res.Notices[1].Calls)
	assert.Equal(t, VisibleLoss, Classify(truth, res).Class)

	res, _, err = ownResult(fakeTracer{stats: tracers.Stats{Calls: 1}, hist: histogram.Log2{9: 1}})
	require.NoError(t, err)
	assert.Empty(t, res.Notices)
	assert.Equal(t, SilentLoss, Classify(truth, res).Class)

	_, _, err = ownResult(fakeTracer{stats: tracers.Stats{Calls: 2}, hist: histogram.Log2{9: 1}})
	assert.ErrorContains(t, err, "histogram holds 1 calls, the counters 2")
}

func TestCommandLine(t *testing.T) {
	p, err := Lookup("funclatency-kprobe")
	require.NoError(t, err)
	assert.Equal(t, "funclatency-libbpf -u -p $PID -k vfs_read", p.CommandLine(), "stdbuf left out, the PID a variable")
	p, err = Lookup("bpftrace-fentry")
	require.NoError(t, err)
	assert.Regexp(t, `^bpftrace -f json -B line -p \$PID -e 'fentry:vfs_read \{[^']*'$`, p.CommandLine(), "the script quoted")
}

// A tool that never shows it attached fails StartWithin's wait at its
// limit with ErrNotAttached, naming the tool.
func TestWaitReadyLimit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "output")
	require.NoError(t, os.WriteFile(out, []byte("compiling...\n"), 0o644))
	r := &Run{peer: Peer{Name: "slowtool", ready: func([]byte, int) (bool, error) { return false, nil }},
		out: out, done: make(chan error, 1)}
	began := time.Now()
	err := r.waitReady(1, 100*time.Millisecond)
	require.ErrorIs(t, err, ErrNotAttached)
	assert.ErrorContains(t, err, "slowtool")
	assert.Less(t, time.Since(began), 5*time.Second)
}
