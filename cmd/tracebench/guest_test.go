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
	"io"
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

	"tracebench/histogram"
	"tracebench/internal/testenv"
	"tracebench/tracers"
	"tracebench/tracers/tracerstest"
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
	shown  *transcript // of a run whose stdout is collected, else nil
}

// startCLI starts the command with args and waits until it says it
// traces.
func startCLI(t *testing.T, args ...string) *cli {
	t.Helper()
	return startCLITo(t, nil, args...)
}

// startCLITo is startCLI with the command's stdout going to stdout (an
// *os.File is handed over as is, e.g. a pipe); nil collects it for wait,
// and the run's transcript is t's (record) once it exited.
func startCLITo(t *testing.T, stdout io.Writer, args ...string) *cli {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	c := &cli{cmd: exec.Command(self, args...), stderr: make(chan string, 64)}
	c.cmd.Env = append(os.Environ(), cliEnv+"=1")
	c.cmd.Stdout = stdout
	if stdout == nil {
		c.shown = newTranscript(rootPrompt, args)
		c.cmd.Stdout = io.MultiWriter(&c.stdout, c.shown)
	}
	stderr, err := c.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { c.cmd.Process.Kill() }) // no-op once it exited
	go func() {
		defer close(c.stderr)
		for s := bufio.NewScanner(stderr); s.Scan(); {
			if c.shown != nil {
				c.shown.stderrLine(s.Text())
			}
			c.stderr <- s.Text()
		}
	}()
	require.NoError(t, c.waitStderr(func(line string) bool { return strings.HasPrefix(line, bannerPrefix) }),
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
	require.NoError(t, c.exited(t), "CLI failed; stderr: %q", c.seen)
	assertNoLeftovers(t)
	return c.stdout.String()
}

// exited waits for the CLI to exit and returns what exec.Cmd.Wait says.
func (c *cli) exited(t *testing.T) error {
	t.Helper()
	// The CLI closes stderr by exiting.
	require.ErrorIs(t, c.waitStderr(func(string) bool { return false }), errStderrClosed,
		"CLI did not exit; stderr: %q", c.seen)
	err := c.cmd.Wait()
	if c.shown != nil {
		record(t, c.shown.String())
	}
	return err
}

func assertNoLeftovers(t *testing.T) {
	t.Helper()
	// The kernel frees closed programs and links after an RCU grace period.
	left, err := tracerstest.WaitNoLeftovers(10 * time.Second)
	assert.NoError(t, err)
	assert.Empty(t, left, "kernel objects left 10 s after the CLI exited")
}

// capabilities are what a mechanism gives the CLI here.
type capabilities struct {
	aggregates bool           // it counts histogram and per-process table in BPF
	unknown    tracers.Fields // Stats it does not observe with a threshold
}

// requireTraceable skips t unless m loads and attaches here, and says
// what it can give.
func requireTraceable(t *testing.T, m tracers.Mechanism) capabilities {
	t.Helper()
	c, err := traceable(m)
	if errors.Is(err, tracers.ErrUnsupported) || errors.Is(err, errNotRoot) {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	return c
}

var errNotRoot = errors.New(testenv.Tracing.Missing())

// traceable starts m on a filter that matches nothing and closes it: the
// only sure way to know the kernel runs it. What it can give is declared;
// the threshold is above 0, like thresholdUS.
func traceable(m tracers.Mechanism) (capabilities, error) {
	if testenv.Tracing.Missing() != "" {
		return capabilities{}, errNotRoot
	}
	cfg := tracers.Config{TGID: uint32(os.Getpid()), Threshold: tracers.MaxThreshold}
	tr, err := m.Start(cfg)
	if err != nil {
		return capabilities{}, err
	}
	c := capabilities{aggregates: m.Can.Aggregates()}
	c.unknown, _ = m.Can.Blind.Under(cfg)
	return c, tr.Close()
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
// histogram and per-process table where the mechanism counts them, and
// stops it with SIGINT.
func TestTraceText(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			args := []string{"trace", "--mechanism", m.Name, "--threshold-us", fmt.Sprint(thresholdUS), "--duration", "600"}
			can := requireTraceable(t, m)
			if can.aggregates {
				args = append(args, "--histogram", "--per-pid")
			} else {
				checkAggregatesRefused(t, m.Name)
			}
			c, truth := runWorkload(t, func(tgid uint32) *cli {
				return startCLI(t, append(args, "--pid", fmt.Sprint(tgid))...)
			})
			out := c.stop(t)
			t.Logf("output:\n%s", out)
			s := checkText(t, out, truth, can.unknown, skippedProbes(c.seen))
			if can.unknown != 0 {
				assert.Contains(t, c.seen, fmt.Sprintf("tracebench: %s does not observe %s: shown as ? (null in JSON)", m.Name, can.unknown))
			}
			if can.aggregates {
				require.NotNil(t, s.calls, "a mechanism that counts aggregates counts calls")
				missed := skippedProbes(c.seen)
				checkHistogram(t, parseHistogram(t, out), *s.calls, missed)
				checkPerTGID(t, parsePerTGID(t, out), truth.TGID, *s.calls, missed)
			}
		})
	}
}

// checkAggregatesRefused: a mechanism that does not count every call in
// BPF refuses --histogram and --per-pid with one line, before tracing.
func checkAggregatesRefused(t *testing.T, mechanism string) {
	t.Helper()
	for _, flag := range []string{"--histogram", "--per-pid"} {
		code, stdout, stderr := runCLIRecorded(t, "trace", "--mechanism", mechanism, "--duration", "1", flag)
		assert.Equal(t, exitError, code, "%s with %s", mechanism, flag)
		assert.Empty(t, stdout, "%s with %s", mechanism, flag)
		assert.Regexp(t, `\Atracebench: `+regexp.QuoteMeta(mechanism)+`: [^\n]+\n\z`, stderr, "%s with %s: one line", mechanism, flag)
	}
	assertNoLeftovers(t)
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

	require.NotNil(t, s.Missed, "auto's mechanisms count misses")
	checkSlowEvents(t, events, truth, 0, *s.Missed)
	checkSummary(t, jsonSummaryLine(s), uint64(len(events)), truth, 0, *s.Missed)
	require.NotNil(t, s.Calls, "auto's mechanisms count calls")
	var h histogram.Log2
	require.Len(t, s.Histogram, histogram.Slots)
	for i, slot := range s.Histogram {
		low, _ := histogram.SlotRange(i)
		assert.Equal(t, low, slot.LowUS, "slot %d", i)
		h[i] = slot.Count
	}
	checkHistogram(t, h, *s.Calls, *s.Missed)
	require.NotNil(t, s.PerPID)
	var rows []tracers.TGIDLatency
	for _, p := range s.PerPID.Processes {
		rows = append(rows, tracers.TGIDLatency{TGID: p.TGID, Calls: p.Calls, Total: time.Duration(p.TotalUS) * time.Microsecond, Max: time.Duration(p.MaxUS) * time.Microsecond})
	}
	assert.Zero(t, s.PerPID.Overflow)
	checkPerTGID(t, rows, truth.TGID, *s.Calls, *s.Missed)
}

// TestListAsRoot: as root, list says "yes" exactly for the mechanisms
// that start here, with their summary, and "no" with the reason for the
// ones the kernel lacks.
func TestListAsRoot(t *testing.T) {
	testenv.Tracing.Require(t)
	code, stdout, stderr := runCLIRecorded(t, "list")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, len(tracers.Mechanisms())+1, "a header and a row per mechanism")
	for i, m := range tracers.Mechanisms() {
		fields := strings.Fields(lines[i+1])
		require.GreaterOrEqual(t, len(fields), 2, lines[i+1])
		assert.Equal(t, m.Name, fields[0])
		_, err := traceable(m)
		switch {
		case err == nil:
			assert.Equal(t, "yes", fields[1], lines[i+1])
			assert.True(t, strings.HasSuffix(lines[i+1], m.Summary), lines[i+1])
		case errors.Is(err, tracers.ErrUnsupported):
			assert.Equal(t, "no", fields[1], lines[i+1])
		}
	}
	assertNoLeftovers(t)
}

// TestTraceDurationEnds checks the tracer stops by itself and cleans up;
// its start line begins "Tracing vfs_read for", as the seed tool's did.
func TestTraceDurationEnds(t *testing.T) {
	auto := autoChoice(t)
	started := time.Now()
	c := startCLI(t, "trace", "--duration", "1", "--pid", fmt.Sprint(os.Getpid()))
	assert.Equal(t, fmt.Sprintf("Tracing vfs_read for 1 s: calls by process %d taking >= 1000 us, with %s. Ctrl-C "+
		"to stop.", os.Getpid(), auto), c.seen[len(c.seen)-1])
	out := c.wait(t)
	assert.Less(t, time.Since(started), cliTimeout)
	// This process's own reads (Go runtime threads, /proc polling) may
	// take over the 1 ms default threshold under emulation: EVENT lines
	// may come, but the summary must be last and count them.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines[:len(lines)-1] {
		assert.Regexp(t, eventLine, line)
	}
	s := textSummaryLine(t, lines[len(lines)-1])
	assert.Equal(t, uint64(len(lines)-1), s.events, "events in the summary == EVENT lines")
}

// autoChoice returns the mechanism auto must choose, skipping t if none.
func autoChoice(t *testing.T) string {
	t.Helper()
	var reasons []string
	for _, m := range autoMechanisms() {
		_, err := traceable(m)
		if err == nil {
			return m.Name
		}
		if !errors.Is(err, tracers.ErrUnsupported) && !errors.Is(err, errNotRoot) {
			require.NoError(t, err)
		}
		reasons = append(reasons, err.Error())
	}
	t.Skipf("no mechanism of --mechanism auto runs here: %s", strings.Join(reasons, "; "))
	return ""
}

// Values the mechanism did not observe are printed "?".
var (
	eventLine   = regexp.MustCompile(`^EVENT function=vfs_read comm=(\S+) tgid=(\d+|\?) pid=(\d+) requested=(\d+|\?) result=(-?\d+|\?) latency_us=(\d+)$`)
	summaryRE   = regexp.MustCompile(`^SUMMARY calls=(\d+|\?) slow=(\d+|\?) errors=(\d+|\?) dropped=(\d+|\?) lost=(\d+|\?) events=(\d+)$`)
	slotLine    = regexp.MustCompile(`^\s*(\d+) -> (\d+|inf)\s+: (\d+)\s+\|\**\s*\|$`)
	perTGIDLine = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`)
)

// summaryLine is the SUMMARY line or the JSON summary; nil is a value the
// mechanism did not observe.
type summaryLine struct {
	calls, slow, errors, dropped, lost *uint64
	events                             uint64
}

func jsonSummaryLine(s jsonSummary) summaryLine {
	return summaryLine{calls: s.Calls, slow: s.Slow, errors: s.Errors, dropped: s.Dropped, lost: s.Lost, events: s.Events}
}

// textSummaryLine parses a SUMMARY line.
func textSummaryLine(t *testing.T, line string) summaryLine {
	t.Helper()
	m := summaryRE.FindStringSubmatch(line)
	require.NotNil(t, m, "the summary line: %q", line)
	return summaryLine{calls: parseKnown[uint64](t, m[1]), slow: parseKnown[uint64](t, m[2]),
		errors: parseKnown[uint64](t, m[3]), dropped: parseKnown[uint64](t, m[4]), lost: parseKnown[uint64](t, m[5]),
		events: *parseKnown[uint64](t, m[6])}
}

// printedUnknown is the set of counters the summary shows as unknown.
func (s summaryLine) printedUnknown() tracers.Fields {
	var u tracers.Fields
	printed := map[tracers.Field]*uint64{tracers.FieldCalls: s.calls, tracers.FieldSlow: s.slow,
		tracers.FieldErrors: s.errors, tracers.FieldDropped: s.dropped, tracers.FieldLost: s.lost}
	for f, v := range printed {
		if v == nil {
			u |= f
		}
	}
	return u
}

// checkText checks the EVENT lines and the SUMMARY line, which must be
// the last, against the workload and the Stats the mechanism does not
// observe (unknown), and returns the summary.
func checkText(t *testing.T, out string, truth workload.Result, unknown tracers.Fields, missed uint64) summaryLine {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	s := textSummaryLine(t, lines[len(lines)-1])
	var events []jsonEvent
	for _, line := range lines {
		if !strings.HasPrefix(line, "EVENT ") {
			continue
		}
		f := eventLine.FindStringSubmatch(line)
		require.NotNil(t, f, "event line %q", line)
		events = append(events, jsonEvent{Comm: f[1], TGID: parseKnown[uint32](t, f[2]), PID: *parseKnown[uint32](t, f[3]),
			Requested: parseKnown[uint64](t, f[4]), Result: parseKnown[int64](t, f[5]), LatencyUS: *parseKnown[int64](t, f[6])})
	}
	checkSlowEvents(t, events, truth, unknown, missed)
	checkSummary(t, s, uint64(len(events)), truth, unknown, missed)
	return s
}

// skippedProbes is the count in the CLI's warning that the kernel skipped
// the probes of some calls (the trampolines' recursion guard does under
// preemption, see scenarios/CONFORMANCE.md), 0 without one.
func skippedProbes(stderr []string) uint64 {
	for _, line := range stderr {
		var n uint64
		if _, err := fmt.Sscanf(line+"\n", missedWarning, &n); err == nil {
			return n
		}
	}
	return 0
}

// parseKnown parses a printed value, nil for "?".
func parseKnown[T uint32 | uint64 | int64](t *testing.T, s string) *T {
	t.Helper()
	if s == unknownText {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	n := T(v)
	return &n
}

// checkSlowEvents: every event is the helper's and reached the threshold;
// the pipe reads, and only they, are certain to be there. A mechanism
// that observes every counter (unknown empty: the BPF ones) observes
// every event field too; one that does not may leave tgid, requested and
// result unknown, and then its pipe reads are told by their latency.
func checkSlowEvents(t *testing.T, events []jsonEvent, truth workload.Result, unknown tracers.Fields, missed uint64) {
	t.Helper()
	pipe, byLatency := 0, false
	for _, ev := range events {
		if unknown == 0 {
			assert.True(t, ev.TGID != nil && ev.Requested != nil && ev.Result != nil, "a mechanism observing every counter prints every event field: %+v", ev)
		}
		if ev.TGID != nil {
			assert.Equal(t, uint32(truth.TGID), *ev.TGID, "event of the helper: %+v", ev)
		}
		assert.GreaterOrEqual(t, ev.LatencyUS, int64(thresholdUS), "event at or above the threshold: %+v", ev)
		switch {
		case ev.Requested == nil || ev.Result == nil:
			byLatency = true
			if ev.LatencyUS >= pipeDelay.Microseconds() {
				pipe++
			}
		case *ev.Requested == 1 && *ev.Result == 1:
			pipe++
			assert.GreaterOrEqual(t, ev.LatencyUS, pipeDelay.Microseconds(), "a pipe read lasts at least the writer's delay: %+v", ev)
		}
	}
	if !byLatency {
		testenv.AssertShortByMissed(t, uint64(pipe), pipeReads, missed, "one event per delayed pipe read")
		return
	}
	// An event of pipeDelay or more is a read user space timed that long.
	assert.GreaterOrEqual(t, pipe, pipeReads, "events of at least the pipe delay >= delayed pipe reads")
	assert.LessOrEqual(t, pipe, readsOfAtLeast(truth, pipeDelay), "events of at least the pipe delay <= reads that long in user space")
}

func readsOfAtLeast(truth workload.Result, d time.Duration) int {
	n := 0
	for _, rd := range truth.Reads {
		if rd.Duration >= d {
			n++
		}
	}
	return n
}

// checkSummary checks the summary against the workload, counter by
// counter where the mechanism observes it; the counters shown unknown
// must be exactly those the mechanism does not observe. missed is the
// system-wide count of calls whose probes the kernel skipped in this run:
// with none, calls + lost == reads and errors == directory reads exactly;
// otherwise each may fall short of that by at most missed.
func checkSummary(t *testing.T, s summaryLine, events uint64, truth workload.Result, unknown tracers.Fields, missed uint64) {
	t.Helper()
	printable := tracers.FieldCalls | tracers.FieldSlow | tracers.FieldErrors | tracers.FieldDropped | tracers.FieldLost
	assert.Equal(t, (unknown & printable).String(), s.printedUnknown().String(), "counters shown unknown")
	assert.Equal(t, events, s.events, "events printed == events in the summary")
	if s.slow != nil && s.dropped != nil {
		assert.Equal(t, *s.slow, s.events+*s.dropped, "slow == events + dropped")
	}
	if s.dropped != nil {
		assert.Zero(t, *s.dropped)
	}
	if s.calls != nil && s.lost != nil {
		testenv.AssertShortByMissed(t, *s.calls+*s.lost, uint64(len(truth.Reads)), missed, "calls + lost vs the helper's reads")
	}
	if s.errors != nil {
		testenv.AssertShortByMissed(t, *s.errors, uint64(dirReads), missed, "errors vs the directory reads")
	}
	if s.errors != nil && s.calls != nil {
		assert.LessOrEqual(t, *s.errors, *s.calls)
	}
}

func parseHistogram(t *testing.T, out string) histogram.Log2 {
	t.Helper()
	var h histogram.Log2
	slot := 0
	for line := range strings.Lines(out) {
		m := slotLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		low, _ := histogram.SlotRange(slot)
		require.Equal(t, fmt.Sprint(low), m[1], "slots in order from 0")
		h[slot] = atois(t, m[3:4])[0]
		slot++
	}
	require.NotZero(t, slot, "a histogram in the output")
	return h
}

// checkHistogram: every call counted once, the slow pipe reads in the
// slots of 32768 us and above (pipeDelay is 50 ms).
// checkHistogram: the histogram holds every call counted, and the delayed
// pipe reads in its slow slots but those the kernel skipped (missed,
// system-wide, as checkSummary allows).
func checkHistogram(t *testing.T, h histogram.Log2, calls, missed uint64) {
	t.Helper()
	assert.Equal(t, calls, h.Total(), "histogram total == calls")
	var slow uint64
	for i, n := range h {
		if low, _ := histogram.SlotRange(i); low >= 32768 {
			slow += n
		}
	}
	assert.GreaterOrEqual(t, slow+missed, uint64(pipeReads), "pipe reads in the slots >= 32768 us, but the skipped")
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

// checkPerTGID: with --pid, one row, the helper's, holding every call
// counted and the delayed pipe reads' latency but the skipped ones'.
func checkPerTGID(t *testing.T, rows []tracers.TGIDLatency, helper int, calls, missed uint64) {
	t.Helper()
	require.Len(t, rows, 1, "one process traced")
	r := rows[0]
	assert.Equal(t, uint32(helper), r.TGID)
	assert.Equal(t, calls, r.Calls, "its calls == calls")
	counted := uint64(pipeReads) - min(missed, uint64(pipeReads))
	if counted > 0 {
		assert.GreaterOrEqual(t, r.Max, pipeDelay, "max latency >= the pipe delay")
	}
	assert.GreaterOrEqual(t, r.Total, time.Duration(counted)*pipeDelay, "total latency >= the counted pipe reads'")
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

func TestSkippedProbes(t *testing.T) {
	assert.Equal(t, uint64(12), skippedProbes([]string{
		"Tracing vfs_read for 600 s: calls by process 1 taking >= 10000 us, with fsession. Ctrl-C to stop.",
		"tracebench: warning: the kernel skipped the probes of 12 calls (kretprobe maxactive or recursion); they are not counted",
	}))
	assert.Zero(t, skippedProbes([]string{bannerPrefix + "vfs_read"}))
}
