package peers

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	// perf 7.2.13: 3 reads interrupted 50 ms after they blocked (52 ms
	// by its statistics), in the bucket it labels "16 - 32 ms".
	res, err := parsePerf(recorded(t, "perf-ftrace-graph.interrupted-read.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint64(3), res.Calls)
	require.Len(t, res.Buckets, 22)
	assert.Equal(t, Bucket{LowUS: 16 * 1024, HighUS: 32 * 1024, Count: 3}, res.Buckets[15])
	assert.Equal(t, Bucket{LowUS: 0, HighUS: 1}, res.Buckets[0])
	// The open-ended last bucket ends at the statistics' max time.
	assert.Equal(t, Bucket{LowUS: 1 << 20, HighUS: 1<<20 + 1}, res.Buckets[21])

	res, err = parsePerf(recorded(t, "perf-ftrace-graph.long-read.txt"))
	require.NoError(t, err)
	assert.Equal(t, Bucket{LowUS: 1 << 20, HighUS: 4501962 + 1, Count: 1}, res.Buckets[21], "a 4.5 s read")

	_, err = parsePerf([]byte("No data found\n"))
	assert.ErrorContains(t, err, "no histogram")
	ns := strings.Replace(string(recorded(t, "perf-ftrace-graph.long-read.txt")), "    0 -    1 us", "    0 -    1 ns", 1)
	_, err = parsePerf([]byte(ns))
	assert.ErrorContains(t, err, "histogram in ns, want µs")
	miscount := strings.Replace(string(recorded(t, "perf-ftrace-graph.long-read.txt")), "count:                    1",
		"count:                    2", 1)
	_, err = parsePerf([]byte(miscount))
	assert.ErrorContains(t, err, "the histogram holds 1 calls, the statistics count 2")
}

// recorded returns a tool's output recorded in the 7.2 guest.
func recorded(t *testing.T, name string) []byte {
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// TestParseRecorded parses outputs recorded in the 7.2 guest, and every
// one of them cut short at a line boundary: a cut output either fails to
// parse or parses to the same calls, never to fewer.
func TestParseRecorded(t *testing.T) {
	for _, tt := range []struct {
		file    string
		parse   func([]byte) (Result, error)
		calls   uint64
		notices int
	}{
		{"funclatency-kprobe.kretprobe-maxactive.txt", parseFunclatency, 10, 0},
		{"funclatency-fentry.blocked-over-map.txt", parseFunclatency, 4199, 0},
		{"bpftrace-kprobe.kretprobe-maxactive.txt", parseBpftrace, 12, 0},
		{"bpftrace-fentry.blocked-over-map.txt", parseBpftrace, 4096, 103},
		{"perf-ftrace-graph.interrupted-read.txt", parsePerf, 3, 0},
		{"perf-ftrace-graph.long-read.txt", parsePerf, 1, 0},
	} {
		t.Run(tt.file, func(t *testing.T) {
			out := recorded(t, tt.file)
			full, err := tt.parse(out)
			require.NoError(t, err)
			assert.Equal(t, tt.calls, full.Calls)
			var sum uint64
			for _, b := range full.Buckets {
				sum += b.Count
			}
			assert.Equal(t, full.Calls, sum, "the histogram sums to the count")
			// Notices come from the output after the tool was attached:
			// bpftrace's warnings about the script come before.
			attached := max(bytes.Index(out, []byte("attached_probes")), 0)
			assert.Len(t, lossNotices(out[attached:]), tt.notices)
			p := Peer{parse: tt.parse}
			res, err := p.result(out, attached)
			require.NoError(t, err)
			assert.Equal(t, full.Calls, res.Calls)
			assert.Len(t, res.Notices, tt.notices)
			_, err = p.result(out[:len(out)-2], attached)
			assert.EqualError(t, err, "output cut short in a line")
			for cut := 0; cut < len(out); cut++ {
				if cut > 0 && out[cut-1] != '\n' {
					continue
				}
				part, err := tt.parse(out[:cut])
				if err == nil {
					require.Equal(t, full.Calls, part.Calls, "cut at byte %d parsed to fewer calls", cut)
					require.Equal(t, full.Buckets, part.Buckets, "cut at byte %d", cut)
				}
			}
		})
	}
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
		if p.Package != "bpftrace" {
			continue
		}
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

// bcc's funclatency is given a regular expression matching the set's
// names exactly, and keeps entry times on a stack per thread (-l): by
// thread alone, a traced call inside another overwrites the outer one's.
func TestBccPatternIsTheSet(t *testing.T) {
	set := []string{"vfs_read", "dput.part.0", "__x64_sys_read"}
	cmd := bccFunclatency.On(set).command(42)
	assert.Contains(t, strings.Join(cmd, " "), fmt.Sprintf("-F -l %d -p 42 -r", BCCLevels))
	pattern := regexp.MustCompile(cmd[len(cmd)-1])
	for _, f := range set {
		assert.True(t, pattern.MatchString(f), f)
	}
	for _, f := range []string{"vfs_readv", "dput_part_0", "x_vfs_read", "dputXpartX0"} {
		assert.False(t, pattern.MatchString(f), "%s is not in the set", f)
	}
}

// A recorded run (7.2 guest): a process made 1000 reads of 1 byte of
// /dev/zero, each through ksys_read, vfs_read and read_zero.
func TestParseBccFunctions(t *testing.T) {
	out := recorded(t, "bcc-funclatency-pattern.zero-reads.txt")
	res, err := parseBccFunctions(out)
	require.NoError(t, err)
	assert.Equal(t, 8, res.Probes, "a kprobe and a kretprobe on each of 4 functions")
	for _, f := range []string{"ksys_read", "vfs_read", "read_zero"} {
		assert.Equal(t, uint64(1000), res.Functions[f], f)
	}
	var sum uint64
	for _, n := range res.Functions {
		sum += n
	}
	assert.Equal(t, sum, res.Calls)
	assert.Zero(t, res.Lost, "4 functions, each in a few log2 slots: the 64-entry table held them all")
	// A call timed (counted) whose histogram update found the table full.
	res, err = parseBccFunctions(bytes.Replace(out, []byte("count: 4001"), []byte("count: 4003"), 1))
	require.NoError(t, err)
	assert.Equal(t, uint64(2), res.Lost)
	_, err = parseBccFunctions(bytes.Replace(out, []byte("count: 4001"), []byte("count: 4000"), 1))
	assert.ErrorContains(t, err, "more than funclatency's count of 4000")
	_, err = parseBccFunctions(out[:bytes.Index(out, []byte(bccEnd))])
	assert.ErrorContains(t, err, "cut short")
}

func TestLossNotices(t *testing.T) {
	out := `{"type": "attached_probes", "count": 3, "data": {"probes": 3}}
{"type": "helper_error", "msg": "Argument list too long", "helper": "map_update_elem", "retcode": -7, "filename": "stdin", "line": 1, "col": 19}
{"type": "lost_events", "data": {"events": 12}}
{"type": "map", "data": {"@calls": 4096}}
lost 3509 events on CPU #1
WARNING: Map full; can't update element.
Tracing vfs_read.  Hit Ctrl-C to exit
`
	assert.Equal(t, []Notice{
		{Line: `{"type": "helper_error", "msg": "Argument list too long", "helper": "map_update_elem", "retcode": -7, "filename": "stdin", "line": 1, "col": 19}`, Calls: 1},
		{Line: `{"type": "lost_events", "data": {"events": 12}}`, Calls: 12},
		{Line: "lost 3509 events on CPU #1", Calls: 3509},
		{Line: "WARNING: Map full; can't update element."},
	}, lossNotices([]byte(out)))
	n, counted := noticeSum(lossNotices([]byte(out)))
	assert.False(t, counted, "the map-full warning does not say how many")
	assert.Zero(t, n)
	n, counted = noticeSum(lossNotices([]byte("lost 2 events on CPU #0\nlost 3 events on CPU #1\n")))
	assert.True(t, counted)
	assert.Equal(t, uint64(5), n)
}

// TestParseFsslower: recorded fsslower outputs (7.2 guest), the second an
// excerpt with its lost-events line.
func TestParseFsslower(t *testing.T) {
	res, err := parseFsslower(recorded(t, "fsslower-ext4.calls-per-tgid.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint64(200), res.Calls, "200 reads; the open is not one")
	// Printed "0.01" ms: 5-15 µs rounded, of whole µs; 197 of those, one
	// 0.02, two 0.03.
	assert.Equal(t, []Bucket{{LowUS: 5, HighUS: 16, Count: 197}, {LowUS: 15, HighUS: 26, Count: 1},
		{LowUS: 25, HighUS: 36, Count: 2}}, res.Buckets)

	out := recorded(t, "fsslower-ext4.recursion-preemption-excerpt.txt")
	res, err = fsslower.result(out, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(15), res.Calls)
	assert.Equal(t, []Bucket{{LowUS: 0, HighUS: 6, Count: 15}}, res.Buckets)
	assert.Equal(t, []Notice{{Line: "lost 2524 events on CPU #1", Calls: 2524}}, res.Notices)

	_, err = parseFsslower([]byte("Tracing ext4 operations... Hit Ctrl-C to end.\n"))
	assert.ErrorContains(t, err, "no \"LAT(ms)\" header")
}
