package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/histogram"
	"tracebench/tracers"
)

var (
	slowEvent = tracers.Event{Function: "vfs_read", PID: 4322, TGID: 4321, Requested: 1, Result: 1, Latency: 50_123_456 * time.Nanosecond, Comm: "tracebench.test"}
	errEvent  = tracers.Event{Function: "vfs_read", PID: 7, TGID: 7, Requested: 64, Result: -21, Latency: 12 * time.Millisecond, Comm: "my reader"}
	stats     = tracers.Stats{Calls: 25, Slow: 3, Errors: 2, Dropped: 1, Lost: 5, Missed: 4}

	// What ftrace-graph gives: no arguments or return value, at times no
	// TGID; no count of calls, errors or misses.
	blindEvent  = tracers.Event{Function: "vfs_read", PID: 9, TGID: 8, Latency: 20 * time.Millisecond, Comm: "cat", Unknown: tracers.FieldRequested | tracers.FieldResult}
	noTGIDEvent = tracers.Event{Function: "vfs_read", PID: 9, Latency: 20 * time.Millisecond, Comm: "cat", Unknown: tracers.FieldTGID | tracers.FieldRequested | tracers.FieldResult}
	blindStats  = tracers.Stats{Slow: 3, Dropped: 1,
		Unknown: tracers.FieldCalls | tracers.FieldErrors | tracers.FieldLost | tracers.FieldMissed | tracers.FieldPending}
)

func TestTextEvent(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(false, &out)
	require.NoError(t, p.event(slowEvent))
	require.NoError(t, p.event(errEvent))
	require.NoError(t, p.event(tracers.Event{Comm: ""}))
	assert.Equal(t, `EVENT function=vfs_read comm=tracebench.test tgid=4321 pid=4322 requested=1 result=1 latency_us=50123
EVENT function=vfs_read comm="my reader" tgid=7 pid=7 requested=64 result=-21 latency_us=12000
EVENT function=? comm="" tgid=0 pid=0 requested=0 result=0 latency_us=0
`, out.String())
}

func TestTextEventUnknown(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(false, &out)
	require.NoError(t, p.event(blindEvent))
	require.NoError(t, p.event(noTGIDEvent))
	assert.Equal(t, `EVENT function=vfs_read comm=cat tgid=8 pid=9 requested=? result=? latency_us=20000
EVENT function=vfs_read comm=cat tgid=? pid=9 requested=? result=? latency_us=20000
`, out.String())
}

// Each event names its function; requested is vfs_read's count argument,
// unknown for another function (tracers.Capabilities.OfFunction).
func TestEventOfAnotherFunction(t *testing.T) {
	var text, js bytes.Buffer
	ev := tracers.Event{Function: "anon_pipe_read", PID: 9, TGID: 9, Result: 1, Latency: 20 * time.Millisecond,
		Comm: "cat", Unknown: tracers.FieldRequested}
	require.NoError(t, newPrinter(false, &text).event(ev))
	require.NoError(t, newPrinter(true, &js).event(ev))
	assert.Equal(t, "EVENT function=anon_pipe_read comm=cat tgid=9 pid=9 requested=? result=1 latency_us=20000\n",
		text.String())
	assert.JSONEq(t, `{"type":"event","function":"anon_pipe_read","comm":"cat","tgid":9,"pid":9,"requested":null,`+
		`"result":1,"latency_us":20000,"latency_ns":20000000}`, js.String())
}

// perFunction are the counters of two functions on one link: missed is
// the link's, unknown for each.
var perFunction = tracers.Stats{Calls: 30, Slow: 4, Errors: 2, Missed: 1, PerFunction: []tracers.FunctionStats{
	{Function: "vfs_read", Calls: 20, Slow: 3, Errors: 2, Unknown: tracers.FieldMissed},
	{Function: "anon_pipe_read", Calls: 10, Slow: 1, Unknown: tracers.FieldMissed},
}}

func TestTextPerFunction(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(false, &out).summary(summary{Stats: perFunction, Events: 4}))
	assert.Equal(t, ""+
		"FUNCTION name=vfs_read calls=20 slow=3 errors=2 dropped=0 lost=0\n"+
		"FUNCTION name=anon_pipe_read calls=10 slow=1 errors=0 dropped=0 lost=0\n"+
		"SUMMARY calls=30 slow=4 errors=2 dropped=0 lost=0 events=4\n", out.String())

	out.Reset()
	one := tracers.Stats{Calls: 3, PerFunction: []tracers.FunctionStats{{Function: "vfs_read", Calls: 3}}}
	require.NoError(t, newPrinter(false, &out).summary(summary{Stats: one}))
	assert.Equal(t, "SUMMARY calls=3 slow=0 errors=0 dropped=0 lost=0 events=0\n", out.String(),
		"one function: the summary is its line")
}

func TestJSONPerFunction(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(true, &out).summary(summary{Mechanism: "m", Stats: perFunction, Events: 4}))
	assert.JSONEq(t, `{"type":"summary","mechanism":"m","calls":30,"slow":4,"errors":2,"dropped":0,"lost":0,`+
		`"events":4,"missed":1,"elapsed_s":0,"functions":[`+
		`{"function":"vfs_read","calls":20,"slow":3,"errors":2,"dropped":0,"lost":0,"missed":null},`+
		`{"function":"anon_pipe_read","calls":10,"slow":1,"errors":0,"dropped":0,"lost":0,"missed":null}]}`,
		out.String())
}

func TestTextSummaryUnknown(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(false, &out).summary(summary{Stats: blindStats, Events: 2}))
	assert.Equal(t, "SUMMARY calls=? slow=3 errors=? dropped=1 lost=? events=2\n", out.String())

	out.Reset()
	every := tracers.FieldCalls | tracers.FieldSlow | tracers.FieldErrors | tracers.FieldDropped | tracers.FieldLost
	require.NoError(t, newPrinter(false, &out).summary(summary{Stats: tracers.Stats{Unknown: every}, Events: 7}))
	assert.Equal(t, "SUMMARY calls=? slow=? errors=? dropped=? lost=? events=7\n", out.String())
}

func TestTextSummaryOnly(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(false, &out).summary(summary{Stats: stats, Events: 2}))
	assert.Equal(t, "SUMMARY calls=25 slow=3 errors=2 dropped=1 lost=5 events=2\n", out.String())
}

func TestTextHistogram(t *testing.T) {
	var h histogram.Log2
	h[0], h[2], h[15] = 20, 10, 3
	var out bytes.Buffer
	writeHistogram(&out, h)
	want := "" +
		"     usecs               : count    distribution\n" +
		"         0 -> 1          : 20       |****************************************|\n" +
		"         2 -> 3          : 0        |                                        |\n" +
		"         4 -> 7          : 10       |********************                    |\n"
	assert.True(t, strings.HasPrefix(out.String(), want), "got:\n%s", out.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Len(t, lines, 1+16, "header and slots 0..15, the last non-empty")
	assert.Equal(t, "     32768 -> 65535      : 3        |******                                  |", lines[16])
}

func TestTextHistogramOpenEnd(t *testing.T) {
	var h histogram.Log2
	h[histogram.Slots-1] = 1
	var out bytes.Buffer
	writeHistogram(&out, h)
	assert.True(t, strings.HasSuffix(out.String(), "2147483648 -> inf        : 1        |****************************************|\n"), out.String())
}

func TestTextHistogramEmpty(t *testing.T) {
	var out bytes.Buffer
	writeHistogram(&out, histogram.Log2{})
	assert.Equal(t, "     usecs               : count    distribution\n", out.String())
}

func TestTextPerTGID(t *testing.T) {
	table := tracers.TGIDTable{
		Processes: []tracers.TGIDLatency{
			{TGID: 4321, Calls: 25, Total: 150_300 * time.Microsecond, Max: 50_123 * time.Microsecond},
			{TGID: 1, Calls: 0},
		},
		Overflow: 9,
	}
	var out bytes.Buffer
	writePerTGID(&out, table)
	assert.Equal(t, ""+
		"  TGID  CALLS  TOTAL_US  AVG_US  MAX_US\n"+
		"  4321     25    150300    6012   50123\n"+
		"     1      0         0       0       0\n"+
		"per-pid: 9 calls of processes beyond the table's 4096 are in no row\n", out.String())
}

func TestTextSummaryOrder(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(false, &out).summary(summary{
		Stats: stats, Histogram: &histogram.Log2{1}, PerTGID: &tracers.TGIDTable{},
	}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Contains(t, lines[0], "usecs")
	assert.Contains(t, lines[2], "TGID")
	assert.True(t, strings.HasPrefix(lines[3], "SUMMARY "), "the summary line comes last")
}

func TestJSONLines(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(true, &out)
	require.NoError(t, p.event(errEvent))
	var h histogram.Log2
	h[1], h[histogram.Slots-1] = 5, 1
	require.NoError(t, p.summary(summary{
		Mechanism: "a-bpf-mechanism", Stats: stats, Events: 2, Elapsed: 1500 * time.Millisecond, Histogram: &h,
		PerTGID: &tracers.TGIDTable{Processes: []tracers.TGIDLatency{{TGID: 7, Calls: 3, Total: 3 * time.Millisecond, Max: 2 * time.Millisecond}}},
	}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2, "one object per line")
	assert.JSONEq(t, `{"type":"event","function":"vfs_read","comm":"my reader","tgid":7,"pid":7,"requested":64,"result":-21,"latency_us":12000,"latency_ns":12000000}`, lines[0])

	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &s))
	for k, v := range map[string]any{"type": "summary", "mechanism": "a-bpf-mechanism", "calls": 25.0, "slow": 3.0, "errors": 2.0, "dropped": 1.0, "lost": 5.0, "events": 2.0, "missed": 4.0, "elapsed_s": 1.5} {
		assert.Equal(t, v, s[k], k)
	}
	slots := s["histogram"].([]any)
	require.Len(t, slots, histogram.Slots, "every slot")
	assert.Equal(t, map[string]any{"low_us": 2.0, "high_us": 3.0, "count": 5.0}, slots[1])
	assert.Equal(t, map[string]any{"low_us": 2147483648.0, "high_us": nil, "count": 1.0}, slots[histogram.Slots-1])
	assert.Equal(t, map[string]any{"processes": []any{map[string]any{"tgid": 7.0, "calls": 3.0, "total_us": 3000.0, "max_us": 2000.0}}, "overflow": 0.0}, s["per_pid"])
}

func TestJSONUnknownIsNull(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(true, &out)
	require.NoError(t, p.event(blindEvent))
	require.NoError(t, p.event(noTGIDEvent))
	require.NoError(t, p.summary(summary{Mechanism: "a-blind-mechanism", Stats: blindStats, Events: 2, Elapsed: time.Second}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.JSONEq(t, `{"type":"event","function":"vfs_read","comm":"cat","tgid":8,"pid":9,"requested":null,"result":null,"latency_us":20000,"latency_ns":20000000}`, lines[0])
	assert.JSONEq(t, `{"type":"event","function":"vfs_read","comm":"cat","tgid":null,"pid":9,"requested":null,"result":null,"latency_us":20000,"latency_ns":20000000}`, lines[1])
	assert.JSONEq(t, `{"type":"summary","mechanism":"a-blind-mechanism","calls":null,"slow":3,"errors":null,"dropped":1,"lost":null,"events":2,"missed":null,"elapsed_s":1}`, lines[2])
}

// A known 0 is printed as 0, not as unknown.
func TestKnownZeroIsZero(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(true, &out).summary(summary{Mechanism: "a-bpf-mechanism"}))
	assert.JSONEq(t, `{"type":"summary","mechanism":"a-bpf-mechanism","calls":0,"slow":0,"errors":0,"dropped":0,"lost":0,"events":0,"missed":0,"elapsed_s":0}`, out.String())
}

func TestJSONSummaryWithoutAggregates(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, newPrinter(true, &out).summary(summary{Mechanism: "a-bpf-mechanism"}))
	assert.NotContains(t, out.String(), "histogram")
	assert.NotContains(t, out.String(), "per_pid")
}
