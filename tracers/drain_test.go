package tracers

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queued is a Tracer whose ring buffer holds events and whose counters
// are fixed.
type queued struct {
	events []Event
	stats  Stats
}

func (q *queued) ReadEvent(deadline time.Time) (Event, error) {
	if len(q.events) == 0 {
		time.Sleep(time.Until(deadline)) // nothing will come: block as a ring buffer would
		return Event{}, os.ErrDeadlineExceeded
	}
	ev := q.events[0]
	q.events = q.events[1:]
	return ev, nil
}

func (q *queued) Stats() (Stats, error) { return q.stats, nil }
func (q *queued) Detach() error         { return nil }
func (q *queued) Close() error          { return nil }

// TestDrainRestCountsEventsAlreadyRead: a caller that streamed events
// gets the rest without waiting for events it already has.
func TestDrainRestCountsEventsAlreadyRead(t *testing.T) {
	q := &queued{events: []Event{{PID: 4}, {PID: 5}}, stats: Stats{Slow: 6, Dropped: 1}}
	start := time.Now()
	events, stats, err := DrainRest(q, 3, time.Minute)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Minute, "returned once slow == read + events + dropped")
	assert.Equal(t, []Event{{PID: 4}, {PID: 5}}, events)
	assert.Equal(t, uint64(6), stats.Slow)
}

// TestDrainWaitsForPromisedEvents: events the counters promise but that
// never come are waited for until the timeout, then the mismatch shows.
func TestDrainWaitsForPromisedEvents(t *testing.T) {
	q := &queued{events: []Event{{PID: 4}}, stats: Stats{Slow: 2}}
	const timeout = 50 * time.Millisecond
	start := time.Now()
	events, _, err := Drain(q, timeout)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), timeout)
	assert.Len(t, events, 1)
}
