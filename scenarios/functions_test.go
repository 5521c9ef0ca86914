package scenarios

import (
	"cmp"
	"errors"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/funcset"
	"tracebench/internal/testenv"
	"tracebench/tracers"
	"tracebench/tracers/tracerstest"
	"tracebench/workload"
)

// nestedPlan reads a file, then a pipe: delayed reads that block in the
// pipe's f_op->read, and non-blocking reads of an empty pipe that fail
// there with EAGAIN. Each pipe read is a call of vfs_read and, inside it,
// of the pipe's read; the file reads are calls of vfs_read alone.
var nestedPlan = workload.Plan{
	workload.FileReads(8, 64),
	workload.DelayedPipeReads(3, 20*time.Millisecond),
	workload.EmptyPipeReads(2),
}

// TestNestedFunctions traces vfs_read and the pipe's f_op->read (the one
// function readpath sees vfs_read call on a pipe read alone) with every
// mechanism that traces many functions, at threshold 0: each function's
// counters are exactly its calls (with no run missed), its errors the
// failed reads, and every call one event; each pipe read's inner event is
// followed by its vfs_read event, of the same thread, result and a
// latency at least the inner one's. Per-call state keyed by pid_tgid alone
// (iovisor/bcc #2548) fails it: the inner call's entry overwrites the
// outer's, and every outer pipe read is lost.
func TestNestedFunctions(t *testing.T) {
	requireRoot(t)
	inner := pipeRead(t)
	inv := readInventory(t)
	for _, m := range tracers.Mechanisms() {
		if !m.Can.Functions.Many {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			set, err := inv.Readpath(readpathFound, m.Can.Functions.Kinds)
			require.NoError(t, err)
			for _, f := range []string{tracers.DefaultFunction, inner} {
				require.True(t, set.Has(f), "the readpath set for %v holds %s: %+v", m.Can.Functions.Kinds, f, set.Excluded)
			}
			defer assertNoLeftovers(t)
			defer assertTracingThreshRestored(t)()
			functions := []string{tracers.DefaultFunction, inner}
			for attempt := 1; ; attempt++ {
				r, stats := traceNested(t, m, functions)
				if stats.Missed == 0 || attempt == maxAttempts {
					checkNested(t, m, r, stats)
					return
				}
				t.Logf("attempt %d: the kernel skipped %d program runs; repeating", attempt, stats.Missed)
			}
		})
	}
}

// traceNested runs nestedPlan under m tracing functions.
func traceNested(t *testing.T, m tracers.Mechanism, functions []string) (run, tracers.Stats) {
	sc := scenario{name: "nested-calls", plan: nestedPlan, config: func(helper uint32) tracers.Config {
		return tracers.Config{TGID: helper, Functions: functions}
	}}
	r := sc.attempt(t, m)
	t.Logf("%+v, %d events", r.stats, len(r.events))
	return r, r.stats
}

func checkNested(t *testing.T, m tracers.Mechanism, r run, stats tracers.Stats) {
	checkPerFunction(t, r)
	pipeReads := append(r.truth.Of(workload.DelayedPipeRead), r.truth.Of(workload.EmptyPipeRead)...)
	want := map[string]wantCalls{
		tracers.DefaultFunction: {calls: r.vfsReads(), errors: uint64(countErrors(r.truth))},
		r.cfg.Functions[1]:      {calls: uint64(len(pipeReads)), errors: uint64(countErrors(workload.Result{Reads: pipeReads}))},
	}
	byFunction := map[string][]tracers.Event{}
	for _, ev := range r.events {
		byFunction[ev.Function] = append(byFunction[ev.Function], ev)
	}
	for _, f := range stats.PerFunction {
		w := want[f.Function]
		statsUnknown, eventUnknown := m.Can.OfFunction(r.cfg, f.Function)
		assert.Equal(t, statsUnknown.String(), f.Unknown.String(), "%s: unknown counters (Capabilities.OfFunction)", f.Function)
		known := func(need tracers.Fields, check string) bool {
			return observed(t, m.Name, f.Unknown, need, f.Function+": "+check)
		}
		events := byFunction[f.Function]
		for _, ev := range events {
			assert.Equal(t, eventUnknown.String(), (ev.Unknown &^ m.Can.Blind.EventMay).String(),
				"%s: unknown fields of %+v", f.Function, ev)
			assertReadZero(t, eventValues(ev), ev.Unknown, "event")
		}
		if f.Unknown.Has(tracers.FieldCalls) { // every call is an event at threshold 0
			assert.GreaterOrEqual(t, uint64(len(events)), w.calls, "%s: events >= calls (calls unknown)", f.Function)
			continue
		}
		testenv.AssertShortByMissed(t, f.Calls, w.calls, stats.Missed, f.Function+": calls")
		if stats.Missed == 0 {
			assert.Equal(t, w.calls, f.Calls, "%s: calls", f.Function)
			if known(tracers.FieldLost|tracers.FieldPending, "lost == pending == 0") {
				assert.Zero(t, f.Lost+f.Pending, "%s: lost + pending", f.Function)
			}
			if known(tracers.FieldErrors, "errors == failed reads") {
				assert.Equal(t, w.errors, f.Errors, "%s: errors", f.Function)
			}
		}
		if known(tracers.FieldSlow|tracers.FieldDropped, "slow == calls == events") {
			assert.Equal(t, f.Calls, f.Slow, "%s: slow == calls at threshold 0", f.Function)
			assert.Equal(t, f.Slow, uint64(len(events))+f.Dropped, "%s: slow == events + dropped", f.Function)
		}
	}
	if m.Can.EventsInReturnOrder() {
		assertOuterAfterInner(t, r.events, r.cfg.Functions[1])
	} else {
		assertOuterForEveryInner(t, r.events, r.cfg.Functions[1])
	}
}

type wantCalls struct{ calls, errors uint64 }

// assertOuterAfterInner: every event of inner is followed, among the
// events of its thread, by a vfs_read event that took at least as long
// and returned the same where both results are known.
func assertOuterAfterInner(t *testing.T, events []tracers.Event, inner string) {
	for i, ev := range events {
		if ev.Function != inner {
			continue
		}
		j := slices.IndexFunc(events[i+1:], func(o tracers.Event) bool { return o.PID == ev.PID })
		if !assert.GreaterOrEqual(t, j, 0, "an event of the thread follows %+v", ev) {
			continue
		}
		outer := events[i+1+j]
		assert.Equal(t, tracers.DefaultFunction, outer.Function, "the event after %+v is its vfs_read's: %+v", ev, outer)
		assert.GreaterOrEqual(t, outer.Latency, ev.Latency, "outer latency >= inner: %+v, %+v", outer, ev)
		if !(ev.Unknown | outer.Unknown).Has(tracers.FieldResult) {
			assert.Equal(t, outer.Result, ev.Result, "the pipe's read returned what vfs_read did: %+v, %+v", outer, ev)
		}
	}
}

// assertOuterForEveryInner: for events in no particular order, each
// thread's events of inner can be paired with distinct vfs_read events of
// that thread, each returning the same where both results are known and
// taking at least as long (smallest fitting vfs_read first, inner events
// shortest first: such a pairing exists if this one does).
func assertOuterForEveryInner(t *testing.T, events []tracers.Event, inner string) {
	byLatency := func(a, b tracers.Event) int { return cmp.Compare(a.Latency, b.Latency) }
	inners := slices.SortedFunc(slices.Values(slices.DeleteFunc(slices.Clone(events),
		func(ev tracers.Event) bool { return ev.Function != inner })), byLatency)
	outers := slices.SortedFunc(slices.Values(slices.DeleteFunc(slices.Clone(events),
		func(ev tracers.Event) bool { return ev.Function != tracers.DefaultFunction })), byLatency)
	used := make([]bool, len(outers))
	for _, ev := range inners {
		fits := func(j int) bool {
			o := outers[j]
			return !used[j] && o.PID == ev.PID && o.Latency >= ev.Latency &&
				((ev.Unknown | o.Unknown).Has(tracers.FieldResult) || o.Result == ev.Result)
		}
		k := -1
		for j := range outers {
			if fits(j) {
				k = j
				break
			}
		}
		if assert.GreaterOrEqual(t, k, 0, "a vfs_read event of the thread, as long and with the same result, for %+v", ev) {
			used[k] = true
		}
	}
}

// TestRefusedFunctionNamed gives every mechanism that traces many
// functions vfs_read and a function of the kernel's BTF that ftrace cannot
// patch (not in available_filter_functions, so no attach kind takes it):
// Start fails naming that function alone with the kernel's reason, and
// leaves nothing attached; vfs_read alone then starts.
func TestRefusedFunctionNamed(t *testing.T) {
	requireRoot(t)
	untraceable := notPatchable(readInventory(t))
	for _, m := range tracers.Mechanisms() {
		if !m.Can.Functions.Many {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			defer assertNoLeftovers(t)
			defer assertTracingThreshRestored(t)()
			tr, err := m.Start(tracers.Config{Functions: []string{tracers.DefaultFunction, untraceable}})
			if errors.Is(err, tracers.ErrUnsupported) {
				t.Skip(err)
			}
			if err == nil {
				assert.NoError(t, tr.Close())
			}
			var refused *tracers.FunctionsRefusedError
			require.ErrorAs(t, err, &refused)
			t.Log(err)
			assert.Equal(t, m.Name, refused.Mechanism)
			assert.Equal(t, []string{untraceable}, slices.Collect(maps.Keys(refused.Refused)), "the refused functions")
			assert.Contains(t, m.Can.Functions.Kinds, refused.Kind)
			assert.Equal(t, 2, refused.Of)
			left, err := tracerstest.WaitNoLeftovers(releaseTimeout)
			require.NoError(t, err)
			require.Empty(t, left, "left attached after the refusal")
			tr, err = m.Start(tracers.Config{Functions: []string{tracers.DefaultFunction}})
			require.NoError(t, err)
			assert.NoError(t, tr.Close())
		})
	}
}

// readInventory reads the running kernel's function lists, skipping
// where kernel BTF or tracefs's available_filter_functions is missing.
func readInventory(t *testing.T) *funcset.Inventory {
	inv, err := funcset.ReadKernel()
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("tracing a set of functions needs kernel BTF and tracefs's available_filter_functions: %v", err)
	}
	require.NoError(t, err)
	return inv
}

// notPatchable returns the first vmlinux function, by name, that BTF has
// and available_filter_functions lacks.
func notPatchable(inv *funcset.Inventory) string {
	patchable := map[string]bool{}
	for _, e := range inv.Ftrace {
		patchable[e.Name] = true
	}
	var names []string
	for _, f := range inv.BTF {
		if !patchable[f.Name] && !f.Variadic {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	return names[0]
}

// pipeRead returns the pipe's f_op->read: the one function readpath sees
// vfs_read call on a pipe read alone, once per process.
func pipeRead(t *testing.T) string {
	readpathOnce.Do(func() { readpathFound, readpathErr = funcset.FindReadpath(3) })
	if errors.Is(readpathErr, os.ErrNotExist) || errors.Is(readpathErr, os.ErrInvalid) {
		t.Skipf("finding the pipe's read needs function_graph in a tracefs instance (CONFIG_FUNCTION_GRAPH_TRACER): %v",
			readpathErr)
	}
	require.NoError(t, readpathErr)
	found := readpathFound.CalledOnlyBy(tracers.DefaultFunction, funcset.SourcePipe)
	require.Len(t, found, 1, "functions vfs_read calls on pipe reads alone: %+v", found)
	return found[0].Name
}

var (
	readpathOnce  sync.Once
	readpathFound *funcset.Readpath
	readpathErr   error
)
