package peers

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/histogram"
)

// Output of funclatency-libbpf -k -u (libbpf-tools 0.37) in the 7.2 guest.
const funclatencyOut = `Tracing vfs_read.  Hit Ctrl-C to exit

     usec                : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 531      |***************                         |
         4 -> 7          : 238      |*******                                 |
         8 -> 15         : 1342     |****************************************|
     32768 -> 65535      : 1        |                                        |
Exiting trace of vfs_read
`

func TestParseFunclatency(t *testing.T) {
	res, err := parseFunclatency([]byte(funclatencyOut))
	require.NoError(t, err)
	assert.Equal(t, uint64(2112), res.Calls)
	h, err := res.Slots()
	require.NoError(t, err)
	assert.Equal(t, uint64(531), h[1])
	assert.Equal(t, uint64(1342), h[3])
	assert.Equal(t, uint64(1), h[15])

	_, err = parseFunclatency([]byte("Tracing vfs_read.  Hit Ctrl-C to exit\n"))
	assert.ErrorContains(t, err, "no µs histogram")
}

func TestParseBpftrace(t *testing.T) {
	out := `{"type": "attached_probes", "data": {"probes": 3}}
{"type": "hist", "data": {"@us": [{"max": -1, "count": 0}, {"min": 0, "max": 0, "count": 2}, {"min": 1, "max": 1, "count": 3}, {"min": 2, "max": 3, "count": 4}, {"min": 32768, "max": 65535, "count": 1}]}}
{"type": "map", "data": {"@calls": 10}}
`
	res, err := parseBpftrace([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, uint64(10), res.Calls)
	h, err := res.Slots()
	require.NoError(t, err)
	assert.Equal(t, histogram.Log2{0: 5, 1: 4, 15: 1}, h)

	_, err = parseBpftrace([]byte(`{"type": "map", "data": {"@calls": 10}}`))
	assert.ErrorContains(t, err, "no @us histogram")
	_, err = parseBpftrace([]byte(`{"type": "hist", "data": {"@us": [{"max": -1, "count": 2}]}}` + "\n"))
	assert.ErrorContains(t, err, "below 0")
}

func TestParsePerf(t *testing.T) {
	out := `#   DURATION     |      COUNT | GRAPH                                          |
     0 -    1 us |          3 | ##                                             |
     1 -    2 us |          4 | ###                                            |
     2 -    4 us |          5 | ####                                           |
    32 -   64 ms |          1 | #                                              |
     1 - ...   s |          0 |                                                |
`
	res, err := parsePerf([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, uint64(13), res.Calls)
	assert.Equal(t, Bucket{LowUS: 32 * 1024, HighUS: 64 * 1024, Count: 1}, res.Buckets[3])
	assert.Equal(t, uint64(math.MaxUint64), res.Buckets[4].HighUS)
	h, err := res.Slots()
	require.NoError(t, err)
	assert.Equal(t, histogram.Log2{0: 7, 1: 5, 15: 1}, h)

	_, err = parsePerf([]byte("No data found\n"))
	assert.ErrorContains(t, err, "no histogram")
}

func TestSlotsRefusesStraddlingBucket(t *testing.T) {
	_, err := Result{Buckets: []Bucket{{LowUS: 2, HighUS: 8, Count: 1}}}.Slots()
	assert.ErrorContains(t, err, "spans more than log2 slot 1")
}

func TestRootFromEnv(t *testing.T) {
	t.Setenv(RootEnv, "")
	_, err := RootFromEnv()
	assert.ErrorIs(t, err, ErrNoRoot)
	assert.ErrorContains(t, err, RootEnv+" is not set")

	dir := t.TempDir()
	t.Setenv(RootEnv, dir)
	_, err = RootFromEnv()
	assert.ErrorContains(t, err, "is not a complete peer root")

	require.NoError(t, writeFile(dir+"/"+versionsFile, "bpftrace 0.27.1-1\nlinux-perf 7.2.13-1\n"))
	r, err := RootFromEnv()
	require.NoError(t, err)
	assert.Equal(t, "tracebench-peer-bpftrace: 0.27.1-1\ntracebench-peer-linux-perf: 7.2.13-1", strings.Join(r.VersionLines(), "\n"))
}

func TestLookup(t *testing.T) {
	for _, p := range All() {
		got, err := Lookup(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p.Name, got.Name)
	}
	_, err := Lookup("dtrace")
	assert.ErrorContains(t, err, `unknown peer "dtrace"`)
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func TestCompareHistograms(t *testing.T) {
	lat := []time.Duration{3 * time.Microsecond, 1000 * time.Microsecond, 50 * time.Millisecond}
	tb := histogram.Log2{1: 1, 9: 1, 15: 1}
	assert.Empty(t, compareHistograms(tb, tb, lat, true))
	// 3 µs is within the skew of 4 µs: it may move up to slot 2.
	up := histogram.Log2{2: 1, 9: 1, 15: 1}
	assert.Empty(t, compareHistograms(tb, up, lat, true))
	// Moving down is refused for an enclosing peer, allowed otherwise.
	down := histogram.Log2{0: 1, 9: 1, 15: 1}
	assert.Len(t, compareHistograms(tb, down, lat, true), 1)
	assert.Empty(t, compareHistograms(tb, down, lat, false))
	// The 50 ms call is far from 32768 µs: it cannot have moved below.
	far := histogram.Log2{1: 1, 9: 1, 14: 1}
	errs := compareHistograms(tb, far, lat, false)
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "at 32.768ms: 1 calls moved across the boundary, only 0 were timed within")
}

func TestParseBpftraceFunctions(t *testing.T) {
	out := `{"type": "attached_probes", "data": {"probes": 2}}
{"type": "hist", "data": {"@us": {"vfs_read": [{"min": 0, "max": 0, "count": 7}]}}}
{"type": "map", "data": {"@calls": {"vfs_read": 7, "ksys_read": 5}}}
`
	res, err := parseBpftraceFunctions([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Probes)
	assert.Equal(t, map[string]uint64{"vfs_read": 7, "ksys_read": 5}, res.Functions)
	assert.Equal(t, uint64(12), res.Calls)

	_, err = parseBpftraceFunctions([]byte(`{"type": "map", "data": {"@calls": {"vfs_read": 7}}}` + "\n"))
	assert.ErrorContains(t, err, "never said it attached")
	res, err = parseBpftraceFunctions([]byte(`{"type": "attached_probes", "data": {"probes": 2}}` + "\n"))
	require.NoError(t, err, "no function called: no @calls printed")
	assert.Empty(t, res.Functions)
	assert.Zero(t, res.Calls)
	_, err = parseBpftraceFunctions([]byte(`{"type": "attached_probes", "data": {"probes": 2}}
{"type": "map", "data": {"@calls": 7}}
`))
	assert.ErrorContains(t, err, "map @calls")
}

func TestWildcardScriptKeysByThreadAndFunction(t *testing.T) {
	for _, w := range Wildcards() {
		p := w.On([]string{"vfs_read", "anon_pipe_read"})
		cmd := p.command(42)
		script := cmd[len(cmd)-1]
		// A key of the thread alone loses every outer call of two nested
		// traced functions (bcc #2548).
		assert.Regexp(t, `@start\[tid, (func|@depth\[tid\])\] = nsecs`, script, w.Name)
		assert.Contains(t, cmd, "/tmp/"+traceableFile, w.Name)
		assert.Equal(t, "vfs_read\nanon_pipe_read\n", p.files[traceableFile], w.Name)
		assert.NotEmpty(t, w.Kinds, w.Name)
	}
}
