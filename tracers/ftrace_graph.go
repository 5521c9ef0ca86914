package tracers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tracebench/funcset"
	"tracebench/internal/tracefs"
)

// ftrace-graph: no BPF. The kernel's function_graph tracer on the traced
// functions (set_ftrace_filter) in a private tracefs instance, threshold in
// the global tracing_thresh, TGID filter in set_ftrace_pid; events from
// trace_pipe. The ring buffer counts records, not per function.
var ftraceGraph = Mechanism{
	Name: "ftrace-graph",
	Summary: "the kernel's function_graph tracer on the traced functions (set_ftrace_filter) in a private tracefs" +
		" instance (no BPF); events parsed from trace_pipe",
	Can: Capabilities{
		Role:                RoleSubject,
		ThresholdResolution: time.Microsecond, // tracing_thresh
		State:               StateKernel,
		// Nothing below tracing_thresh is recorded; no arguments or return
		// value (no CONFIG_FUNCTION_GRAPH_RETVAL); Slow and Dropped are
		// ring buffer counts, not call counts at threshold 0 (2 records a
		// call); the TGID comes from /proc, gone with an exited thread.
		Blind: Blind{
			Stats:       FieldCalls | FieldErrors | FieldMissed | FieldPending | FieldLost,
			StatsAtZero: FieldSlow | FieldDropped,
			Event:       FieldRequested | FieldResult,
			EventMay:    FieldTGID,
		},
		KillLeaves: ResidueTracefsInstance,
		Functions: FunctionSupport{Many: true, Kinds: []funcset.Kind{funcset.Graph},
			Shared: FieldSlow | FieldDropped},
	},
	// Instances got function_graph with the function graph's multiple
	// users (6.11): 6.1's list none, 6.12's do.
	Needs: Requirement{"tracefs with the function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER) usable in an instance",
		KernelVersion{6, 11}},
	probe: probeFtraceGraph,
	start: startFtraceGraph,
}

func probeFtraceGraph(m Mechanism) error {
	root, err := tracefs.Root()
	if errors.Is(err, os.ErrNotExist) {
		return m.unsupported(err.Error())
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return requireGraphTracer(m, filepath.Join(root, "available_tracers"))
}

// requireGraphTracer checks that the available_tracers file at path lists
// function_graph.
func requireGraphTracer(m Mechanism, path string) error {
	available, err := tracefs.Read(path)
	if err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	if !slices.Contains(strings.Fields(available), "function_graph") {
		return m.unsupported(fmt.Sprintf("%s lists %q", path, available))
	}
	return nil
}

// ftraceGraphTracer is the Tracer of ftrace-graph.
type ftraceGraphTracer struct {
	cfg          Config
	fns          functionTable
	index        map[string]uint32 // of fns, by name
	in           tracefs.Instance
	thresholdSet bool              // this tracer set the global tracing_thresh
	oldOptions   []tracefs.Setting // graphOptions' values before setUp
	pipe         *tracefs.Pipe
	reader       *pipeThread // where trace_pipe is read
	forks        *forkWatch  // under a TGID filter, the TGIDs of new tasks
	tasks        taskNames
	// foreign counts records of child processes that function-fork
	// followed and event dropped: they are not calls of cfg.TGID.
	foreign   uint64
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func startFtraceGraph(m Mechanism, cfg Config) (_ Tracer, err error) {
	root, err := tracefs.Root()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	if _, err := tracefs.ReclaimStale(); err != nil {
		return nil, fmt.Errorf("%s: reclaim instances of dead tracebench processes: %w", m.Name, err)
	}
	thresholdUS := int64(cfg.Threshold / time.Microsecond)
	unlock, err := tracefs.LockThresh(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	defer unlock()
	if err := checkGlobalTracefs(root, thresholdUS); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	in, err := tracefs.NewInstance(root, tracefs.ThreshSuffix(thresholdUS))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	t := &ftraceGraphTracer{cfg: cfg, fns: newFunctionTable(m.Can, cfg), in: in, tasks: taskNames{root: root},
		reader: startPipeThread()}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := requireGraphTracer(m, filepath.Join(in.Dir, "available_tracers")); err != nil {
		return nil, err
	}
	if err := t.setUp(thresholdUS); err != nil {
		return nil, m.stepError("", err)
	}
	return t, nil
}

// setUp configures the instance, starts the tracer and opens trace_pipe;
// the order matters: tracing_thresh is read when function_graph starts.
func (t *ftraceGraphTracer) setUp(thresholdUS int64) error {
	for _, o := range graphOptions {
		old, err := tracefs.Read(filepath.Join(t.in.Dir, o.File))
		if err != nil {
			return err
		}
		t.oldOptions = append(t.oldOptions, tracefs.Setting{File: o.File, Value: old})
		if err := t.in.Write(o.File, o.Value); err != nil {
			return err
		}
	}
	if err := t.in.WriteAll(instanceSettings); err != nil {
		return err
	}
	if err := t.filterFunctions(); err != nil {
		return err
	}
	if n := t.cfg.RingBufferBytes; n > 0 {
		if err := t.in.Write("buffer_size_kb", strconv.Itoa(max(1, n/1024))); err != nil {
			return err
		}
	}
	if err := t.filterTGID(); err != nil {
		return err
	}
	if err := t.in.Write("set_ftrace_notrace_pid", strconv.Itoa(t.reader.tid)); err != nil {
		return err
	}
	if thresholdUS > 0 {
		if err := tracefs.Write(filepath.Join(t.in.Root, "tracing_thresh"), strconv.FormatInt(thresholdUS, 10)); err != nil {
			return err
		}
		t.thresholdSet = true
	}
	// The tracer cannot change while trace_pipe is open (EBUSY).
	if err := t.in.Write("current_tracer", "function_graph"); err != nil {
		return err
	}
	pipe, err := t.in.OpenPipe()
	t.pipe = pipe
	return err
}

// filterFunctions traces the functions of t.fns alone. It writes each
// function's line numbers in available_filter_functions (Linux 5.1,
// f79b3f338564), not its name: for a name the kernel looks up the symbol
// of every ftrace record (~0.5 s a function in a 7.2 TCG guest). A
// function the list lacks is named in a *FunctionsRefusedError; the filter
// read back must hold exactly the functions named, whatever loaded between.
func (t *ftraceGraphTracer) filterFunctions() error {
	lines, err := filterLines(filepath.Join(t.in.Root, "available_filter_functions"))
	if err != nil {
		return err
	}
	why := map[string]string{}
	var indexes, want []string
	for _, name := range t.fns.names {
		if len(lines[name]) == 0 {
			why[name] = refusedBecause("not in available_filter_functions")
		}
		for _, line := range lines[name] {
			indexes, want = append(indexes, strconv.Itoa(line)), append(want, name)
		}
	}
	if len(why) > 0 {
		return &FunctionsRefusedError{Kind: funcset.Graph, Refused: why, Of: len(t.fns.names)}
	}
	refused, err := t.in.WriteEach("set_ftrace_filter", indexes)
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return fmt.Errorf("set_ftrace_filter refused line numbers of available_filter_functions: %v", refused)
	}
	if err := t.checkFilter(want); err != nil {
		return err
	}
	t.index = make(map[string]uint32, len(t.fns.names))
	for i, name := range t.fns.names {
		t.index[name] = uint32(i)
	}
	return nil
}

// filterLines reads the available_filter_functions file at path: each
// name's line numbers, counted from 1 as set_ftrace_filter takes them.
func filterLines(path string) (map[string][]int, error) {
	names, err := filterNames(path)
	lines := make(map[string][]int, len(names))
	for i, name := range names {
		lines[name] = append(lines[name], i+1)
	}
	return lines, err
}

// filterNames returns the function of each line of an ftrace filter list
// (available_filter_functions, set_ftrace_filter: "name" or
// "name [module]"), in order.
func filterNames(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for line := range strings.Lines(string(raw)) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		names = append(names, name)
	}
	return names, nil
}

// checkFilter fails unless set_ftrace_filter lists the functions of want
// (a name once per line written): available_filter_functions may have
// changed after filterLines read it (a module loaded or unloaded).
func (t *ftraceGraphTracer) checkFilter(want []string) error {
	got, err := filterNames(t.in.Path("set_ftrace_filter"))
	if err != nil {
		return err
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s lists %d functions where %d line numbers of available_filter_functions were written: "+
			"the list changed meanwhile (a module loaded?)", t.in.Path("set_ftrace_filter"), len(got), len(want))
	}
	return nil
}

// filterTGID limits tracing to the threads of cfg.TGID; function-fork adds
// threads (and child processes, whose events ReadEvent drops) created
// later. A TGID with no threads leaves tracing off: an empty
// set_ftrace_pid would trace every process.
func (t *ftraceGraphTracer) filterTGID() error {
	if t.cfg.TGID == 0 {
		return nil
	}
	tids, err := threadsOf(t.cfg.TGID)
	if err != nil {
		return err
	}
	if len(tids) == 0 {
		return t.in.Write("tracing_on", "0")
	}
	t.tasks.know(t.cfg.TGID, tids)
	if t.forks, err = startForkWatch(t.in.Root, tids); err != nil {
		return err
	}
	if err := t.in.Write("options/function-fork", "1"); err != nil {
		return err
	}
	return t.in.Write("set_ftrace_pid", strings.Join(tids, " "))
}

func (t *ftraceGraphTracer) ReadEvent(deadline time.Time) (Event, error) {
	for {
		if t.closed.Load() {
			return Event{}, fmt.Errorf("ftrace-graph: %w", os.ErrClosed)
		}
		if line, ok := t.pipe.Next(); ok {
			if ev, ok := t.event(line); ok {
				return ev, nil
			}
			continue
		}
		if err := t.fill(deadline); err != nil {
			return Event{}, err
		}
	}
}

// event turns a traced function's return line into an Event, filling
// TGID and the whole comm from what the kernel recorded for the pid.
func (t *ftraceGraphTracer) event(line string) (Event, bool) {
	ev, ok := parseGraphLine(line)
	if !ok {
		return Event{}, false
	}
	i, traced := t.index[ev.Function]
	if !traced || t.fns.fill(&ev, i) != nil {
		return Event{}, false
	}
	if t.tasks.stale(ev) {
		t.tasks.forget(ev.PID)
		if t.forks != nil {
			t.reader.run(func() { t.forks.drain(&t.tasks) }) // untraced thread
		}
	}
	t.tasks.fill(&ev)
	if t.cfg.TGID != 0 && !ev.Unknown.Has(FieldTGID) && ev.TGID != t.cfg.TGID {
		t.foreign++
		return Event{}, false
	}
	return ev, true
}

// fill reads trace_pipe on the reader thread, waiting until deadline.
func (t *ftraceGraphTracer) fill(deadline time.Time) error {
	var err error
	if !t.reader.run(func() { err = t.pipe.Read(deadline) }) || t.closed.Load() {
		return fmt.Errorf("ftrace-graph: trace_pipe: %w", os.ErrClosed)
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("ftrace-graph: %w", err)
	}
	return err
}

// Stats reads the instance's ring buffer counters. At a threshold above 0
// each record is one slow call: Slow counts records written or dropped
// (less those of other processes), Dropped those dropped.
func (t *ftraceGraphTracer) Stats() (Stats, error) {
	var s Stats
	s.Unknown, _ = ftraceGraph.Can.Blind.Under(t.cfg)
	if t.cfg.Threshold > 0 {
		counts, err := t.in.BufferCounts()
		if err != nil {
			return Stats{}, fmt.Errorf("ftrace-graph: %w", err)
		}
		lost := counts["overrun"] + counts["dropped events"]
		s.Slow = counts["entries"] + counts["read events"] + lost - t.foreign
		s.Dropped = lost
	}
	s.PerFunction = make([]FunctionStats, len(t.fns.names))
	for i, name := range t.fns.names {
		s.PerFunction[i] = FunctionStats{Function: name, Unknown: t.fns.stats[i]}
	}
	if len(s.PerFunction) == 1 {
		s.PerFunction[0] = s.only(t.fns.names[0])
	}
	return s, nil
}

// Detach turns tracing off; what is in the buffer stays readable.
func (t *ftraceGraphTracer) Detach() error {
	if t.closed.Load() {
		return nil
	}
	return t.in.Write("tracing_on", "0")
}

// Close removes the instance (an open trace_pipe would keep it busy, so
// that is closed first) and resets tracing_thresh if this tracer set it,
// before the removal: a SIGKILL in between then leaves an instance that
// ReclaimStale removes, never a threshold nothing would reset.
func (t *ftraceGraphTracer) Close() error {
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		var errs []error
		if t.pipe != nil {
			errs = append(errs, t.pipe.Close())
		}
		if t.thresholdSet {
			errs = append(errs, tracefs.Write(filepath.Join(t.in.Root, "tracing_thresh"), "0"))
		}
		t.reader.stop()
		if t.forks != nil {
			errs = append(errs, t.forks.close())
		}
		for _, o := range slices.Backward(t.oldOptions) {
			errs = append(errs, t.in.Write(o.File, o.Value))
		}
		errs = append(errs, t.in.Remove())
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// ReclaimStale removes what SIGKILLed ftrace-graph tracers left in tracefs
// (instances, their tracing_thresh) and returns what it removed. Needs root.
func ReclaimStale() ([]string, error) { return tracefs.ReclaimStale() }
