package tracers

import (
	"errors"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
)

// The declaration must say what the implementation does.
func TestCapabilitiesMatchImplementation(t *testing.T) {
	for _, m := range registry {
		c := m.Can
		assert.Equal(t, m.spec != nil, c.BPF, "%s: BPF", m.Name)
		assert.Equal(t, m.start == nil, c.BPF, "%s: a BPF object is started by Start itself", m.Name)
		assert.NotZero(t, c.State, "%s: State", m.Name)
		assert.NotZero(t, c.Role, "%s: Role", m.Name)
		if c.Role == RoleTool {
			stats, event := c.Blind.Under(Config{Threshold: 1})
			assert.True(t, c.Aggregates(), "%s: a tool counts its histogram and per-TGID table", m.Name)
			assert.Zero(t, (stats|event)&^FieldMissed, "%s: a tool observes every field", m.Name)
		}
		assert.Positive(t, c.ThresholdResolution, "%s: ThresholdResolution", m.Name)
		assert.NotEmpty(t, m.Needs.Features, "%s: Needs", m.Name)
		assert.NotZero(t, m.Needs.Since, "%s: Needs.Since", m.Name)
		if c.BPF {
			assert.False(t, m.Needs.Since.Before(needsCmpxchg.Since), "%s: every BPF object holds a BPF_CMPXCHG", m.Name)
			assert.Equal(t, time.Nanosecond, c.ThresholdResolution, "%s: bpf_ktime_get_ns differences", m.Name)
			b := c.Blind
			assert.Zero(t, b.Stats|b.StatsAtZero|b.Event|b.EventMay, "%s: a BPF object observes every field", m.Name)
			assert.Zero(t, c.KillLeaves, "%s: file descriptors hold every BPF object", m.Name)
		}
	}
}

// --mechanism auto and the peers' benchmark have designs to choose from.
func TestToolsDeclared(t *testing.T) {
	tools := MechanismsFor(RoleTool)
	assert.NotEmpty(t, tools)
	for _, m := range tools {
		assert.Equal(t, RoleTool, m.Can.Role, m.Name)
	}
	assert.Len(t, MechanismsFor(RoleSubject), len(registry)-len(tools))
}

// Start refuses what a declaration rules out, naming the mechanism and the
// value, before it probes the kernel (so before anything is loaded); what
// the declaration allows goes on to the probe.
func TestStartRefusesWhatCanRulesOut(t *testing.T) {
	errProbed := errors.New("probed")
	probed := 0
	probe := func(Mechanism) error { probed++; return errProbed }
	graphLike := Mechanism{Name: "graph-like", Can: Capabilities{ThresholdResolution: time.Microsecond}, probe: probe}
	bpf := Mechanism{Name: "bpf", Can: bpfCapabilities(RoleSubject, StateHashMap, 0), probe: probe}
	refused := []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Threshold: 1500 * time.Nanosecond},
			"graph-like: threshold 1.5µs is not a multiple of the mechanism's threshold resolution (1µs)"},
		{Config{Threshold: time.Millisecond, Histogram: true},
			"graph-like: histogram asked for: the mechanism does not count every call in the kernel"},
		{Config{PerTGID: true}, "graph-like: per-TGID totals asked for: the mechanism does not count every call in the kernel"},
	}
	for _, tt := range refused {
		_, err := graphLike.Start(tt.cfg)
		assert.EqualError(t, err, tt.wantErr)
		assert.NotErrorIs(t, err, ErrUnsupported, "refused for the config, not the kernel")
	}
	assert.Zero(t, probed, "refused before probing")
	for _, allowed := range []struct {
		m   Mechanism
		cfg Config
	}{
		{graphLike, Config{}},
		{graphLike, Config{Threshold: 2 * time.Microsecond}},
		{bpf, Config{Threshold: 1500 * time.Nanosecond, Histogram: true, PerTGID: true}},
	} {
		_, err := allowed.m.Start(allowed.cfg)
		assert.ErrorIs(t, err, errProbed, "%s %+v", allowed.m.Name, allowed.cfg)
	}
}

// A mechanism declares LossMapFull exactly where its object has a
// per-thread hash map "starts", which Config.ThreadMapEntries sizes.
func TestMapFullDeclaredWhereThreadMapIs(t *testing.T) {
	for _, m := range registry {
		if !m.Can.BPF {
			continue
		}
		spec, err := m.spec()
		if !assert.NoError(t, err, m.Name) {
			continue
		}
		starts, ok := spec.Maps["starts"]
		hasMap := ok && starts.Type == ebpf.Hash
		assert.Equal(t, hasMap, m.Can.Loses.Has(LossMapFull), "%s: LossMapFull", m.Name)
		assert.Equal(t, hasMap, m.Can.State.KeepsPerThread(), "%s: State", m.Name)
		if !hasMap {
			continue
		}
		assert.EqualValues(t, DefaultThreadMapEntries, starts.MaxEntries, "%s: default size", m.Name)
		assert.NoError(t, configure(spec, Config{ThreadMapEntries: 64}))
		assert.EqualValues(t, 64, starts.MaxEntries, "%s: configured size", m.Name)
	}
}

func TestLossShowsIn(t *testing.T) {
	assert.Equal(t, "lost", LossMapFull.ShowsIn(StateHashMap).String())
	assert.Equal(t, "missed", LossRecursion.ShowsIn(StateSessionCookie).String())
	assert.Equal(t, "missed,pending,lost", LossMaxActive.ShowsIn(StateHashMap).String())
	assert.Equal(t, "missed,pending,lost", LossRecursion.ShowsIn(StateTaskStorage).String())
	assert.Equal(t, "missed", LossRethookPool.ShowsIn(StateCookieAndHashMap).String())
}

func TestBlindUnder(t *testing.T) {
	b := ftraceGraph.Can.Blind
	stats, event := b.Under(Config{Threshold: 1})
	assert.Equal(t, "calls,errors,missed,pending,lost", stats.String())
	assert.Equal(t, "requested,result", event.String())
	stats, _ = b.Under(Config{})
	assert.Equal(t, "calls,slow,errors,dropped,missed,pending,lost", stats.String())
	assert.Equal(t, "recursion,rethook-pool", (LossRecursion | LossRethookPool).String())
	assert.Equal(t, "tracefs instance", ResidueTracefsInstance.String())
}

func TestKernelVersionBefore(t *testing.T) {
	assert.True(t, KernelVersion{5, 12}.Before(KernelVersion{6, 1}))
	assert.True(t, KernelVersion{6, 1}.Before(KernelVersion{6, 10}))
	assert.False(t, KernelVersion{6, 10}.Before(KernelVersion{6, 10}))
	assert.False(t, KernelVersion{7, 0}.Before(KernelVersion{6, 18}))
	assert.Equal(t, "BPF_TRACE_FSESSION (Linux 7.0)", fsession.Needs.String())
}
