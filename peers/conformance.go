package peers

import (
	"fmt"
	"math"
	"strings"
	"time"

	"tracebench/workload"
)

// Span bounds one call's latency as the workload knows it: Max is the
// user-space time around read(2), which encloses vfs_read; Min is the
// caller's delay for a read that blocked until it acted, else 0. Op is
// the read's kind.
type Span struct {
	Min, Max time.Duration
	Op       workload.Op
}

// Truth is what a row's workload did that a peer should count: one Span
// per vfs_read call of the traced process.
type Truth []Span

// TruthOf returns the truth of a helper's reads under plan.
func TruthOf(plan workload.Plan, res workload.Result) (Truth, error) {
	t := make(Truth, 0, len(res.Reads))
	for _, rd := range res.Reads {
		if rd.Step < 0 || rd.Step >= len(plan) {
			return nil, fmt.Errorf("read of step %d, the plan has %d", rd.Step, len(plan))
		}
		s := Span{Max: rd.Duration, Op: rd.Op}
		if step := plan[rd.Step]; step.Blocks() {
			s.Min = step.Delay
		}
		t = append(t, s)
	}
	return t, nil
}

// Observed returns the calls of the kinds a peer observes (nil: all).
func (t Truth) Observed(observes func(workload.Op) bool) Truth {
	if observes == nil {
		return t
	}
	var seen Truth
	for _, s := range t {
		if observes(s.Op) {
			seen = append(seen, s)
		}
	}
	return seen
}

// Class is how a peer's count and latencies compare with a row's truth.
type Class int

const (
	// Exact: every call counted once, every latency possible.
	Exact Class = iota
	// VisibleLoss: calls missing, and the tool said so.
	VisibleLoss
	// SilentLoss: calls missing without a word from the tool.
	SilentLoss
	// WrongValue: counted calls that cannot be the workload's as the
	// tool reports them (a latency from a stale start, another
	// process's call), whatever was lost besides.
	WrongValue
	// CannotObserve: the peer cannot take part in the row.
	CannotObserve
)

var classNames = [...]string{"exact", "loss visible", "silent loss", "wrong value", "cannot observe"}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Cell is one peer on one row, classed, with the numbers behind it.
type Cell struct {
	Class Class
	// Calls is the row's truth (calls the peer should count); Counted
	// is the peer's count.
	Calls, Counted uint64
	// Lost is Calls - Counted, Extra Counted - Calls, where positive.
	Lost, Extra uint64
	// Silent is how many of the Lost calls no notice of the tool
	// accounts for.
	Silent uint64
	// TooLong is at least how many counted calls are longer than any of
	// the workload's could have been, beyond those Extra; TooShort at
	// least how many are shorter than calls that blocked at least that
	// long, beyond those Lost.
	TooLong, TooShort uint64
	// Notices are the tool's lines that told its user of lost calls.
	Notices []Notice
	// Reason says why the peer cannot observe the row.
	Reason string
}

// clockTolerance allows for the tools' clocks running at another rate
// than the workload's CLOCK_MONOTONIC (function_graph's trace clock is
// sched_clock, which NTP does not slew): 1%.
const clockTolerance = 0.01

// Classify holds a peer's result to a row's truth.
func Classify(t Truth, r Result) Cell {
	c := Cell{Calls: uint64(len(t)), Counted: r.Calls, Notices: r.Notices}
	if c.Counted < c.Calls {
		c.Lost = c.Calls - c.Counted
	} else {
		c.Extra = c.Counted - c.Calls
	}
	c.TooLong = sat(tooLong(t, r.Buckets), c.Extra)
	c.TooShort = sat(tooShort(t, r.Buckets), c.Lost)
	c.Silent = sat(c.Lost, noticed(c.Notices, c.Lost))
	switch {
	case c.Extra > 0 || c.TooLong > 0 || c.TooShort > 0:
		c.Class = WrongValue
	case c.Silent > 0:
		c.Class = SilentLoss
	case c.Lost > 0:
		c.Class = VisibleLoss
	}
	return c
}

// noticed is how many of lost calls the notices account for: all when
// one says calls were lost without how many.
func noticed(notices []Notice, lost uint64) uint64 {
	n, counted := noticeSum(notices)
	if !counted {
		return lost
	}
	return min(n, lost)
}

// noticeSum adds up the calls the notices account for; counted is false
// when one does not say how many.
func noticeSum(notices []Notice) (n uint64, counted bool) {
	for _, notice := range notices {
		if notice.Calls == 0 {
			return 0, false
		}
		n += notice.Calls
	}
	return n, true
}

// Unobservable is the cell of a peer that cannot take part, and why.
func Unobservable(t Truth, reason string) Cell {
	return Cell{Class: CannotObserve, Calls: uint64(len(t)), Reason: reason}
}

func micros(n uint64) time.Duration { return time.Duration(n) * time.Microsecond }

// tooLong: a correct peer's call in a bucket starting at L took at least
// L, so it is one of the calls whose Max reaches L; the peer's calls at
// or above L beyond those are wrong, at every L.
func tooLong(t Truth, buckets []Bucket) uint64 {
	var worst uint64
	for _, b := range buckets {
		low := micros(b.LowUS)
		var peer, reach uint64
		for _, o := range buckets {
			if o.LowUS >= b.LowUS {
				peer += o.Count
			}
		}
		for _, s := range t {
			if float64(s.Max)*(1+clockTolerance) >= float64(low) {
				reach++
			}
		}
		worst = max(worst, sat(peer, reach))
	}
	return worst
}

// tooShort: each call whose Min is at least L took at least L, so a peer
// that counted it put it in a bucket reaching above L; calls missing
// there were counted too short, or lost.
func tooShort(t Truth, buckets []Bucket) uint64 {
	mins := map[time.Duration]bool{}
	for _, s := range t {
		if s.Min > 0 {
			mins[s.Min] = true
		}
	}
	var worst uint64
	for low := range mins {
		var must, may uint64
		for _, s := range t {
			if s.Min >= low {
				must++
			}
		}
		for _, b := range buckets {
			if b.HighUS == math.MaxUint64 || float64(micros(b.HighUS))*(1+clockTolerance) > float64(low) {
				may += b.Count
			}
		}
		worst = max(worst, sat(must, may))
	}
	return worst
}

// sat is a - b, or 0 if b >= a.
func sat(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return 0
}

// String is the cell in a table: its class and the count behind it.
func (c Cell) String() string {
	switch c.Class {
	case CannotObserve:
		return "cannot observe"
	case Exact:
		return fmt.Sprintf("exact (%d)", c.Calls)
	case VisibleLoss:
		return fmt.Sprintf("%v: %d of %d", c.Class, c.Lost, c.Calls)
	case SilentLoss:
		if told := c.Lost - c.Silent; told > 0 {
			return fmt.Sprintf("%v: %d of %d (%d more told)", c.Class, c.Silent, c.Calls, told)
		}
		return fmt.Sprintf("%v: %d of %d", c.Class, c.Silent, c.Calls)
	case WrongValue:
		return fmt.Sprintf("%v: %s of %d", c.Class, strings.Join(c.wrongParts(), ", "), c.Calls)
	}
	return c.Class.String()
}

// wrongParts are the counts behind a wrong value.
func (c Cell) wrongParts() []string {
	var parts []string
	if c.TooLong > 0 {
		parts = append(parts, fmt.Sprintf("%d too long", c.TooLong))
	}
	if c.TooShort > 0 {
		parts = append(parts, fmt.Sprintf("%d too short", c.TooShort))
	}
	if c.Extra > 0 {
		parts = append(parts, fmt.Sprintf("%d extra", c.Extra))
	}
	if c.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d lost", c.Lost))
	}
	return parts
}
