package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/funcset"
	"tracebench/internal/poll"
	"tracebench/internal/testenv"
	"tracebench/tracers"
	"tracebench/workload"
)

// manyFunctionChecks are the checks of manyFunctionRows, by name: their
// functions come from what the running kernel runs (funcset's readpath,
// the functions a thread's exit runs, a function_graph trace of one
// event's life), built with the mechanism's attach kinds, never from a
// list kept here.
func manyFunctionChecks() map[string]scenario {
	return map[string]scenario{
		"nested-calls": {
			functions: nestedFunctions,
			check:     checkNested,
		},
		"refused-in-set": {
			functions: withRefused(kernelRefusal),
			check:     checkRefused,
		},
		"untraceable-in-set": {
			functions: withRefused(outsideFtrace),
			check:     checkRefused,
		},
		"own-path": {
			functions: ownPathFunctions,
			check:     checkOwnPath,
			reenters:  true,
			consumes:  true,
			lingers:   true, // fentry-fexit-each: 6 entries left in get_signal at the helper's exit, 0 missed
		},
		"detach-in-flight": {
			functions:   readpathFunctions,
			whenBlocked: tracers.Tracer.Detach,
			check:       checkDetached,
			needs:       tracers.FieldPending,
			provokes:    tracers.LossRecursion | tracers.LossRethookPool | tracers.LossReturnPool,
			inFlight:    detachReaders,
		},
		"vfs-read-in-set": {
			functions: vfsReadAmongCold,
			check:     func(t *testing.T, r run) { agreement.check(t, r.of(tracers.DefaultFunction)) },
		},
	}
}

// pipeRead says which workload reads read a pipe: through vfs_read, each
// calls the pipe's f_op->read once.
func pipeRead(op workload.Op) bool { return pipeReads[op] }

var pipeReads = opSet{workload.PipeRead: true, workload.DelayedPipeRead: true, workload.EmptyPipeRead: true,
	workload.InterruptedRead: true, workload.KilledRead: true}

// kernelFunctions is what the rows draw their functions from, found once
// per test process: the kernel's lists, the readpath trace, the functions
// a thread's exit runs, and the kernel's refusals of all of them for every
// attach kind of a mechanism that traces many functions.
type kernelFunctions struct {
	inv      *funcset.Inventory
	readpath *funcset.Readpath
	exit     []funcset.Called
}

var kernelFunctionsOnce = sync.OnceValues(findKernelFunctions)

// kernelSets returns the kernel's functions, or skips the row for every
// mechanism when the kernel cannot say what they are.
func kernelSets(t *testing.T, m tracers.Mechanism, row string) *kernelFunctions {
	kf, err := kernelFunctionsOnce()
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrInvalid) {
		outcomes.skipScenario(t, m.Name, row, "the row finds its functions with function_graph in a tracefs "+
			"instance (CONFIG_FUNCTION_GRAPH_TRACER) and the kernel's BTF: "+err.Error())
	}
	require.NoError(t, err)
	return kf
}

// findKernelFunctions traces the readpath and the exit path in one
// function_graph instance: turning it on and off costs seconds each.
func findKernelFunctions() (*kernelFunctions, error) {
	inv, err := funcset.ReadKernel()
	if err != nil {
		return nil, err
	}
	kf := &kernelFunctions{inv: inv}
	tids, exit := make(chan int), make(chan struct{})
	go exitingThread(tids, exit)
	tid, leave := <-tids, sync.OnceFunc(func() { close(exit) })
	defer leave()
	err = funcset.WithFuncGraph(exitPathBufferKB, []int{tid}, func(g *funcset.FuncGraph) (err error) {
		if kf.exit, err = exitPath(g, tid, leave); err != nil {
			return err
		}
		kf.readpath, err = g.Readpath(3)
		return err
	})
	if err != nil {
		return nil, err
	}
	names := namesOf(kf.exit)
	for _, f := range kf.readpath.Functions {
		names = append(names, f.Name)
	}
	return kf, askRefusals(inv, names)
}

// exitPathBufferKB holds a thread's exit, the larger of the two traces.
const exitPathBufferKB = 1024

// exitPath returns the functions the thread tid of exitingThread runs
// to exit once leave is called: the Go runtime ends it with exit(2).
func exitPath(g *funcset.FuncGraph, tid int, leave func()) ([]funcset.Called, error) {
	return g.Threads([]int{tid}, func() error {
		leave()
		return poll.Until(time.Now().Add(workload.StartTimeout), time.Millisecond, "the thread's exit",
			func() (bool, error) {
				_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
				return errors.Is(err, os.ErrNotExist), nil
			})
	})
}

// exitingThread sends the ID of a thread that exits once exit is closed.
// The runtime never ends the main thread (it parks it instead: the CI
// guest's exit-path trace then timed out), so a goroutine given it holds
// it while another goroutine takes a thread of its own.
func exitingThread(tids chan<- int, exit <-chan struct{}) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	if tid := unix.Gettid(); tid != unix.Getpid() {
		tids <- tid
		<-exit
		return
	}
	other := make(chan int)
	go exitingThread(other, exit)
	tid := <-other
	runtime.UnlockOSThread()
	tids <- tid
}

func namesOf(called []funcset.Called) []string {
	names := make([]string, len(called))
	for i, c := range called {
		names[i] = c.Name
	}
	return names
}

// askRefusals records in inv which of names the kernel refuses to attach
// with each kind a mechanism traces many functions with, where the lists
// let the kind attach them (funcset's Inventory.Refused). A kind the
// kernel has no bulk link for is left out: its mechanisms skip anyway.
// A name asked about once for a kind is not asked again (asked): each
// ask attaches the names, seconds per few hundred under TCG.
func askRefusals(inv *funcset.Inventory, names []string) error {
	for _, kind := range manyKinds() {
		attachable := inv.Attachable(kind) // sorted
		if asked[kind] == nil {
			asked[kind] = map[string]bool{}
		}
		ask := slices.DeleteFunc(slices.Clone(names), func(n string) bool {
			_, found := slices.BinarySearch(attachable, n)
			return !found || asked[kind][n]
		})
		if len(ask) == 0 {
			continue
		}
		ask = slices.Compact(slices.Sorted(slices.Values(ask)))
		refused, err := tracers.RefusedFunctions(kind, ask)
		if errors.Is(err, tracers.ErrUnsupported) {
			continue
		}
		if err != nil {
			return err
		}
		if inv.Refused[kind] == nil {
			inv.Refused[kind] = map[string]string{}
		}
		maps.Copy(inv.Refused[kind], refused)
		for _, n := range ask {
			asked[kind][n] = true
		}
	}
	return nil
}

// asked are the names askRefusals asked the kernel about, per kind, in
// this process (the kernel's answer does not change while it runs; the
// rows run one at a time).
var asked = map[funcset.Kind]map[string]bool{}

// manyKinds are the attach kinds of the mechanisms that trace many
// functions.
func manyKinds() []funcset.Kind {
	var kinds []funcset.Kind
	for _, m := range tracers.Mechanisms() {
		if m.Can.Functions.Many {
			kinds = append(kinds, m.Can.Functions.Kinds...)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(kinds)))
}

// readpathOf returns the readpath set built for m's attach kinds.
func (kf *kernelFunctions) readpathOf(t *testing.T, m tracers.Mechanism) *funcset.Set {
	set, err := kf.inv.Readpath(kf.readpath, m.Can.Functions.Kinds)
	require.NoError(t, err)
	return set
}

// pipeOp returns the pipe's f_op->read: the function readpath saw vfs_read
// call on every pipe read and on no read of /dev/zero (anon_pipe_read in
// 7.2, pipe_read before).
func (kf *kernelFunctions) pipeOp(t *testing.T) funcset.Found {
	found := kf.readpath.CalledOnlyBy(tracers.DefaultFunction, funcset.SourcePipe)
	require.Len(t, found, 1, "functions readpath saw vfs_read call on pipe reads alone: %+v", found)
	return found[0]
}

// truth says which reads call each function of set once, where the
// workload's ground truth knows: vfs_read, the functions readpath saw on
// the way to it (the read(2) handler), the pipe's f_op->read.
func (kf *kernelFunctions) truth(t *testing.T, set []string) map[string]func(workload.Op) bool {
	through := map[string]func(workload.Op) bool{tracers.DefaultFunction: throughVFSRead, kf.pipeOp(t).Name: pipeRead}
	for _, f := range kf.readpath.Functions {
		if f.Name == tracers.DefaultFunction {
			for _, caller := range strings.Split(f.Path, "/") {
				through[caller] = readSyscall
			}
		}
	}
	maps.DeleteFunc(through, func(name string, _ func(workload.Op) bool) bool { return !slices.Contains(set, name) })
	return through
}

// blocked returns the functions of set a pipe read blocked in the pipe is
// inside: the pipe's f_op->read and its callers.
func (kf *kernelFunctions) blocked(t *testing.T, set []string) []string {
	op := kf.pipeOp(t)
	chain := append(strings.Split(op.Path, "/"), op.Name)
	return slices.DeleteFunc(chain, func(name string) bool { return !slices.Contains(set, name) })
}

// readpathFunctions traces the readpath set.
func readpathFunctions(t *testing.T, m tracers.Mechanism, row string) traced {
	kf := kernelSets(t, m, row)
	set := kf.readpathOf(t, m).Functions()
	return traced{functions: set, through: kf.truth(t, set), blocked: kf.blocked(t, set)}
}

// vfsReadAmongCold traces vfs_read and coldCompanions functions of
// funcset's n<N> draw (away from readpath and from what a quiet system
// calls) that the kernel attaches with m's kinds.
func vfsReadAmongCold(t *testing.T, m tracers.Mechanism, row string) traced {
	kf := kernelSets(t, m, row)
	if kf.inv.Quiet == nil {
		quiet, err := funcset.MeasureQuiet(time.Second, 4096)
		require.NoError(t, err, "what a quiet system calls (the function tracer)")
		kf.inv.Quiet = quiet
	}
	readpath := kf.readpathOf(t, m)
	// The draw excludes what the kernel refused when asked; ask about
	// each draw until it holds nothing refused.
	for range 4 {
		set, err := kf.inv.Draw(coldCompanions, m.Can.Functions.Kinds, readpath)
		require.NoError(t, err)
		refused := len(kf.refusedOf(m))
		require.NoError(t, askRefusals(kf.inv, set.Functions()))
		if len(kf.refusedOf(m)) == refused {
			functions := append([]string{tracers.DefaultFunction}, set.Functions()...)
			return traced{functions: functions, through: kf.truth(t, functions)}
		}
	}
	require.FailNow(t, "the kernel kept refusing functions of the draw")
	return traced{}
}

// refusedOf returns the functions the kernel refused for one of m's kinds
// when asked.
func (kf *kernelFunctions) refusedOf(m tracers.Mechanism) map[string]bool {
	refused := map[string]bool{}
	for _, kind := range m.Can.Functions.Kinds {
		for name := range kf.inv.Refused[kind] {
			refused[name] = true
		}
	}
	return refused
}

// nestedFunctions traces vfs_read and the pipe's f_op->read, which it
// calls.
func nestedFunctions(t *testing.T, m tracers.Mechanism, row string) traced {
	kf := kernelSets(t, m, row)
	set := kf.readpathOf(t, m)
	functions := []string{tracers.DefaultFunction, kf.pipeOp(t).Name}
	for _, f := range functions {
		if !set.Has(f) {
			outcomes.skipCell(t, m.Name, row, fmt.Sprintf("the kernel does not let %s attach %s: %s",
				m.Name, f, reasonOf(set.Excluded, f)))
		}
	}
	return traced{functions: functions, through: kf.truth(t, functions)}
}

func reasonOf(entries []funcset.Entry, name string) string {
	if i := slices.IndexFunc(entries, func(e funcset.Entry) bool { return e.Name == name }); i >= 0 {
		return entries[i].Reason
	}
	return "not seen on the read path"
}

// withRefused traces the readpath set and a function the mechanism's
// kinds cannot attach, chosen by pick.
func withRefused(pick func(t *testing.T, kf *kernelFunctions, m tracers.Mechanism, row string) string) func(
	*testing.T, tracers.Mechanism, string) traced {
	return func(t *testing.T, m tracers.Mechanism, row string) traced {
		kf := kernelSets(t, m, row)
		set := kf.readpathOf(t, m).Functions()
		bad := pick(t, kf, m, row)
		return traced{functions: append(set, bad), refused: bad}
	}
}

// kernelRefusal returns the first function of a thread's exit, then of
// readpath, that the kernel refused for one of m's kinds when asked, else
// the first the lists refuse to one of m's kinds alone (funcset's
// OwnRefusals: for kprobe, which the kernel is not asked about in bulk, a
// name kallsyms shares or the kprobes blacklist holds); it skips the row
// for m when there is none.
func kernelRefusal(t *testing.T, kf *kernelFunctions, m tracers.Mechanism, row string) string {
	candidates := namesOf(kf.exit)
	for _, f := range kf.readpath.Functions {
		candidates = append(candidates, f.Name)
	}
	for _, name := range candidates {
		for _, kind := range m.Can.Functions.Kinds {
			if _, ok := kf.inv.Refused[kind][name]; ok {
				return name
			}
		}
	}
	for _, kind := range m.Can.Functions.Kinds {
		if own := kf.inv.OwnRefusals(kind); len(own) > 0 {
			t.Logf("the lists refuse %s %d functions another kind attaches, %s first", kind, len(own), own[0])
			return own[0]
		}
	}
	outcomes.skipCell(t, m.Name, row, fmt.Sprintf("the kernel refuses %s none of the %d functions a "+
		"read(2) and a thread's exit run, and the lists none that another kind attaches",
		kindNames(m.Can.Functions.Kinds), len(candidates)))
	return ""
}

// outsideFtrace returns the first (in funcset's rank order) function of
// the kernel's BTF that ftrace cannot patch.
func outsideFtrace(t *testing.T, kf *kernelFunctions, _ tracers.Mechanism, _ string) string {
	names := kf.inv.OutsideFtrace()
	require.NotEmpty(t, names, "BTF functions outside available_filter_functions")
	return names[0]
}

func kindNames(kinds []funcset.Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, " and ")
}

// of returns the view of function, which r traced.
func (r run) of(function string) run {
	for _, f := range r.functions() {
		if f.function == function {
			return f
		}
	}
	panic(fmt.Sprintf("%s is not traced: %v", function, r.cfg.TracedFunctions()))
}

// checkNested: at threshold 0 each function's calls are its events, one
// per read through it, its errors the failed ones; the i-th read through both functions is the i-th
// event of each on its thread, the inner one no longer than the outer,
// which user space's duration encloses; the delayed read is slow in
// both; where both results are known they are the read's.
func checkNested(t *testing.T, r run) {
	outer, inner := r.of(r.traced.functions[0]), r.of(r.traced.functions[1])
	for _, f := range []run{outer, inner} {
		assertEverySlow(t, f)
		if f.knows(t, tracers.FieldDropped, "dropped == 0") {
			assert.Zero(t, f.stats.Dropped, "%s: dropped", f.function)
		}
		testenv.AssertShortByMissed(t, uint64(len(f.events)), f.reads(), r.stats.Missed, f.function+": events, one per call")
		if f.stats.Missed == 0 && f.knows(t, tracers.FieldErrors, "errors == failed reads through it") {
			through := slices.DeleteFunc(slices.Clone(r.truth.Reads), func(rd workload.Read) bool { return !f.through()(rd.Op) })
			assert.Equal(t, uint64(len(expectedErrors(through))), f.stats.Errors, "%s: errors == failed reads through it",
				f.function)
		}
	}
	delayed := r.truth.Of(workload.DelayedPipeRead)
	require.Len(t, delayed, 1)
	if r.can.EventsInReturnOrder() {
		checkNestedInOrder(t, r, outer, inner)
	} else {
		checkNestedUnordered(t, r, outer, inner, delayed[0])
	}
	t.Logf("%d reads; %s: %d events, %s: %d events; the delayed read took %v in user space", len(r.truth.Reads),
		outer.function, len(outer.events), inner.function, len(inner.events), delayed[0].Duration)
}

// checkNestedInOrder pairs the i-th read through a function with the
// i-th event of that function on the read's thread.
func checkNestedInOrder(t *testing.T, r run, outer, inner run) {
	outers, inners := eventsByThread(outer.events), eventsByThread(inner.events)
	// next takes the thread's next event of one function.
	next := func(events map[uint32][]tracers.Event, f string, rd workload.Read) (tracers.Event, bool) {
		tid := uint32(rd.TID)
		if !assert.NotEmpty(t, events[tid], "an event of %s for %+v", f, rd) {
			return tracers.Event{}, false
		}
		ev := events[tid][0]
		events[tid] = events[tid][1:]
		return ev, true
	}
	for _, rd := range r.truth.Reads {
		if !outer.through()(rd.Op) {
			continue
		}
		out, ok := next(outers, outer.function, rd)
		if !ok || !inner.through()(rd.Op) {
			continue
		}
		in, ok := next(inners, inner.function, rd)
		if !ok {
			continue
		}
		assert.LessOrEqual(t, in.Latency, out.Latency, "inner %+v within outer %+v", in, out)
		assert.LessOrEqual(t, out.Latency, rd.Duration, "%+v within the read's user-space duration %+v", out, rd)
		for _, ev := range []tracers.Event{out, in} {
			if rd.Op == workload.DelayedPipeRead {
				assert.GreaterOrEqual(t, ev.Latency, workload.DefaultPipeDelay, "the delayed read is slow in %s: %+v",
					ev.Function, ev)
			}
			if r.eventKnows(t, ev, tracers.FieldResult, ev.Function+" returns the read's result") {
				assert.Equal(t, rd.Result, ev.Result, "%s returned the read's result: %+v, %+v", ev.Function, ev, rd)
			}
		}
	}
}

// checkNestedUnordered holds events that arrive in no particular order
// (Capabilities.EventsInReturnOrder false) to the reads without pairing
// them by position: on each thread a function's results are those of the
// reads through it and no event outlasts the thread's longest read; the
// delayed read is slow in both functions; each inner event has an outer
// one of its own (outerForEveryInner).
func checkNestedUnordered(t *testing.T, r run, outer, inner run, delayed workload.Read) {
	for _, f := range []run{outer, inner} {
		events := eventsByThread(f.events)
		for tid, reads := range readsByThread(r.truth.Reads, f.through()) {
			longest := slices.MaxFunc(reads, func(a, b workload.Read) int { return cmp.Compare(a.Duration, b.Duration) })
			for _, ev := range events[tid] {
				assert.LessOrEqual(t, ev.Latency, longest.Duration, "%+v within thread %d's longest read %+v", ev, tid, longest)
			}
			if f.stats.Missed == 0 && observed(t, r.mechanism, unknownOf(events[tid]), tracers.FieldResult,
				f.function+" returns the reads' results") {
				assert.ElementsMatch(t, resultsOf(reads, func(rd workload.Read) int64 { return rd.Result }),
					resultsOf(events[tid], func(ev tracers.Event) int64 { return ev.Result }),
					"%s: results of thread %d's reads through it", f.function, tid)
			}
		}
		assert.True(t, slices.ContainsFunc(events[uint32(delayed.TID)], func(ev tracers.Event) bool {
			return ev.Latency >= workload.DefaultPipeDelay
		}), "the delayed read %+v is slow in %s", delayed, f.function)
	}
	outerForEveryInner(t, outer.events, inner.events)
}

// outerForEveryInner: each thread's inner events can be paired with
// distinct outer events of that thread, each returning the same where both
// results are known and taking at least as long (smallest fitting outer
// first, inner events shortest first: such a pairing exists if this one
// does).
func outerForEveryInner(t *testing.T, outers, inners []tracers.Event) {
	byLatency := func(a, b tracers.Event) int { return cmp.Compare(a.Latency, b.Latency) }
	outers = slices.SortedFunc(slices.Values(outers), byLatency)
	used := make([]bool, len(outers))
	for _, in := range slices.SortedFunc(slices.Values(inners), byLatency) {
		k := -1
		for j, o := range outers {
			if !used[j] && o.PID == in.PID && o.Latency >= in.Latency &&
				((in.Unknown | o.Unknown).Has(tracers.FieldResult) || o.Result == in.Result) {
				k = j
				break
			}
		}
		if assert.GreaterOrEqual(t, k, 0, "an outer event of the thread, as long and with the same result, for %+v", in) {
			used[k] = true
		}
	}
}

func eventsByThread(events []tracers.Event) map[uint32][]tracers.Event {
	out := map[uint32][]tracers.Event{}
	for _, ev := range events {
		out[ev.PID] = append(out[ev.PID], ev)
	}
	return out
}

func readsByThread(reads []workload.Read, through func(workload.Op) bool) map[uint32][]workload.Read {
	out := map[uint32][]workload.Read{}
	for _, rd := range reads {
		if through(rd.Op) {
			out[uint32(rd.TID)] = append(out[uint32(rd.TID)], rd)
		}
	}
	return out
}

// resultsOf maps each of xs to the result it holds.
func resultsOf[T any](xs []T, result func(T) int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = result(x)
	}
	return out
}

// unknownOf is every field some of events could not observe.
func unknownOf(events []tracers.Event) tracers.Fields {
	var unknown tracers.Fields
	for _, ev := range events {
		unknown |= ev.Unknown
	}
	return unknown
}

// checkRefused: Start refused the set, naming the function its kinds
// cannot attach, and that one alone, with the reason the kernel gave when
// asked (funcset's exclusion) where it was asked.
func checkRefused(t *testing.T, r run) {
	var refused *tracers.FunctionsRefusedError
	require.ErrorAs(t, r.startErr, &refused, "Start of a set holding %s", r.traced.refused)
	t.Logf("refused: %v", r.startErr)
	assert.Equal(t, r.mechanism, refused.Mechanism)
	assert.Contains(t, r.can.Functions.Kinds, refused.Kind, "the refusing kind is one the mechanism attaches with")
	assert.Equal(t, []string{r.traced.refused}, slices.Collect(maps.Keys(refused.Refused)), "the refused functions")
	assert.Equal(t, len(r.traced.functions), refused.Of, "functions asked for")
	reason := refused.Refused[r.traced.refused]
	assert.NotEmpty(t, reason, "the kernel's reason")
	assert.Contains(t, r.startErr.Error(), r.traced.refused+": "+reason, "the error names the function and its reason")
	kf, err := kernelFunctionsOnce()
	require.NoError(t, err)
	if asked, ok := kf.inv.Refused[refused.Kind][r.traced.refused]; ok {
		assert.Contains(t, asked, reason, "the reason the kernel gave when asked (the set's exclusion)")
	}
}

// checkDetached: the readers blocked at detach are in flight in every
// function they are inside (checkAccounting holds each function to it);
// nothing after the detach was counted.
func checkDetached(t *testing.T, r run) {
	require.Equal(t, uint64(detachReaders), r.detached, "readers blocked at detach")
	for _, f := range r.functions() {
		if slices.Contains(r.traced.blocked, f.function) {
			t.Logf("%s: %d calls, %d pending (%d held, %d counted nowhere)", f.function, f.stats.Calls, f.stats.Pending,
				f.want.heldAtDetach, f.want.unseenAtDetach)
		}
	}
	assert.NotEmpty(t, r.traced.blocked, "functions of the set a blocked pipe read is inside")
}

// ownPathFunctions traces the readpath set and the ownPathMost functions
// one event's life runs least often with m attached (ownPath), as the set
// builder takes them for m's kinds.
func ownPathFunctions(t *testing.T, m tracers.Mechanism, row string) traced {
	kf := kernelSets(t, m, row)
	readpath := kf.readpathOf(t, m).Functions()
	called, err := ownPath(m, readpath)
	if errors.Is(err, tracers.ErrUnsupported) {
		outcomes.skip(t, m.Name, row, err.Error())
	}
	require.NoError(t, err)
	require.NoError(t, askRefusals(kf.inv, namesOf(called)))
	slices.SortStableFunc(called, func(a, b funcset.Called) int { return cmp.Compare(a.Calls, b.Calls) })
	seen := make([]funcset.Entry, len(called))
	for i, c := range called {
		seen[i] = funcset.Entry{Name: c.Name, Reason: fmt.Sprintf("%d call(s) in one event's life", c.Calls)}
	}
	set, err := kf.inv.Select("ownpath", "function_graph of one event's life", seen, m.Can.Functions.Kinds)
	require.NoError(t, err)
	functions := readpath
	for _, f := range set.Functions() {
		if len(functions) == len(readpath)+ownPathMost {
			break
		}
		if !slices.Contains(functions, f) {
			functions = append(functions, f)
		}
	}
	t.Logf("one event's life with %s attached ran %d functions, %d of which it attaches: tracing the %d least called "+
		"with readpath, %d in all; left out: %v", m.Name, len(called), len(set.Members), len(functions)-len(readpath),
		len(functions), set.Excluded)
	return traced{functions: functions, through: kf.truth(t, functions)}
}

// ownPath returns the functions one event's life runs with m tracing
// functions: function_graph traces the helper's reading thread, from its
// pipe read's entry to its next read's sleep, and the thread that waits
// for the event in ReadEvent from before the read to the event.
func ownPath(m tracers.Mechanism, functions []string) (_ []funcset.Called, err error) {
	delay := workload.DefaultPipeDelay
	helper, err := workload.Start(workload.Plan{workload.DelayedPipeReads(1, delay), workload.DelayedPipeReads(1, delay)})
	if err != nil {
		return nil, err
	}
	defer helper.Close()
	tr, err := m.Start(tracers.Config{TGID: helper.TGID(), Functions: functions})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, tr.Close()) }()

	consumer, read, event := make(chan int), make(chan struct{}), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		consumer <- unix.Gettid()
		<-read
		_, err := tr.ReadEvent(time.Now().Add(workloadTimeout))
		event <- err
	}()
	// The helper's second read waits, asleep, until the trace is over.
	secondBlocked, traced, ran := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	helper.WhenBlocked(func(step int, _ []int) error {
		if step == 1 {
			close(secondBlocked)
			<-traced
		}
		return nil
	})
	running := false
	called, err := funcset.TraceThreads([]int{helper.MainTID(), <-consumer}, 4096, func() error {
		close(read)
		running = true
		go func() {
			_, err := helper.Run(workloadTimeout)
			ran <- err
		}()
		if err := <-event; err != nil {
			return fmt.Errorf("the event of the first read: %w", err)
		}
		select {
		case <-secondBlocked:
			return nil
		case err := <-ran:
			return fmt.Errorf("the helper ended before its second read blocked: %v", err)
		}
	})
	close(traced)
	if running {
		err = errors.Join(err, <-ran)
	}
	return called, err
}

// checkOwnPath: the invariants hold with the nested runs the kernel
// skipped, counted in Missed; each entry left behind is a return the
// kernel skipped or a call of a helper's thread asleep in the function at
// detach (a thread counts once, Sleep.In: one asleep in a function twice
// fails the bound, it hides no loss); it logs them.
func checkOwnPath(t *testing.T, r run) {
	assertCallsCountReads(t, r.of(tracers.DefaultFunction))
	for _, f := range r.functions() {
		if f.knows(t, tracers.FieldPending|tracers.FieldMissed, "pending <= missed") {
			asleep := r.asleep.In(f.function)
			if asleep > 0 {
				t.Logf("%s: %d entries left behind, %d threads asleep in it at detach", f.function, f.stats.Pending, asleep)
			}
			assert.LessOrEqual(t, f.stats.Pending-min(f.stats.Pending, asleep), f.stats.Missed,
				"%s: entries left behind beyond the %d of threads asleep in it at detach <= runs missed",
				f.function, asleep)
		}
	}
	t.Logf("%d functions traced: %d calls, %d missed (system-wide), %d dropped, %d events", len(r.traced.functions),
		r.stats.Calls, r.stats.Missed, r.stats.Dropped, len(r.events))
}
