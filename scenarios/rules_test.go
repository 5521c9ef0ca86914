package scenarios

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
	"tracebench/tracers"
	"tracebench/workload"
)

// recorder is a checkT that records failures instead of failing.
type recorder struct{ errors []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}

// The input of issue 13 item 9 (7.2 guest, kprobe-kretprobe/slow-eintr):
// an EISDIR read that user space also timed slow has an event besides the
// interrupted read's. The rule accepts it, and only it.
func TestOnlyDelayedSlow(t *testing.T) {
	const tid = 7
	interrupted := workload.Read{Op: workload.InterruptedRead, TID: tid, Requested: 2, Result: -4,
		Duration: 60 * time.Millisecond}
	dir := workload.Read{Op: workload.DirRead, TID: tid, Requested: 64, Result: -21, Duration: 15 * time.Millisecond}
	fast := workload.Read{Op: workload.FileRead, TID: tid, Requested: 4096, Result: 4096, Duration: time.Millisecond}
	delayedEvent := tracers.Event{PID: tid, Requested: 2, Result: -erestartsys, Latency: 55 * time.Millisecond}
	dirEvent := tracers.Event{PID: tid, Requested: 64, Result: -21, Latency: 12 * time.Millisecond}
	fileEvent := tracers.Event{PID: tid, Requested: 4096, Result: 4096, Latency: 11 * time.Millisecond}
	assert.NotEqual(t, expectedErrors([]workload.Read{interrupted}), errorEvents([]tracers.Event{delayedEvent, dirEvent}),
		"the rule slow-eintr had (error events == the interrupted reads') fails this input")
	for _, tt := range []struct {
		name   string
		events []tracers.Event
		fails  int
	}{
		{"only the delayed read", []tracers.Event{delayedEvent}, 0},
		{"and a read user space timed slow too", []tracers.Event{delayedEvent, dirEvent}, 0},
		{"twice the read timed slow", []tracers.Event{delayedEvent, dirEvent, dirEvent}, 1},
		{"a read user space timed fast", []tracers.Event{delayedEvent, fileEvent}, 1},
		{"the delayed read's event missing", []tracers.Event{dirEvent}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run{cfg: tracers.Config{Threshold: 10 * time.Millisecond}, events: tt.events,
				truth: workload.Result{Reads: []workload.Read{fast, dir, interrupted}}}
			rec := &recorder{}
			assertOnlyDelayedSlow(rec, r, []workload.Read{interrupted}, workload.DefaultPipeDelay)
			assert.Len(t, rec.errors, tt.fails, "failures: %q", rec.errors)
		})
	}
}

// Two delayed reads of one thread and size (agreement, 7.2 guest): each
// event pairs with the read whose user-space time encloses it.
func TestOnlyDelayedSlowSameThreadAndSize(t *testing.T) {
	pipe := func(d time.Duration) workload.Read {
		return workload.Read{Op: workload.DelayedPipeRead, TID: 3, Requested: 1, Result: 1, Duration: d}
	}
	reads := []workload.Read{pipe(208 * time.Millisecond), pipe(101 * time.Millisecond)}
	event := func(d time.Duration) tracers.Event { return tracers.Event{PID: 3, Requested: 1, Result: 1, Latency: d} }
	for _, tt := range []struct {
		name   string
		events []tracers.Event
		fails  int
	}{
		{"each enclosed by one read", []tracers.Event{event(207 * time.Millisecond), event(100 * time.Millisecond)}, 0},
		{"both longer than the short read", []tracers.Event{event(207 * time.Millisecond), event(150 * time.Millisecond)},
			1},
		{"one event for two reads", []tracers.Event{event(100 * time.Millisecond)}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run{cfg: tracers.Config{Threshold: 10 * time.Millisecond}, events: tt.events,
				truth: workload.Result{Reads: reads}}
			rec := &recorder{}
			assertOnlyDelayedSlow(rec, r, reads, agreementDelay)
			assert.Len(t, rec.errors, tt.fails, "failures: %q", rec.errors)
		})
	}
}

// A repeated cell says so in the table and in the matrix JSON (issue 13
// item 5); its status stays PASS/SKIP/FAIL for matrix.
func TestOutcomeRetries(t *testing.T) {
	o := &outcomeTable{mechanisms: []string{"m"}, scenarios: []string{"a", "b"},
		status:  map[[2]string]string{{"m", "a"}: "PASS", {"m", "b"}: "FAIL"},
		reason:  map[string]string{},
		retries: map[[2]string]int{{"m", "a"}: 1}}
	var table bytes.Buffer
	o.print(&table)
	assert.Contains(t, table.String(), "PASS(2)")
	assert.Contains(t, table.String(), "(n): the cell's status is that of attempt n")
	var line bytes.Buffer
	o.printJSON(&line)
	parsed, err := matrix.ParseOutcomes(&line)
	if assert.NoError(t, err) {
		assert.Equal(t, map[string]map[string]int{"m": {"a": 1}}, parsed.Retries)
		assert.Equal(t, matrix.Pass, parsed.Status["m"]["a"])
	}
}

// Misses are summed over a cell's attempts and reach the matrix JSON only
// for mechanisms that observe them (issue 14: RT's misses per mechanism).
func TestOutcomeMissed(t *testing.T) {
	o := &outcomeTable{status: map[[2]string]string{}, reason: map[string]string{},
		retries: map[[2]string]int{}, missed: map[[2]string]uint64{}}
	o.counted("m", "a", tracers.Stats{Missed: 3})
	o.counted("m", "a", tracers.Stats{Missed: 4})
	o.counted("m", "b", tracers.Stats{})
	o.counted("blind", "a", tracers.Stats{Missed: 0, Unknown: tracers.FieldMissed})
	var line bytes.Buffer
	o.printJSON(&line)
	parsed, err := matrix.ParseOutcomes(&line)
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]uint64{"m": {"a": 7, "b": 0}}, parsed.Missed)
}
