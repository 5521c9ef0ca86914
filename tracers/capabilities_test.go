package tracers

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/funcset"
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
	bpf := Mechanism{Name: "bpf", Can: bpfCapabilities(RoleSubject, StateHashMap, 0, FunctionSupport{Many: true}),
		probe: probe}
	refused := []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Threshold: 1500 * time.Nanosecond},
			"graph-like: threshold 1.5µs is not a multiple of the mechanism's threshold resolution (1µs)"},
		{Config{Threshold: time.Millisecond, Histogram: true},
			"graph-like: histogram asked for: the mechanism does not count every call in the kernel"},
		{Config{PerTGID: true}, "graph-like: per-TGID totals asked for: the mechanism does not count every call in the kernel"},
		{Config{Functions: []string{"anon_pipe_read"}},
			"graph-like: functions anon_pipe_read asked for: the mechanism traces vfs_read alone"},
		{Config{Functions: []string{"vfs_read", "a", "b", "c", "d"}},
			"graph-like: functions vfs_read, a, b, c and 1 more asked for: the mechanism traces vfs_read alone"},
		{Config{Functions: []string{"vfs_read", "vfs_read"}}, `graph-like: function "vfs_read" is given twice (items 1 and 2 of the list)`},
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
		{graphLike, Config{Functions: []string{"vfs_read"}}},
		{bpf, Config{Threshold: 1500 * time.Nanosecond, Histogram: true, PerTGID: true}},
		{bpf, Config{Functions: []string{"vfs_read", "anon_pipe_read"}}},
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
		assert.NoError(t, configure(spec, Config{ThreadMapEntries: 64}, newFunctionTable(m.Can, Config{})))
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

// Functions.Kinds are the kinds of the programs a mechanism attaches to
// each function, so that a set built for them holds nothing they refuse;
// function_graph has no programs.
func TestFunctionKindsFollowPrograms(t *testing.T) {
	for _, m := range registry {
		kinds, err := m.AttachKinds()
		require.NoError(t, err, m.Name)
		var want []funcset.Kind
		for _, k := range kinds {
			kind, ok := funcset.KindOfSection(k)
			require.True(t, ok, "%s: section kind %s has no funcset kind", m.Name, k)
			if !slices.Contains(want, kind) {
				want = append(want, kind)
			}
		}
		if !m.Can.BPF {
			want = []funcset.Kind{funcset.Graph}
		}
		assert.ElementsMatch(t, want, m.Can.Functions.Kinds, "%s: Functions.Kinds", m.Name)
	}
}

func TestOfFunction(t *testing.T) {
	bpf := bpfCapabilities(RoleSubject, StateHashMap, 0, FunctionSupport{Many: true, Shared: FieldMissed})
	one := Config{}
	two := Config{Functions: []string{"vfs_read", "no_such_function_here"}}
	stats, event := bpf.OfFunction(one, "vfs_read")
	assert.Equal(t, "none", (stats | event).String(), "vfs_read alone")
	stats, event = bpf.OfFunction(two, "vfs_read")
	assert.Equal(t, "missed", stats.String(), "a link's count shared by two functions")
	assert.Equal(t, "none", event.String())
	_, event = bpf.OfFunction(two, "no_such_function_here")
	assert.Equal(t, "requested,result", event.String(), "no count argument, no BTF return type")
	stats, event = ftraceGraph.Can.OfFunction(Config{Threshold: time.Millisecond}, "vfs_read")
	assert.Equal(t, "calls,errors,missed,pending,lost", stats.String())
	assert.Equal(t, "requested,result", event.String())
}

func TestResultOfType(t *testing.T) {
	s32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	for _, tt := range []struct {
		typ  btf.Type
		want result
	}{
		{&btf.Typedef{Name: "ssize_t", Type: &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}},
			result{value: true, size: 8, signed: true, errno: true}},
		{s32, result{value: true, size: 4, signed: true, errno: true}},
		{&btf.Int{Name: "unsigned int", Size: 4}, result{value: true, size: 4}},
		{&btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}, result{value: true, size: 1}},
		{&btf.Enum{Name: "e", Size: 4, Signed: true}, result{value: true, size: 4, signed: true, errno: true}},
		{&btf.Pointer{Target: &btf.Void{}}, result{value: true, size: 8, errno: true}},
		{&btf.Const{Type: s32}, result{value: true, size: 4, signed: true, errno: true}},
		{&btf.Void{}, result{}},
		{&btf.Struct{Name: "fd", Size: 8}, result{}},
		{&btf.Int{Name: "__int128", Size: 16, Encoding: btf.Signed}, result{}},
	} {
		assert.Equal(t, tt.want, resultOfType(tt.typ), "%v", tt.typ)
	}
}

func TestFunctionsRefusedError(t *testing.T) {
	err := &FunctionsRefusedError{Mechanism: "m", Kind: funcset.Fexit, Of: 3, Refused: map[string]string{
		"do_exit": "Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.", "panic": "variadic"}}
	assert.EqualError(t, err, "m: the kernel refuses to attach 2 of the 3 functions with fexit, so none is traced: "+
		"do_exit: Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.; panic: variadic")
}

func TestTotalsOfFunctions(t *testing.T) {
	per := []FunctionStats{{Function: "a", Calls: 3, Slow: 2, Errors: 1, Dropped: 1, Lost: 4, Missed: 9, Pending: 9},
		{Function: "b", Calls: 5, Slow: 1, Lost: 1}}
	s := totals(per)
	assert.Equal(t, Stats{Calls: 8, Slow: 3, Errors: 1, Dropped: 1, Lost: 5, PerFunction: per}, s,
		"Missed and Pending are the tracer's own")
	s.Missed, s.Pending, s.Unknown = 7, 2, FieldMissed
	assert.Equal(t, FunctionStats{Function: "vfs_read", Calls: 8, Slow: 3, Errors: 1, Dropped: 1, Lost: 5, Missed: 7,
		Pending: 2, Unknown: FieldMissed}, s.only("vfs_read"))
}
