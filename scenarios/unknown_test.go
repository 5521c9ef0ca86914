package scenarios

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
)

// unknowns is what a mechanism declares it cannot observe in a run (see
// tracers.Fields): unknown values read 0 and are not measurements.
type unknowns struct {
	stats    tracers.Fields // Stats.Unknown
	event    tracers.Fields // in every Event.Unknown
	eventMay tracers.Fields // also in an Event.Unknown now and then
}

// unknownsOf returns what m declares it cannot observe under cfg on the
// running kernel (Capabilities.Blind): the scenarios keep no copy of it.
func unknownsOf(m tracers.Mechanism, cfg tracers.Config) unknowns {
	stats, event := m.Can.Blind.Under(cfg)
	return unknowns{stats: stats, event: event, eventMay: m.Can.Blind.EventMay}
}

// knows reports whether the run observed every field of need, in Stats
// and in every event; when not, it logs check as not made. Every check of
// a value that may be unknown goes through it or eventKnows.
func (r run) knows(t testing.TB, need tracers.Fields, check string) bool {
	t.Helper()
	return observed(t, r.label(), r.stats.Unknown|r.want.unknown.event, need, check)
}

// eventKnows is knows for the fields of one event.
func (r run) eventKnows(t testing.TB, ev tracers.Event, need tracers.Fields, check string) bool {
	t.Helper()
	return observed(t, r.mechanism, ev.Unknown, need, check)
}

func observed(t testing.TB, mechanism string, unknown, need tracers.Fields, check string) bool {
	t.Helper()
	if missing := unknown & need; missing != 0 {
		t.Logf("not checked for %s: %s unknown (%s)", mechanism, missing, check)
		return false
	}
	return true
}

// checkUnknowns holds the implementation to the declaration, which the
// declaration alone cannot show: the run reports exactly the declared
// fields unknown (in Stats.Unknown, computed at run time where kprobe
// links may not report misses, and in each Event.Unknown), and each of
// them reads 0. A field wrongly declared observed fails the checks made of
// it instead.
func checkUnknowns(t testing.TB, r run) {
	checkStatsUnknown(t, r)
	d := r.want.unknown
	for _, ev := range r.events {
		assert.Equal(t, d.event.String(), (ev.Unknown &^ d.eventMay).String(),
			"Event.Unknown of %+v is not what %s declares (Capabilities.Blind and OfFunction; update CONFORMANCE.md "+
				"with it)", ev, r.label())
		assertReadZero(t, eventValues(ev), ev.Unknown, "event")
	}
}

// checkStatsUnknown is checkUnknowns for the counters alone.
func checkStatsUnknown(t testing.TB, r run) {
	assert.Equal(t, r.want.unknown.stats.String(), r.stats.Unknown.String(),
		"Stats.Unknown is not what %s declares (Capabilities.Blind and OfFunction; update CONFORMANCE.md with it)",
		r.label())
	assertReadZero(t, statsValues(r.stats), r.stats.Unknown, "Stats")
}

func statsValues(s tracers.Stats) map[tracers.Field]uint64 {
	return map[tracers.Field]uint64{
		tracers.FieldCalls: s.Calls, tracers.FieldSlow: s.Slow, tracers.FieldErrors: s.Errors,
		tracers.FieldDropped: s.Dropped, tracers.FieldMissed: s.Missed, tracers.FieldPending: s.Pending,
		tracers.FieldLost: s.Lost,
	}
}

func functionValues(f tracers.FunctionStats) map[tracers.Field]uint64 {
	return map[tracers.Field]uint64{
		tracers.FieldCalls: f.Calls, tracers.FieldSlow: f.Slow, tracers.FieldErrors: f.Errors,
		tracers.FieldDropped: f.Dropped, tracers.FieldMissed: f.Missed, tracers.FieldPending: f.Pending,
		tracers.FieldLost: f.Lost,
	}
}

func eventValues(ev tracers.Event) map[tracers.Field]uint64 {
	return map[tracers.Field]uint64{
		tracers.FieldTGID: uint64(ev.TGID), tracers.FieldRequested: ev.Requested, tracers.FieldResult: uint64(ev.Result),
	}
}

// assertReadZero: an unknown value reads 0, so that nobody mistakes it
// for a measurement.
func assertReadZero(t testing.TB, values map[tracers.Field]uint64, unknown tracers.Fields, of string) {
	t.Helper()
	for f, v := range values {
		if unknown.Has(f) {
			assert.Zero(t, v, "%s %s is unknown, so it must read 0", of, f)
		}
	}
}

// failures records the failures of checks run against it instead of
// failing the test, so that a test can show a check fails.
type failures struct {
	testing.TB
	messages []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.messages = append(f.messages, fmt.Sprintf(format, args...))
}

// TestCheckUnknowns: the declaration is asserted both ways, for a
// mechanism observing everything and for one that does not (graph, as
// ftrace-graph at a threshold). Needs no kernel.
func TestCheckUnknowns(t *testing.T) {
	graph := unknowns{
		stats:    tracers.FieldCalls | tracers.FieldErrors | tracers.FieldMissed | tracers.FieldPending | tracers.FieldLost,
		event:    tracers.FieldRequested | tracers.FieldResult,
		eventMay: tracers.FieldTGID,
	}
	blind := tracers.Event{PID: 1, Unknown: graph.event}
	tests := []struct {
		name     string
		r        run
		failures int
	}{
		{"BPF, nothing unknown", run{mechanism: "bpf", events: []tracers.Event{{Requested: 1}}}, 0},
		{"BPF, an unknown counter", run{mechanism: "bpf", stats: tracers.Stats{Unknown: tracers.FieldCalls}}, 1},
		{"BPF, an unknown event field", run{mechanism: "bpf",
			events: []tracers.Event{{Unknown: tracers.FieldResult}}}, 1},
		{"graph as declared", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Slow: 1, Unknown: graph.stats}, events: []tracers.Event{blind}}, 0},
		{"ftrace-graph, tgid unknown at times", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Unknown: graph.stats}, events: []tracers.Event{{Unknown: graph.event | tracers.FieldTGID}}}, 0},
		{"graph starts counting calls", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Calls: 5, Unknown: graph.stats &^ tracers.FieldCalls}}, 1},
		{"graph stops counting slow", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Unknown: graph.stats | tracers.FieldSlow}}, 1},
		{"graph event with a result", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Unknown: graph.stats}, events: []tracers.Event{{Result: 1,
				Unknown: tracers.FieldRequested}}}, 1},
		{"an unknown value that is not 0", run{mechanism: "graph", want: expect{unknown: graph},
			stats: tracers.Stats{Errors: 2, Unknown: graph.stats}}, 1},
	}
	for _, tt := range tests {
		f := &failures{TB: t}
		checkUnknowns(f, tt.r)
		assert.Len(t, f.messages, tt.failures, "%s: %q", tt.name, f.messages)
	}
}
