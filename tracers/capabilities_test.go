package tracers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The declaration must say what the implementation does.
func TestCapabilitiesMatchImplementation(t *testing.T) {
	for _, m := range registry {
		c := m.Can
		assert.Equal(t, m.spec != nil, c.BPF, "%s: BPF", m.Name)
		assert.Equal(t, m.start == nil, c.BPF, "%s: a BPF object is started by Start itself", m.Name)
		// Every BPF object counts through record_return (aggregates) and
		// is a *tracer (program stats): TestAggregatesInEveryObject.
		assert.Equal(t, c.BPF, c.Aggregates, "%s: Aggregates", m.Name)
		assert.Equal(t, c.BPF, c.ProgramStats, "%s: ProgramStats", m.Name)
		assert.NotZero(t, c.State, "%s: State", m.Name)
		if c.BPF {
			b := c.Blind
			assert.Zero(t, b.Stats|b.StatsAtZero|b.Event|b.EventMay, "%s: a BPF object observes every field", m.Name)
			assert.Zero(t, c.KillLeaves, "%s: file descriptors hold every BPF object", m.Name)
		}
	}
}

func TestBlindUnder(t *testing.T) {
	b := ftraceGraph.Can.Blind
	stats, event := b.Under(Config{Threshold: 1})
	assert.Equal(t, "calls,errors,missed,pending", stats.String())
	assert.Equal(t, "requested,result", event.String())
	stats, _ = b.Under(Config{})
	assert.Equal(t, "calls,slow,errors,dropped,missed,pending", stats.String())
	assert.Equal(t, "recursion,rethook-pool", (LossRecursion | LossRethookPool).String())
	assert.Equal(t, "tracefs instance", ResidueTracefsInstance.String())
}
