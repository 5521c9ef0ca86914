package tracers

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ftrace-graph: no BPF. The kernel's function_graph tracer in a private
// tracefs instance, limited to vfs_read by set_ftrace_filter (the instance
// has no set_graph_function, and tracing only vfs_read itself rather than
// its callees is the design being compared), the threshold in the global
// tracing_thresh, the TGID filter in set_ftrace_pid with function-fork, and
// events parsed from trace_pipe. It sees only what function_graph prints:
//   - calls below tracing_thresh are never recorded: Calls, Errors are unknown;
//   - no arguments or return value (these kernels lack
//     CONFIG_FUNCTION_GRAPH_RETVAL): Event.Requested, Event.Result are unknown;
//   - Slow and Dropped are the kernel's ring buffer counts (one record per
//     slow call), unknown at threshold 0, where a call is two records;
//   - Missed and Pending have no counterpart.
var ftraceGraph = Mechanism{
	Name:     "ftrace-graph",
	Summary:  "the kernel's function_graph tracer on vfs_read in a private tracefs instance (no BPF); events parsed from trace_pipe",
	needs:    "tracefs with the function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER) usable in an instance",
	probe:    probeFtraceGraph,
	start:    startFtraceGraph,
	validate: checkFtraceGraphConfig,
}

// ftraceGraphEventUnknown are the Event fields function_graph never prints.
const ftraceGraphEventUnknown = FieldRequested | FieldResult

func probeFtraceGraph(m Mechanism) error {
	root, err := tracefsRoot()
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
	available, err := readTracefs(path)
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
	in           instance
	thresholdSet bool      // this tracer set the global tracing_thresh
	oldOptions   []setting // graphOptions' values before setUp
	pipe         *pipeLines
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
	root, err := tracefsRoot()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	if _, err := ReclaimStale(); err != nil {
		return nil, fmt.Errorf("%s: reclaim instances of dead tracebench processes: %w", m.Name, err)
	}
	thresholdUS := int64(cfg.Threshold / time.Microsecond)
	unlock, err := lockTracingThresh(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	defer unlock()
	if err := checkGlobalTracefs(root, thresholdUS); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	in, err := newInstance(root, thresholdSuffix(thresholdUS))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	t := &ftraceGraphTracer{cfg: cfg, in: in, tasks: taskNames{root: root}, reader: startPipeThread()}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := requireGraphTracer(m, filepath.Join(in.dir, "available_tracers")); err != nil {
		return nil, err
	}
	if err := t.setUp(thresholdUS); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return t, nil
}

func thresholdSuffix(thresholdUS int64) string {
	if thresholdUS == 0 {
		return ""
	}
	return fmt.Sprintf("-thresh%d", thresholdUS)
}

// checkFtraceGraphConfig refuses what function_graph cannot do.
func checkFtraceGraphConfig(cfg Config) error {
	switch {
	case cfg.Threshold%time.Microsecond != 0:
		return fmt.Errorf("threshold %v is not a whole number of µs (tracing_thresh has µs resolution)", cfg.Threshold)
	case cfg.Histogram:
		return errors.New("histogram: function_graph records only calls at or above tracing_thresh, not every call")
	case cfg.PerTGID:
		return errors.New("per-TGID totals: function_graph records only calls at or above tracing_thresh, not every call")
	}
	return nil
}

// lockTracingThresh takes an exclusive flock(2) on tracing_thresh until
// unlock, so that two tracebench processes starting at once cannot both
// find it unset and both set it (advisory: other tracefs users ignore it).
func lockTracingThresh(root string) (unlock func(), err error) {
	f, err := os.Open(filepath.Join(root, "tracing_thresh"))
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock tracing_thresh: %w", err)
	}
	return func() { f.Close() }, nil // closing drops the lock
}

// checkGlobalTracefs refuses to touch tracing_thresh, which is global: it
// applies to function_graph in every instance and to the top-level latency
// tracers, so it must be unset and, when this tracer sets it, the top
// level must not be tracing.
func checkGlobalTracefs(root string, thresholdUS int64) error {
	thresh, err := readTracefs(filepath.Join(root, "tracing_thresh"))
	if err != nil {
		return err
	}
	if thresh != "0" {
		return fmt.Errorf("tracing_thresh is %s µs, set by another tracer (another ftrace-graph with a threshold, or any tracefs user); ftrace-graph needs it 0 and does not change it", thresh)
	}
	if thresholdUS == 0 {
		return nil
	}
	current, err := readTracefs(filepath.Join(root, "current_tracer"))
	if err != nil {
		return err
	}
	if current != "nop" {
		return fmt.Errorf("the top-level tracer is %s; setting the global tracing_thresh would change what it records", current)
	}
	return requireNoGraphInstance(root)
}

// requireNoGraphInstance refuses when an instance (of anyone, tracebench
// included) runs function_graph, which the global tracing_thresh would
// change.
func requireNoGraphInstance(root string) error {
	tracers, err := filepath.Glob(filepath.Join(root, "instances", "*", "current_tracer"))
	if err != nil {
		return err
	}
	for _, path := range tracers {
		if current, err := readTracefs(path); err == nil && current == "function_graph" {
			return fmt.Errorf("instance %s runs function_graph; setting the global tracing_thresh would change what it records", filepath.Base(filepath.Dir(path)))
		}
	}
	return nil
}

// setting is a tracefs file and the value written to it.
type setting struct{ file, value string }

// textOutput makes an instance print the text lines the parsers read,
// whatever the top level's options (a new instance inherits them).
var textOutput = []setting{
	{"options/context-info", "1"},
	{"options/latency-format", "0"},
	{"options/raw", "0"},
	{"options/hex", "0"},
	{"options/bin", "0"},
}

// graphOptions make function_graph print what parseGraphLine reads
// (comm-pid, the duration including sleep, the function name on the
// closing brace) and drop new records rather than overwrite old ones when
// the buffer is full, so that every lost record is counted. Close writes
// back each option's old value: before 7.x the funcgraph-* and sleep-time
// options are one set shared by all instances (6.12).
var graphOptions = slices.Concat(textOutput, []setting{
	{"options/funcgraph-proc", "1"},
	{"options/funcgraph-duration", "1"},
	{"options/funcgraph-tail", "1"},
	{"options/sleep-time", "1"},
	{"options/overwrite", "0"},
})

// instanceSettings live and die with the instance.
var instanceSettings = []setting{
	{"buffer_percent", "0"}, // wake trace_pipe readers on every record
	{"set_ftrace_filter", "vfs_read"},
}

// setUp configures the instance, starts the tracer and opens trace_pipe;
// the order matters: tracing_thresh is read when function_graph starts.
func (t *ftraceGraphTracer) setUp(thresholdUS int64) error {
	for _, o := range graphOptions {
		old, err := readTracefs(filepath.Join(t.in.dir, o.file))
		if err != nil {
			return err
		}
		t.oldOptions = append(t.oldOptions, setting{o.file, old})
		if err := t.in.write(o.file, o.value); err != nil {
			return err
		}
	}
	if err := t.in.writeAll(instanceSettings); err != nil {
		return err
	}
	if n := t.cfg.RingBufferBytes; n > 0 {
		if err := t.in.write("buffer_size_kb", strconv.Itoa(max(1, n/1024))); err != nil {
			return err
		}
	}
	if err := t.filterTGID(); err != nil {
		return err
	}
	if err := t.in.write("set_ftrace_notrace_pid", strconv.Itoa(t.reader.tid)); err != nil {
		return err
	}
	if thresholdUS > 0 {
		if err := writeTracefs(filepath.Join(t.in.root, "tracing_thresh"), strconv.FormatInt(thresholdUS, 10)); err != nil {
			return err
		}
		t.thresholdSet = true
	}
	// The tracer cannot change while trace_pipe is open (EBUSY).
	if err := t.in.write("current_tracer", "function_graph"); err != nil {
		return err
	}
	pipe, err := t.in.openPipe()
	t.pipe = pipe
	return err
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
		return t.in.write("tracing_on", "0")
	}
	t.tasks.know(t.cfg.TGID, tids)
	if t.forks, err = startForkWatch(t.in.root, tids); err != nil {
		return err
	}
	if err := t.in.write("options/function-fork", "1"); err != nil {
		return err
	}
	return t.in.write("set_ftrace_pid", strings.Join(tids, " "))
}

// threadsOf lists the thread IDs of process tgid, none if it does not exist.
func threadsOf(tgid uint32) ([]string, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", tgid))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var tids []string
	for _, e := range entries {
		tids = append(tids, e.Name())
	}
	return tids, err
}

func (t *ftraceGraphTracer) ReadEvent(deadline time.Time) (Event, error) {
	for {
		if t.closed.Load() {
			return Event{}, fmt.Errorf("ftrace-graph: %w", os.ErrClosed)
		}
		if line, ok := t.pipe.next(); ok {
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

// event turns a vfs_read return line into an Event, filling TGID and the
// whole comm from what the kernel recorded for the pid.
func (t *ftraceGraphTracer) event(line string) (Event, bool) {
	ev, ok := parseGraphLine(line)
	if !ok {
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
	if !t.reader.run(func() { err = t.pipe.read(deadline) }) || t.closed.Load() {
		return fmt.Errorf("ftrace-graph: trace_pipe: %w", os.ErrClosed)
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("ftrace-graph: %w", err)
	}
	return err
}

// pipeThread runs every read of trace_pipe on one OS thread whose TID is
// in the instance's set_ftrace_notrace_pid: those reads are vfs_read calls
// too, and at threshold 0 the tracer would otherwise trace its own reads,
// each record read by the next read, for as long as it runs.
type pipeThread struct {
	tid   int
	calls chan func()
	quit  chan struct{}
}

func startPipeThread() *pipeThread {
	p := &pipeThread{calls: make(chan func()), quit: make(chan struct{})}
	tid := make(chan int)
	go func() {
		// Never unlocked: the thread exits with the goroutine.
		runtime.LockOSThread()
		tid <- unix.Gettid()
		for {
			select {
			case f := <-p.calls:
				f()
			case <-p.quit:
				return
			}
		}
	}()
	p.tid = <-tid
	return p
}

// run runs f on the thread and waits for it; false if the thread stopped.
func (p *pipeThread) run(f func()) bool {
	done := make(chan struct{})
	select {
	case p.calls <- func() { f(); close(done) }:
		<-done
		return true
	case <-p.quit:
		return false
	}
}

func (p *pipeThread) stop() { close(p.quit) }

// graphReturn matches function_graph's line for a vfs_read return with
// funcgraph-proc and funcgraph-tail: " 1)  cat-309  | ! 50123.45 us |  } /* vfs_read */",
// or, when the entry is still in the buffer (threshold 0), the leaf form
// "vfs_read();". Groups: comm, pid, whole µs, fraction of a µs.
var graphReturn = regexp.MustCompile(`^\s*(?:\d+\)\s+)?(.+)-(\d+)\s+\|\s*[+!#*@$]?\s*(\d+)(?:\.(\d+))?\s+us\s+\|\s*(?:\}\s*/\*\s*vfs_read\s*\*/|vfs_read\(\);)\s*$`)

// parseGraphLine parses a vfs_read return line; other lines (entries,
// context-switch markers, headers) give false. The comm is the one
// function_graph prints, cut to 7 bytes.
func parseGraphLine(line string) (Event, bool) {
	m := graphReturn.FindStringSubmatch(line)
	if m == nil {
		return Event{}, false
	}
	pid, err := strconv.ParseUint(m[2], 10, 32)
	if err != nil {
		return Event{}, false
	}
	latency, err := parseGraphDuration(m[3], m[4])
	if err != nil {
		return Event{}, false
	}
	return Event{PID: uint32(pid), Latency: latency, Comm: strings.TrimSpace(m[1]), Unknown: ftraceGraphEventUnknown}, true
}

// parseGraphDuration reads ftrace's "µs.fraction" duration, which keeps at
// most 7 digits: 3 decimals below 10 ms, fewer above, none from 1 s on.
func parseGraphDuration(us, fraction string) (time.Duration, error) {
	whole, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return 0, err
	}
	ns := whole * 1000
	if fraction != "" {
		f, err := strconv.ParseInt((fraction + "00")[:3], 10, 64)
		if err != nil {
			return 0, err
		}
		ns += f
	}
	return time.Duration(ns), nil
}

// Stats reads the instance's ring buffer counters. At a threshold above 0
// each record is one slow call: Slow counts records written or dropped
// (less those of other processes), Dropped those dropped.
func (t *ftraceGraphTracer) Stats() (Stats, error) {
	s := Stats{Unknown: FieldCalls | FieldErrors | FieldMissed | FieldPending}
	if t.cfg.Threshold == 0 {
		s.Unknown |= FieldSlow | FieldDropped
		return s, nil
	}
	counts, err := bufferCounts(t.in.dir)
	if err != nil {
		return Stats{}, fmt.Errorf("ftrace-graph: %w", err)
	}
	lost := counts["overrun"] + counts["dropped events"]
	s.Slow = counts["entries"] + counts["read events"] + lost - t.foreign
	s.Dropped = lost
	return s, nil
}

// bufferCounts sums the counters of per_cpu/cpu*/stats ("entries: 3").
func bufferCounts(dir string) (map[string]uint64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "per_cpu", "cpu*", "stats"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no per-CPU ring buffer stats in %s (%v)", dir, err)
	}
	sums := map[string]uint64{}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(raw)) {
			name, value, _ := strings.Cut(line, ":")
			if n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64); err == nil {
				sums[name] += n
			}
		}
	}
	return sums, nil
}

// Detach turns tracing off; what is in the buffer stays readable.
func (t *ftraceGraphTracer) Detach() error {
	if t.closed.Load() {
		return nil
	}
	return t.in.write("tracing_on", "0")
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
			errs = append(errs, t.pipe.close())
		}
		if t.thresholdSet {
			errs = append(errs, writeTracefs(filepath.Join(t.in.root, "tracing_thresh"), "0"))
		}
		t.reader.stop()
		if t.forks != nil {
			errs = append(errs, t.forks.close())
		}
		for _, o := range slices.Backward(t.oldOptions) {
			errs = append(errs, t.in.write(o.file, o.value))
		}
		errs = append(errs, t.in.remove())
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// taskNames finds the TGID and whole comm of a pid: function_graph
// prints neither (its comm is cut to 7 bytes), and saved_tgids stays empty
// for its records (seen on 7.2). The comm comes from the kernel's
// saved_cmdlines, else the printed one is kept. The TGID comes from the
// filtered process's thread list taken at start and the task_newtask
// events of a forkWatch, else from /proc/<pid>/status when the pid is
// first seen: a task gone by then has an unknown TGID.
type taskNames struct {
	root string
	tgid map[uint32]uint32
	comm map[uint32]string
}

func (n *taskNames) fill(ev *Event) {
	if tgid, ok := n.tgidOf(ev.PID); ok {
		ev.TGID = tgid
	} else {
		ev.Unknown |= FieldTGID
	}
	if _, ok := n.comm[ev.PID]; !ok {
		n.reloadComms()
	}
	if comm, ok := n.comm[ev.PID]; ok {
		ev.Comm = comm
	} else {
		n.comm[ev.PID] = ev.Comm // not read again for every event
	}
}

// stale reports whether what n holds for ev's pid may be another task's:
// nothing yet, or a comm that does not start with the one function_graph
// printed (cut to 7 bytes), as when the pid was reused (or the task ran
// exec, which a lookup then confirms).
func (n *taskNames) stale(ev Event) bool {
	if _, ok := n.tgid[ev.PID]; !ok {
		return true
	}
	comm, ok := n.comm[ev.PID]
	// "<...>": the kernel had no comm for the pid when printing.
	return ok && ev.Comm != "<...>" && !strings.HasPrefix(comm, ev.Comm)
}

// forget drops what n holds for pid, to look it up again.
func (n *taskNames) forget(pid uint32) {
	delete(n.tgid, pid)
	delete(n.comm, pid)
}

// learn records a new task from its task_newtask event: a thread joins
// its parent's process, any other task is a process of its own.
func (n *taskNames) learn(parent, child uint32, thread bool) {
	if !thread {
		n.remember(child, child)
		return
	}
	if tgid, ok := n.tgidOf(parent); ok {
		n.remember(child, tgid)
	}
}

// know records that the threads tids belong to process tgid.
func (n *taskNames) know(tgid uint32, tids []string) {
	for _, tid := range tids {
		if pid, err := strconv.ParseUint(tid, 10, 32); err == nil {
			n.remember(uint32(pid), tgid)
		}
	}
}

func (n *taskNames) remember(pid, tgid uint32) {
	if n.tgid == nil {
		n.tgid = map[uint32]uint32{}
	}
	n.tgid[pid] = tgid
}

func (n *taskNames) tgidOf(pid uint32) (uint32, bool) {
	if tgid, ok := n.tgid[pid]; ok {
		return tgid, true
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(raw)) {
		if value, ok := strings.CutPrefix(line, "Tgid:"); ok {
			tgid, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
			if err != nil {
				return 0, false
			}
			n.remember(pid, uint32(tgid))
			return uint32(tgid), true
		}
	}
	return 0, false
}

// reloadComms reads saved_cmdlines ("pid comm" lines); a file that cannot
// be read leaves the comm function_graph printed.
func (n *taskNames) reloadComms() {
	n.comm = map[uint32]string{}
	f, err := os.Open(filepath.Join(n.root, "saved_cmdlines"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pid, comm, ok := strings.Cut(sc.Text(), " ")
		if p, err := strconv.ParseUint(pid, 10, 32); ok && err == nil {
			n.comm[uint32(p)] = comm
		}
	}
}
