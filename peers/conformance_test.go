package peers

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"tracebench/internal/kernel"
	"tracebench/tracers"
	"tracebench/workload"
)

var (
	conformanceRows  = flag.String("peers.conformance.rows", "", "comma-separated rows TestConformance runs (default: all)")
	conformancePeers = flag.String("peers.conformance.peers", "",
		"comma-separated peers TestConformance holds to the rows (default: every mode, peers.Conformance)")
	conformanceOut = flag.String("peers.conformance.out", "",
		"directory TestConformance writes the table to (CONFORMANCE.md), the numbers (conformance.json) and "+
			"each tool's output (outputs/<row>.<peer>.txt)")
	conformanceResults = flag.String("peers.conformance.results", "",
		"results directory: TestConformance writes into its <kernel release>/peers/, as -peers.conformance.out")
)

// row is one conformance row: a workload whose every vfs_read call is
// known, and what it provokes.
type row struct {
	name string
	what string
	plan workload.Plan
	opts workload.Options
	// sibling, if set, runs in an untraced process at the same time.
	sibling workload.Plan
	// pidMax, if set, is the least /proc/sys/kernel/pid_max the row
	// needs (raised for the row, put back after).
	pidMax int
	// timeout bounds the workload (default a minute).
	timeout time.Duration
}

// workloadTimeout bounds the row's workload.
func (r row) workloadTimeout() time.Duration {
	if r.timeout == 0 {
		return time.Minute
	}
	return r.timeout
}

// kretprobeMaxActive is the kernel's default maxactive of a kretprobe
// (kernel/kprobes.c): max(10, 2 x possible CPUs).
func kretprobeMaxActive() int { return max(10, 2*runtime.NumCPU()) }

// freshThreads is one more thread than funclatency's start map holds
// (MAX_PIDS 102400 in libbpf-tools 0.37), plus a margin of 1000: its map
// is never cleaned, so the calls of every thread past the 102400th are
// lost.
const freshThreads = 102400 + 1000

func rows() []row {
	over := kretprobeMaxActive() + 2
	return []row{
		{name: "calls-per-tgid", what: "reads of a 4 KiB file, of a directory (EISDIR), of an empty pipe (EAGAIN) " +
			"and one 45 ms pipe read, while an untraced process makes 2000 reads",
			plan: workload.Plan{workload.FileReads(200, 4096), workload.DirReads(3), workload.EmptyPipeReads(3),
				workload.DelayedPipeReads(1, 45*time.Millisecond)},
			sibling: workload.Plan{workload.FileReads(2000, 64)}},
		{name: "threads", what: "8 threads that exist when the peers attach read at once, 50 reads each",
			plan: workload.Plan{workload.FileReads(50, 4096).OnEarlyThreads(8)}},
		{name: "late-threads", what: "8 threads created after the peers attached read at once, 50 reads each",
			plan: workload.Plan{workload.FileReads(50, 4096).OnThreads(8)}},
		{name: "killed-reader", what: "8 threads blocked in a pipe read when their process is SIGKILLed 50 ms later",
			plan: workload.Plan{workload.KilledReads(8, 50*time.Millisecond)}},
		{name: "interrupted-read", what: "3 pipe reads, each interrupted by a signal 50 ms after it blocked (EINTR)",
			plan: workload.Plan{workload.InterruptedReads(3, 50*time.Millisecond)}},
		{name: "blocked-over-map", what: "4200 threads blocked in a pipe read at once, answered 100 ms later one by one " +
			"(bpftrace's maps hold 4096 keys)",
			plan:    workload.Plan{workload.DelayedPipeReads(1, 100*time.Millisecond).OnThreads(4200)},
			timeout: 20 * time.Minute},
		{name: "distinct-threads-over-map", what: fmt.Sprintf("%d threads, created one after another, one read each "+
			"(funclatency's start map holds 102400 thread IDs and never deletes one); pid_max raised to 4194304, "+
			"systemd's default, so that no thread ID repeats", freshThreads),
			plan:   workload.Plan{workload.FileReads(1, 64).OnFreshThreads(freshThreads)},
			pidMax: 4194304, timeout: 40 * time.Minute},
		{name: "missed-returns-second-wave", what: fmt.Sprintf("%d threads blocked in a pipe read at once, twice "+
			"(a kretprobe follows %d calls at once by default: the rest leave their entries behind), the second "+
			"wave on the same threads", over, kretprobeMaxActive()),
			plan: workload.Plan{workload.DelayedPipeReads(2, 50*time.Millisecond).OnThreads(over)}},
		{name: "kretprobe-maxactive", what: fmt.Sprintf("%d threads blocked in a pipe read at once, once", over),
			plan: workload.Plan{workload.DelayedPipeReads(1, 50*time.Millisecond).OnThreads(over)}},
		{name: "recursion-preemption", what: "64 threads on the CPUs at once, 500 reads each with 500 µs of " +
			"user-space work between two (a task preempted inside a trampoline program makes the kernel skip " +
			"that program for other tasks on its CPU; a skipped entry leaves the thread's previous start time, " +
			"at least 500 µs old)",
			plan:    workload.Plan{workload.FileReads(500, 64).OnThreads(64).WithGap(500 * time.Microsecond)},
			timeout: 20 * time.Minute},
		{name: "long-read", what: "one pipe read answered 4.5 s after it blocked, longer than 2^32 ns",
			plan: workload.Plan{workload.DelayedPipeReads(1, 4500*time.Millisecond)}},
		{name: "pid-namespace", what: "the reader is PID 1 of its own PID namespace (the peers get its PID outside): " +
			"50 file reads, 4 threads of 20, one 45 ms pipe read",
			plan: workload.Plan{workload.FileReads(50, 4096), workload.FileReads(20, 4096).OnEarlyThreads(4),
				workload.DelayedPipeReads(1, 45*time.Millisecond)},
			opts: workload.Options{PIDNamespace: true}},
	}
}

// TestConformance holds every peer mode to every row: the workload knows
// each call, the peer's count and histogram are classed against it
// (Classify), and what the kernel says the peer attached and skipped is
// recorded. A peer's loss is a finding; the test fails only when a cell
// could not be measured.
func TestConformance(t *testing.T) {
	peerTools.Require(t)
	root, err := RootFromEnv()
	if err != nil {
		t.Skip(err.Error())
	}
	peers, err := selectedPeers()
	require.NoError(t, err)
	report := Report{Kernel: kernel.Release(), CPUs: strconv.Itoa(runtime.NumCPU()),
		Clock: os.Getenv("TRACEBENCH_CLOCK"), Date: time.Now().UTC().Format(time.DateOnly), Versions: root.VersionLines()}
	// The rows' data files go to ext4, which fsslower traces.
	dataDir, noExt4 := ext4Dir(t)
	if noExt4 != nil {
		t.Logf("no ext4 file system for the data files (%v): fsslower cannot observe the rows", noExt4)
	}
	own := ownMechanisms()
	for _, r := range rows() {
		if *conformanceRows != "" && !slices.Contains(strings.Split(*conformanceRows, ","), r.name) {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			start := time.Now()
			r.opts.DataDir = dataDir
			rr := runRow(t, root, r, peers, noExt4)
			t.Logf("%s: peers done in %v; tracebench's mechanisms on the same workload", r.name, time.Since(start).Round(time.Second))
			rr.Peers = append(rr.Peers, runOwn(t, r, own)...)
			report.Rows = append(report.Rows, rr)
			t.Logf("%s in %v:", r.name, time.Since(start).Round(time.Second))
			for _, p := range rr.Peers {
				t.Logf("  %s: %s", p.Peer, p.details())
			}
		})
	}
	md := report.Markdown()
	t.Logf("conformance table:\n%s", md)
	for _, dir := range outDirs(report.Kernel) {
		require.NoError(t, writeReport(dir, report))
		t.Logf("wrote %s", filepath.Join(dir, "CONFORMANCE.md"))
	}
	require.Empty(t, report.Unmeasured(), "every cell must be measured")
}

// outDirs are the directories the flags ask the report to be written to.
func outDirs(release string) []string {
	var dirs []string
	if *conformanceOut != "" {
		dirs = append(dirs, *conformanceOut)
	}
	if *conformanceResults != "" {
		dirs = append(dirs, filepath.Join(*conformanceResults, release, "peers"))
	}
	return dirs
}

// writeReport writes the table, the numbers and the tools' outputs into
// dir.
func writeReport(dir string, r Report) error {
	if err := os.MkdirAll(filepath.Join(dir, "outputs"), 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	errs := []error{os.WriteFile(filepath.Join(dir, "CONFORMANCE.md"), []byte(r.Markdown()), 0o644),
		os.WriteFile(filepath.Join(dir, "conformance.json"), raw, 0o644)}
	for _, row := range r.Rows {
		for _, p := range row.Peers {
			if p.Output != "" {
				name := filepath.Join(dir, "outputs", row.Name+"."+p.Peer+".txt")
				errs = append(errs, os.WriteFile(name, []byte(p.Output), 0o644))
			}
		}
	}
	return errors.Join(errs...)
}

func selectedPeers() ([]Peer, error) {
	if *conformancePeers == "" {
		return Conformance(), nil
	}
	var peers []Peer
	for _, name := range strings.Split(*conformancePeers, ",") {
		p, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		peers = append(peers, p)
	}
	return peers, nil
}

// runRow runs one row with every peer attached at once and returns its
// cells. Peers that cannot start are recorded, not fatal. noExt4 says why
// the data file is not on ext4, if it is not.
func runRow(t *testing.T, root *Root, r row, peers []Peer, noExt4 error) RowReport {
	rr := RowReport{Name: r.name, What: r.what}
	if r.pidMax > 0 {
		rr.Notes = append(rr.Notes, raisePIDMax(t, r.pidMax))
	}
	opts := r.opts
	opts.Linger = true // bpftrace -p exits with its process: keep it to the end
	p, err := workload.StartWith(r.plan, opts)
	require.NoError(t, err)
	defer p.Close() // before the next pass: the largest row's helper holds 650 MiB

	runs := startPeers(root, int(p.TGID()), peers)
	defer func() {
		for _, pr := range runs {
			if pr.run != nil {
				pr.run.Close()
			}
		}
	}()
	attached, err := p.Threads()
	require.NoError(t, err)
	for _, pr := range runs {
		if pr.run != nil {
			pr.before, pr.beforeErr = pr.run.Observe()
		}
	}
	sibling := startSibling(t, r.sibling)
	t.Logf("%s: peers attached; the workload runs", r.name)
	started := time.Now()
	res, err := p.Run(r.workloadTimeout())
	require.NoError(t, err)
	rr.Notes = append(rr.Notes, fmt.Sprintf("the workload ran %v (guest clock %s)", time.Since(started).Round(time.Millisecond),
		os.Getenv("TRACEBENCH_CLOCK")))
	require.NoError(t, sibling())
	for _, pr := range runs {
		if pr.run != nil {
			pr.after, pr.afterErr = pr.run.Observe()
			pr.quiet = pr.run.WaitQuiet(quietSettle, quietTimeout)
		}
	}
	truth, err := TruthOf(r.plan, res)
	require.NoError(t, err)
	requireFreshThreadsDistinct(t, r.plan, res)
	rr.Calls = len(truth)
	rr.Notes = append(rr.Notes, workloadNotes(res, attached)...)
	if peak, err := peakRSS(p.TGID()); err == nil { // a killed helper is gone
		rr.Notes = append(rr.Notes, "the reading process's peak RSS "+peak)
	}
	for _, pr := range runs {
		rr.Peers = append(rr.Peers, pr.cell(truth, noExt4))
	}
	return rr
}

// peerRun is one peer of a row: started or why not, and the kernel's view
// before and after the workload.
type peerRun struct {
	peer                Peer
	run                 *Run
	unavailable         string
	startErr            error
	before, after       Kernel
	beforeErr, afterErr error
	// quiet says why the tool did not settle before it was stopped.
	quiet error
}

// A tool is stopped once its output has not grown for quietSettle, as an
// operator waits for it to print what it saw before Ctrl-C.
const (
	quietSettle  = 2 * time.Second
	quietTimeout = 10 * time.Minute
)

// startPeers starts the peers at once (bpftrace takes a while to compile
// under emulation) and waits until every one is attached or failed.
func startPeers(root *Root, pid int, peers []Peer) []*peerRun {
	runs := make([]*peerRun, len(peers))
	var wg sync.WaitGroup
	for i, peer := range peers {
		runs[i] = &peerRun{peer: peer}
		wg.Go(func() {
			r, err := peer.Start(root, pid)
			switch {
			case errors.Is(err, ErrUnavailable):
				runs[i].unavailable = err.Error()
			case err != nil:
				runs[i].startErr = err
			default:
				runs[i].run = r
			}
		})
	}
	wg.Wait()
	return runs
}

// cell stops the peer and classes what it printed against the calls it
// observes.
func (pr *peerRun) cell(all Truth, noExt4 error) PeerCell {
	pc := PeerCell{Peer: pr.peer.Name}
	truth := all.Observed(pr.peer.observes)
	switch {
	case pr.unavailable != "":
		pc.Cell = Unobservable(truth, pr.unavailable)
		return pc
	case pr.startErr != nil:
		pc.Error = pr.startErr.Error()
		return pc
	case pr.peer.observes != nil && noExt4 != nil:
		pc.Cell = Unobservable(truth, "the data file is not on ext4: "+noExt4.Error())
	case pr.peer.observes != nil && len(truth) == 0:
		pc.Cell = Unobservable(truth, pr.peer.Name+" times reads of regular files only; the row has none")
	}
	res, err := pr.run.Stop()
	if err == nil {
		err = pr.quiet
	}
	switch {
	case err != nil:
		pc.Error = err.Error()
		return pc
	case pc.Cell.Class == CannotObserve:
		return pc
	}
	pc.Cell = Classify(truth, res)
	pc.Output = res.Output
	pc.Kernel, pc.KernelNote = kernelDelta(pr.before, pr.beforeErr, pr.after, pr.afterErr)
	return pc
}

// kernelDelta is what the kernel counted over the workload: attachments
// as before it, counters' growth, maps as after it.
func kernelDelta(before Kernel, beforeErr error, after Kernel, afterErr error) (Kernel, string) {
	switch {
	case beforeErr != nil:
		return Kernel{}, "kernel state not read: " + beforeErr.Error()
	case afterErr != nil:
		return before, "counters after the workload not read (the tool had exited): " + afterErr.Error()
	}
	k := before
	k.Missed = sat(after.Missed, before.Missed)
	k.RecursionMisses = sat(after.RecursionMisses, before.RecursionMisses)
	k.Dropped = sat(after.Dropped, before.Dropped)
	k.Maps = after.Maps
	return k, ""
}

// startSibling runs plan in an untraced helper at once and returns a wait
// for it; a nil plan runs nothing.
func startSibling(t *testing.T, plan workload.Plan) func() error {
	if plan == nil {
		return func() error { return nil }
	}
	s, err := workload.Start(plan)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(time.Minute)
		done <- err
	}()
	return func() error { return <-done }
}

// requireFreshThreadsDistinct fails unless each step on threads created
// one after another read from as many distinct thread IDs as it made
// threads: the rows beyond a map's size count on no ID repeating.
func requireFreshThreadsDistinct(t *testing.T, plan workload.Plan, res workload.Result) {
	for i, s := range plan {
		if s.Spawn != workload.SpawnFresh {
			continue
		}
		tids := map[int]bool{}
		for _, rd := range res.Reads {
			if rd.Step == i {
				tids[rd.TID] = true
			}
		}
		require.Len(t, tids, s.Threads, "step %d: distinct thread IDs of %d threads created one after another", i, s.Threads)
	}
}

// workloadNotes are the numbers of a workload beyond its calls: its
// threads, those alive when the peers attached, its longest read.
func workloadNotes(res workload.Result, attached []int) []string {
	early := 0
	for _, rd := range res.Reads {
		if slices.Contains(attached, rd.TID) {
			early++
		}
	}
	return []string{
		fmt.Sprintf("%d threads read, %d of the reads on threads alive when the peers attached", len(res.TIDs()), early),
		fmt.Sprintf("longest read %v in user space", res.Longest().Round(time.Microsecond)),
	}
}

// ext4Dir mounts a small ext4 file system on a loop device for the test
// (a file in the test's temporary directory) and returns its mount point.
func ext4Dir(t *testing.T) (string, error) {
	img := filepath.Join(t.TempDir(), "ext4.img")
	dir := t.TempDir()
	for _, cmd := range [][]string{{"modprobe", "-q", "loop"}, {"modprobe", "-q", "ext4"},
		{"truncate", "-s", "64M", img}, {"mkfs.ext4", "-q", "-F", img}, {"mount", "-o", "loop", img, dir}} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %v: %s", strings.Join(cmd, " "), err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir, nil
}

// peakRSS is the VmHWM of a running (lingering) process.
func peakRSS(pid uint32) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.Join(strings.Fields(v), " "), nil
		}
	}
	return "", fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// pidMaxFile is the kernel's upper bound of thread IDs.
const pidMaxFile = "/proc/sys/kernel/pid_max"

// raisePIDMax raises pid_max to at least want for the test and puts the
// old value back after it; it returns a note of what it did.
func raisePIDMax(t *testing.T, want int) string {
	raw, err := os.ReadFile(pidMaxFile)
	require.NoError(t, err)
	old, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	if old >= want {
		return fmt.Sprintf("pid_max %d", old)
	}
	require.NoError(t, os.WriteFile(pidMaxFile, []byte(strconv.Itoa(want)), 0o644))
	t.Cleanup(func() {
		if err := os.WriteFile(pidMaxFile, []byte(strconv.Itoa(old)), 0o644); err != nil {
			t.Errorf("put pid_max back to %d: %v", old, err)
		}
	})
	return fmt.Sprintf("pid_max raised from %d to %d for the row", old, want)
}

// ownMechanisms are tracebench's mechanisms that count every call into a
// histogram in the kernel, the contrast columns of the table.
func ownMechanisms() []tracers.Mechanism {
	return slices.DeleteFunc(tracers.Mechanisms(), func(m tracers.Mechanism) bool { return !m.Can.Aggregates() })
}

// runOwn runs row r's workload again, with tracebench's mechanisms
// attached at once instead of the peers, and classes each as a peer.
func runOwn(t *testing.T, r row, mechanisms []tracers.Mechanism) []PeerCell {
	p, err := workload.StartWith(r.plan, r.opts)
	require.NoError(t, err)
	defer p.Close()
	cells := make([]PeerCell, len(mechanisms))
	var running []int
	tracer := make([]tracers.Tracer, len(mechanisms))
	for i, m := range mechanisms {
		cells[i] = PeerCell{Peer: m.Name, Own: true, Kernel: Kernel{Attached: []string{m.Summary}}}
		if err := m.Probe(); errors.Is(err, tracers.ErrUnsupported) {
			cells[i].Cell = Cell{Class: CannotObserve, Reason: err.Error()}
			continue
		}
		// No events (the largest threshold): the histogram counts every call.
		tr, err := m.Start(tracers.Config{TGID: p.TGID(), Histogram: true, Threshold: tracers.MaxThreshold})
		if err != nil {
			cells[i].Error = err.Error()
			continue
		}
		defer tr.Close()
		tracer[i] = tr
		running = append(running, i)
	}
	sibling := startSibling(t, r.sibling)
	res, err := p.Run(r.workloadTimeout())
	require.NoError(t, err)
	require.NoError(t, sibling())
	truth, err := TruthOf(r.plan, res)
	require.NoError(t, err)
	for i := range cells {
		if cells[i].Cell.Class == CannotObserve {
			cells[i].Cell.Calls = uint64(len(truth))
		}
	}
	for _, i := range running {
		res, missed, err := ownResult(tracer[i])
		if err != nil {
			cells[i].Error = err.Error()
			continue
		}
		cells[i].Cell = Classify(truth, res)
		cells[i].Kernel.Missed = missed
	}
	return cells
}

// ownResult detaches tr and reads its counters and histogram as a peer's
// result, its warnings (as `tracebench trace` prints them) as notices.
func ownResult(tr tracers.Tracer) (Result, uint64, error) {
	if err := tr.Detach(); err != nil {
		return Result{}, 0, err
	}
	st, err := tr.Stats()
	if err != nil {
		return Result{}, 0, err
	}
	h, err := tr.(tracers.Aggregator).Histogram()
	if err != nil {
		return Result{}, 0, err
	}
	if h.Total() != st.Calls {
		return Result{}, 0, fmt.Errorf("histogram holds %d calls, the counters %d", h.Total(), st.Calls)
	}
	res := Result{Buckets: BucketsOf(h), Calls: st.Calls}
	for _, n := range []struct {
		calls uint64
		line  string
	}{
		{st.Missed, "the kernel skipped the probes of %d calls (kretprobe maxactive or recursion; system-wide); they are not counted"},
		{st.Lost, "%d calls of the traced process were lost (their per-thread state had no room or was overwritten after a missed return)"},
		{st.Pending, "%d calls entered and did not return while attached"},
	} {
		if n.calls > 0 {
			res.Notices = append(res.Notices, Notice{Line: fmt.Sprintf(n.line, n.calls), Calls: n.calls})
		}
	}
	if st.Unknown != 0 {
		res.Notices = append(res.Notices, Notice{Line: fmt.Sprintf("does not observe %s", st.Unknown)})
	}
	return res, st.Missed, nil
}
