package scenarios

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
	"tracebench/workload"
)

const (
	// workloadTimeout bounds one workload run; reads under TCG are ~10x slower.
	workloadTimeout = 2 * time.Minute
	// drainTimeout bounds the wait for events of calls in flight at detach.
	drainTimeout = 5 * time.Second
)

// scenario is one row of the table: a workload, a tracer configuration
// derived from the helper's TGID, and what must hold afterwards beyond the
// invariants every run is checked against.
type scenario struct {
	name   string
	doc    string
	plan   workload.Plan
	config func(helperTGID uint32) tracers.Config
	check  func(t *testing.T, r run)
}

// run is what one scenario produced for one mechanism.
type run struct {
	cfg    tracers.Config
	helper uint32
	truth  workload.Result
	events []tracers.Event
	stats  tracers.Stats
}

func (sc scenario) run(t *testing.T, m tracers.Mechanism) {
	outcomes.track(t, m.Name, sc.name)
	helper, err := workload.Start(sc.plan)
	require.NoError(t, err)
	defer helper.Close()

	cfg := sc.config(helper.TGID())
	tr, err := m.Start(cfg)
	if errors.Is(err, tracers.ErrUnsupported) {
		outcomes.skip(t, m.Name, sc.name, err.Error())
	}
	require.NoError(t, err)
	defer func() { assert.NoError(t, tr.Close()) }()

	truth, err := helper.Run(workloadTimeout)
	require.NoError(t, err)
	events, stats, err := tracers.Drain(tr, drainTimeout)
	require.NoError(t, err)

	r := run{cfg: cfg, helper: helper.TGID(), truth: truth, events: events, stats: stats}
	t.Logf("%s: %+v, %d events", sc.doc, stats, len(events))
	checkInvariants(t, r)
	sc.check(t, r)
}

// checkInvariants holds for every mechanism in every scenario.
func checkInvariants(t *testing.T, r run) {
	assert.Equal(t, r.stats.Slow, uint64(len(r.events))+r.stats.Dropped, "slow == events + dropped")
	assert.LessOrEqual(t, r.stats.Slow, r.stats.Calls, "slow <= calls")
	assert.LessOrEqual(t, r.stats.Errors, r.stats.Calls, "errors <= calls")
	tids := r.truth.TIDs()
	for _, ev := range r.events {
		assert.GreaterOrEqual(t, ev.Latency, r.cfg.Threshold, "event latency >= threshold: %+v", ev)
		if r.cfg.TGID == r.helper {
			assert.Equal(t, r.helper, ev.TGID, "event tgid is the helper's: %+v", ev)
			assert.True(t, tids[int(ev.PID)], "event pid %d is a helper thread %v: %+v", ev.PID, tids, ev)
		}
	}
}

func requireRoot(t *testing.T) {
	if euid := os.Geteuid(); euid != 0 {
		outcomes.skipAll(t, fmt.Sprintf("loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid %d", euid))
	}
}
