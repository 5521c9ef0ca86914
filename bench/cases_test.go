package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"tracebench/workload"

	"tracebench/tracers"
)

// highThreshold is far above any 1-byte read of /dev/zero, even under
// emulation, and within tracers.MaxThreshold.
const highThreshold = time.Minute

// benchCase is one configuration every mechanism is measured in.
type benchCase struct {
	name string
	// config traces this process (TGID self) or not.
	config func(self uint32) tracers.Config
	// drain sizes the ring buffer for every event of the loop and reads
	// them all after it (see drainTimed): no event is dropped, and the
	// consumer's cost is its own figure, not mixed into the loop's.
	drain bool
	// cost: the sub-benchmarks also report the mechanism's cost beyond
	// time (reportCost), with the default-sized ring buffer a tracer
	// holds at rest.
	cost bool
	// check says what the counters must show after reads timed reads from
	// this process, with events consumed (see session.finish); it fails
	// the benchmark otherwise, since a mechanism that did not trace
	// measured nothing.
	check func(s tracers.Stats, reads, events uint64) error
}

var cases = []benchCase{
	{
		name:   "tgid-miss",
		config: func(uint32) tracers.Config { return tracers.Config{TGID: workload.NoProcess} },
		check: func(s tracers.Stats, _, _ uint64) error {
			return expectKnown(s, tracers.FieldCalls, s.Calls == 0, "filtered-out calls were counted: %+v", s)
		},
	},
	{
		name:   "below-threshold",
		config: func(self uint32) tracers.Config { return tracers.Config{TGID: self, Threshold: highThreshold} },
		cost:   true,
		check: func(s tracers.Stats, reads, _ uint64) error {
			return errors.Join(
				expectKnown(s, tracers.FieldCalls, s.Calls >= reads, "%d calls counted for %d reads: %+v",
					s.Calls, reads, s),
				expectKnown(s, tracers.FieldSlow, s.Slow == 0, "calls above a %v threshold: %+v", highThreshold, s))
		},
	},
	{
		name:   "every-call",
		config: func(self uint32) tracers.Config { return tracers.Config{TGID: self} },
		drain:  true,
		check: func(s tracers.Stats, reads, events uint64) error {
			return errors.Join(
				expectKnown(s, tracers.FieldCalls, s.Calls >= reads, "%d calls counted for %d reads: %+v", s.Calls, reads, s),
				expectKnown(s, tracers.FieldCalls|tracers.FieldSlow, s.Slow == s.Calls,
					"zero threshold but slow != calls: %+v", s),
				expectKnown(s, tracers.FieldSlow|tracers.FieldDropped, events+s.Dropped <= s.Slow,
					"%d events consumed + %d dropped > %d slow", events, s.Dropped, s.Slow),
				// Without a slow count the events are the only sign that
				// the mechanism traced at all.
				expect(events > 0 || !s.Unknown.Has(tracers.FieldSlow), "no event consumed or left unread for %d reads,"+
					" and the mechanism does not count slow calls: nothing shows it traced", reads))
		},
	},
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// expectKnown is expect for an assertion on the counters in uses: it is
// not made when the mechanism declares any of them unknown (they read 0
// and are not measurements, e.g. ftrace-graph's calls).
func expectKnown(s tracers.Stats, uses tracers.Fields, ok bool, format string, args ...any) error {
	return expectUnless(s.Unknown, uses, ok, format, args...)
}

// expectUnless is expect unless unknown holds any of uses.
func expectUnless(unknown, uses tracers.Fields, ok bool, format string, args ...any) error {
	if unknown&uses != 0 {
		return nil
	}
	return expect(ok, format, args...)
}

// TestCaseChecks feeds each case's check counters it must accept and
// counters it must reject, so that a benchmark of a mechanism that did not
// trace cannot pass.
func TestCaseChecks(t *testing.T) {
	byName := map[string]benchCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	tests := []struct {
		caseName       string
		stats          tracers.Stats
		reads, events  uint64
		wantErrContain string // "" = accepted
	}{
		{"tgid-miss", tracers.Stats{}, 100, 0, ""},
		{"tgid-miss", tracers.Stats{Calls: 1}, 100, 0, "filtered-out calls were counted"},
		{"below-threshold", tracers.Stats{Calls: 101}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Calls: 99}, 100, 0, "99 calls counted for 100 reads"},
		{"below-threshold", tracers.Stats{Calls: 100, Slow: 1}, 100, 0, "calls above a 1m0s threshold"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 10}, 100, 90, ""},
		{"every-call", tracers.Stats{Calls: 0, Slow: 0}, 100, 0, "0 calls counted for 100 reads"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 99}, 100, 0, "slow != calls"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 10}, 100, 91,
			"91 events consumed + 10 dropped > 100 slow"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 100, Dropped: 100}, 100, 0, ""},
		// Unknown counters read 0 and are not held to anything; the
		// known ones still are (as ftrace-graph declares them).
		{"tgid-miss", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Unknown: graphUnknown}, 100, 0, ""},
		{"below-threshold", tracers.Stats{Slow: 1, Unknown: graphUnknown}, 100, 0,
			"calls above a 1m0s threshold"},
		{"every-call", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 90, ""},
		{"every-call", tracers.Stats{Unknown: graphUnknownAtZero}, 100, 0,
			"no event consumed or left unread for 100 reads"},
		{"every-call", tracers.Stats{Calls: 100, Slow: 99, Unknown: tracers.FieldDropped}, 100, 0, "slow != calls"},
	}
	for _, tt := range tests {
		err := byName[tt.caseName].check(tt.stats, tt.reads, tt.events)
		switch {
		case tt.wantErrContain == "" && err != nil:
			t.Errorf("%s %+v: unexpected error %v", tt.caseName, tt.stats, err)
		case tt.wantErrContain != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErrContain)):
			t.Errorf("%s %+v: error %v, want one containing %q", tt.caseName, tt.stats, err, tt.wantErrContain)
		}
	}
}

// What the first mechanism that is not a BPF object (ftrace-graph)
// declares unknown, at a threshold above 0 and at 0.
var graphUnknown, graphUnknownAtZero = func() (tracers.Fields, tracers.Fields) {
	graph := notBPF()
	above, _ := graph.Can.Blind.Under(tracers.Config{Threshold: highThreshold})
	zero, _ := graph.Can.Blind.Under(tracers.Config{})
	return above, zero
}()

// notBPF returns the first registered mechanism that is not a BPF object.
func notBPF() tracers.Mechanism {
	ms := tracers.Mechanisms()
	return ms[slices.IndexFunc(ms, func(m tracers.Mechanism) bool { return !m.Can.BPF })]
}
