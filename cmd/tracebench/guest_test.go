package main

// Tests that run the CLI as a process against a real workload. They need
// root and a kernel that runs the mechanisms (the project's Linux 7.x
// guest); elsewhere they skip with the reason.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
	"tracebench/workload"
)

const (
	// cliTimeout bounds the CLI's start-up (BTF parsing and loading are
	// slow under software emulation) and, separately, its exit.
	cliTimeout = 90 * time.Second
	// workloadTimeout bounds one workload run.
	workloadTimeout = 2 * time.Minute
	// pipeDelay is how long each slow read blocks; thresholdUS is well
	// below it and far above a page-cache read.
	pipeDelay   = 50 * time.Millisecond
	thresholdUS = 10000
	fileReads   = 20
	dirReads    = 2
	pipeReads   = 3
)

// plan makes fast reads (file), failing ones (directory) and pipeReads
// slow ones: the only reads that reach the threshold.
var plan = workload.Plan{
	workload.FileReads(fileReads, 4096),
	workload.DirReads(dirReads),
	workload.DelayedPipeReads(pipeReads, pipeDelay),
}

// cli is the command running as a child process.
type cli struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr chan string // lines, closed at EOF
	seen   []string    // stderr lines read so far
}

// startCLI starts the command with args and waits until it says it
// traces.
func startCLI(t *testing.T, args ...string) *cli {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	c := &cli{cmd: exec.Command(self, args...), stderr: make(chan string, 64)}
	c.cmd.Env = append(os.Environ(), cliEnv+"=1")
	c.cmd.Stdout = &c.stdout
	stderr, err := c.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { c.cmd.Process.Kill() }) // no-op once it exited
	go func() {
		defer close(c.stderr)
		for s := bufio.NewScanner(stderr); s.Scan(); {
			c.stderr <- s.Text()
		}
	}()
	require.NoError(t, c.waitStderr(func(line string) bool { return strings.HasPrefix(line, "Tracing vfs_read") }),
		"CLI did not start tracing; stderr so far: %q", c.seen)
	return c
}

var errStderrClosed = errors.New("stderr closed")

// waitStderr reads stderr lines until one satisfies match.
func (c *cli) waitStderr(match func(string) bool) error {
	deadline := time.After(cliTimeout)
	for {
		select {
		case line, ok := <-c.stderr:
			if !ok {
				return errStderrClosed
			}
			c.seen = append(c.seen, line)
			if match(line) {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no such line within %v", cliTimeout)
		}
	}
}

// stop interrupts the CLI as Ctrl-C does and returns its stdout once it
// exited with status 0.
func (c *cli) stop(t *testing.T) string {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
	return c.wait(t)
}

func (c *cli) wait(t *testing.T) string {
	t.Helper()
	// The CLI closes stderr by exiting.
	require.ErrorIs(t, c.waitStderr(func(string) bool { return false }), errStderrClosed,
		"CLI did not exit; stderr: %q", c.seen)
	err := c.cmd.Wait()
	require.NoError(t, err, "CLI failed; stderr: %q", c.seen)
	assertNoLeftovers(t)
	return c.stdout.String()
}

func assertNoLeftovers(t *testing.T) {
	t.Helper()
	// The kernel frees closed programs and links after an RCU grace period.
	left, err := tracers.WaitNoLeftovers(10 * time.Second)
	assert.NoError(t, err)
	assert.Empty(t, left, "kernel objects left 10 s after the CLI exited")
}

// requireTraceable skips t unless m loads and attaches here, and says
// whether it counts the aggregates in BPF.
func requireTraceable(t *testing.T, m tracers.Mechanism) (aggregates bool) {
	t.Helper()
	aggregates, err := traceable(m)
	if errors.Is(err, tracers.ErrUnsupported) || errors.Is(err, errNotRoot) {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	return aggregates
}

var errNotRoot = fmt.Errorf("tracing needs root (CAP_BPF, CAP_PERFMON); running as euid %d", os.Geteuid())

// traceable starts m on a filter that matches nothing and closes it: the
// only sure way to know the kernel runs it.
func traceable(m tracers.Mechanism) (aggregates bool, err error) {
	if os.Geteuid() != 0 {
		return false, errNotRoot
	}
	tr, err := m.Start(tracers.Config{TGID: uint32(os.Getpid()), Threshold: tracers.MaxThreshold})
	if err != nil {
		return false, err
	}
	_, aggregates = tr.(tracers.Aggregator)
	return aggregates, tr.Close()
}

// runWorkload starts a helper, lets trace (a function starting the CLI on
// the helper's TGID) attach, then runs the plan.
func runWorkload(t *testing.T, trace func(tgid uint32) *cli) (*cli, workload.Result) {
	t.Helper()
	helper, err := workload.Start(plan)
	require.NoError(t, err)
	defer helper.Close()
	c := trace(helper.TGID())
	truth, err := helper.Run(workloadTimeout)
	require.NoError(t, err)
	return c, truth
}

// TestTraceText traces the workload with every mechanism, in text with
// histogram and per-process table, and stops it with SIGINT.
func TestTraceText(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			args := []string{"trace", "--mechanism", m.Name, "--threshold-us", fmt.Sprint(thresholdUS), "--duration", "600"}
			aggregates := requireTraceable(t, m)
			if aggregates {
				args = append(args, "--histogram", "--per-pid")
			}
			c, truth := runWorkload(t, func(tgid uint32) *cli {
				return startCLI(t, append(args, "--pid", fmt.Sprint(tgid))...)
			})
			out := c.stop(t)
			t.Logf("output:\n%s", out)
			s := checkText(t, out, truth)
			if aggregates {
				checkHistogram(t, parseHistogram(t, out), s.calls)
				checkPerTGID(t, parsePerTGID(t, out), truth.TGID, s.calls)
			}
		})
	}
}

// TestTraceJSONAuto traces the workload in JSON with --mechanism auto.
func TestTraceJSONAuto(t *testing.T) {
	want := autoChoice(t)
	c, truth := runWorkload(t, func(tgid uint32) *cli {
		return startCLI(t, "trace", "--output", "json", "--histogram", "--per-pid",
			"--threshold-us", fmt.Sprint(thresholdUS), "--duration", "600", "--pid", fmt.Sprint(tgid))
	})
	out := c.stop(t)
	t.Logf("output:\n%s", out)
	assert.Contains(t, c.seen, "tracebench: --mechanism auto chose "+want)

	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var events []jsonEvent
	for _, line := range lines[:len(lines)-1] {
		var ev jsonEvent
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "line %q", line)
		require.Equal(t, "event", ev.Type, "line %q", line)
		events = append(events, ev)
	}
	var s jsonSummary
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &s))
	require.Equal(t, "summary", s.Type, "the last line is the summary")
	assert.Equal(t, want, s.Mechanism)

	checkSlowEvents(t, events, truth.TGID)
	checkSummary(t, summaryLine{calls: s.Calls, slow: s.Slow, errors: s.Errors, dropped: s.Dropped, events: s.Events}, uint64(len(events)), truth)
	var h tracers.Histogram
	require.Len(t, s.Histogram, tracers.HistogramSlots)
	for i, slot := range s.Histogram {
		low, _ := tracers.SlotRange(i)
		assert.Equal(t, low, slot.LowUS, "slot %d", i)
		h[i] = slot.Count
	}
	checkHistogram(t, h, s.Calls)
	require.NotNil(t, s.PerPID)
	var rows []tracers.TGIDLatency
	for _, p := range s.PerPID.Processes {
		rows = append(rows, tracers.TGIDLatency{TGID: p.TGID, Calls: p.Calls, Total: time.Duration(p.TotalUS) * time.Microsecond, Max: time.Duration(p.MaxUS) * time.Microsecond})
	}
	assert.Zero(t, s.PerPID.Overflow)
	checkPerTGID(t, rows, truth.TGID, s.Calls)
}

// TestTraceDurationEnds checks the tracer stops by itself and cleans up.
func TestTraceDurationEnds(t *testing.T) {
	autoChoice(t)
	started := time.Now()
	c := startCLI(t, "trace", "--duration", "1", "--pid", fmt.Sprint(os.Getpid()))
	out := c.wait(t)
	assert.Less(t, time.Since(started), cliTimeout)
	// This process's own reads (Go runtime threads, /proc polling) may
	// take over the 1 ms default threshold under emulation: EVENT lines
	// may come, but the summary must be last and count them.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines[:len(lines)-1] {
		assert.Regexp(t, eventLine, line)
	}
	m := summaryRE.FindStringSubmatch(lines[len(lines)-1])
	require.NotNil(t, m, "last line is the summary: %q", out)
	assert.Equal(t, fmt.Sprint(len(lines)-1), m[5], "events in the summary == EVENT lines")
}

// autoChoice returns the mechanism auto must choose, skipping t if none.
func autoChoice(t *testing.T) string {
	t.Helper()
	var reasons []string
	for _, name := range autoOrder {
		m, err := tracers.Lookup(name)
		require.NoError(t, err)
		_, err = traceable(m)
		if err == nil {
			return name
		}
		if !errors.Is(err, tracers.ErrUnsupported) && !errors.Is(err, errNotRoot) {
			require.NoError(t, err)
		}
		reasons = append(reasons, err.Error())
	}
	t.Skipf("no mechanism of --mechanism auto runs here: %s", strings.Join(reasons, "; "))
	return ""
}

var (
	eventLine   = regexp.MustCompile(`^EVENT comm=(\S+) tgid=(\d+) pid=(\d+) requested=(\d+) result=(-?\d+) latency_us=(\d+)$`)
	summaryRE   = regexp.MustCompile(`^SUMMARY calls=(\d+) slow=(\d+) errors=(\d+) dropped=(\d+) events=(\d+)$`)
	slotLine    = regexp.MustCompile(`^\s*(\d+) -> (\d+|inf)\s+: (\d+)\s+\|\**\s*\|$`)
	perTGIDLine = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`)
)

type summaryLine struct{ calls, slow, errors, dropped, events uint64 }

// checkText checks the EVENT lines and the SUMMARY line, which must be
// the last, and returns the summary.
func checkText(t *testing.T, out string, truth workload.Result) summaryLine {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	m := summaryRE.FindStringSubmatch(lines[len(lines)-1])
	require.NotNil(t, m, "the last line is the summary: %q", lines[len(lines)-1])
	n := atois(t, m[1:])
	s := summaryLine{n[0], n[1], n[2], n[3], n[4]}
	var events []jsonEvent
	for _, line := range lines {
		if !strings.HasPrefix(line, "EVENT ") {
			continue
		}
		f := eventLine.FindStringSubmatch(line)
		require.NotNil(t, f, "event line %q", line)
		v := atois(t, f[2:])
		events = append(events, jsonEvent{Comm: f[1], TGID: uint32(v[0]), PID: uint32(v[1]), Requested: v[2], Result: int64(v[3]), LatencyUS: int64(v[4])})
	}
	checkSlowEvents(t, events, truth.TGID)
	checkSummary(t, s, uint64(len(events)), truth)
	return s
}

// checkSlowEvents: every event is the helper's and reached the threshold;
// the pipe reads, and only they, are certain to be there.
func checkSlowEvents(t *testing.T, events []jsonEvent, helper int) {
	t.Helper()
	pipe := 0
	for _, ev := range events {
		assert.Equal(t, uint32(helper), ev.TGID, "event of the helper: %+v", ev)
		assert.GreaterOrEqual(t, ev.LatencyUS, int64(thresholdUS), "event at or above the threshold: %+v", ev)
		if ev.Requested == 1 && ev.Result == 1 {
			pipe++
			assert.GreaterOrEqual(t, ev.LatencyUS, pipeDelay.Microseconds(), "a pipe read lasts at least the writer's delay: %+v", ev)
		}
	}
	assert.Equal(t, pipeReads, pipe, "one event per delayed pipe read")
}

func checkSummary(t *testing.T, s summaryLine, events uint64, truth workload.Result) {
	t.Helper()
	assert.Equal(t, events, s.events, "events printed == events in the summary")
	assert.Equal(t, s.slow, s.events+s.dropped, "slow == events + dropped")
	assert.Zero(t, s.dropped)
	assert.GreaterOrEqual(t, s.calls, uint64(len(truth.Reads)), "calls >= the helper's reads")
	assert.GreaterOrEqual(t, s.errors, uint64(dirReads), "errors >= the directory reads")
	assert.LessOrEqual(t, s.errors, s.calls)
}

func parseHistogram(t *testing.T, out string) tracers.Histogram {
	t.Helper()
	var h tracers.Histogram
	slot := 0
	for line := range strings.Lines(out) {
		m := slotLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		low, _ := tracers.SlotRange(slot)
		require.Equal(t, fmt.Sprint(low), m[1], "slots in order from 0")
		h[slot] = atois(t, m[3:4])[0]
		slot++
	}
	require.NotZero(t, slot, "a histogram in the output")
	return h
}

// checkHistogram: every call counted once, the slow pipe reads in the
// slots of 32768 us and above (pipeDelay is 50 ms).
func checkHistogram(t *testing.T, h tracers.Histogram, calls uint64) {
	t.Helper()
	assert.Equal(t, calls, h.Total(), "histogram total == calls")
	var slow uint64
	for i, n := range h {
		if low, _ := tracers.SlotRange(i); low >= 32768 {
			slow += n
		}
	}
	assert.GreaterOrEqual(t, slow, uint64(pipeReads), "pipe reads in the slots >= 32768 us")
}

func parsePerTGID(t *testing.T, out string) []tracers.TGIDLatency {
	t.Helper()
	var rows []tracers.TGIDLatency
	for line := range strings.Lines(out) {
		m := perTGIDLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		n := atois(t, m[1:])
		rows = append(rows, tracers.TGIDLatency{TGID: uint32(n[0]), Calls: n[1], Total: time.Duration(n[2]) * time.Microsecond, Max: time.Duration(n[4]) * time.Microsecond})
	}
	return rows
}

// checkPerTGID: with --pid, one row, the helper's, holding every call.
func checkPerTGID(t *testing.T, rows []tracers.TGIDLatency, helper int, calls uint64) {
	t.Helper()
	require.Len(t, rows, 1, "one process traced")
	r := rows[0]
	assert.Equal(t, uint32(helper), r.TGID)
	assert.Equal(t, calls, r.Calls, "its calls == calls")
	assert.GreaterOrEqual(t, r.Max, pipeDelay, "max latency >= the pipe delay")
	assert.GreaterOrEqual(t, r.Total, pipeReads*pipeDelay, "total latency >= the pipe reads'")
}

func atois(t *testing.T, ss []string) []uint64 {
	t.Helper()
	n := make([]uint64, len(ss))
	for i, s := range ss {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		n[i] = uint64(v)
	}
	return n
}
