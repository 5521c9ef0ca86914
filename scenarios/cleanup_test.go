package scenarios

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/tracefs"
	"tracebench/tracers"
	"tracebench/tracers/tracerstest"
	"tracebench/workload"
)

// tracerEnv makes this test binary, re-executed, run one tracer until it
// is signalled (runTracer), like an operator's tool would.
const tracerEnv = "TRACEBENCH_TRACER_RUNNER"

// tracerRun is what the re-executed tracer runs.
type tracerRun struct {
	Mechanism string
	Config    tracers.Config
}

// Lines the tracer runner prints first.
const (
	runnerReady       = "attached"
	runnerUnsupported = "unsupported: "
)

// interruption is one way a tracing process is stopped mid-run.
type interruption struct {
	name string
	sig  syscall.Signal
	cfg  tracers.Config
}

// leaves is what in leaves of m in the kernel, for tracefs.ReclaimStale to
// remove: what m declares a SIGKILL leaves; nothing after a handled signal.
func (in interruption) leaves(m tracers.Mechanism) tracers.Residues {
	if in.sig != syscall.SIGKILL {
		return 0
	}
	return m.Can.KillLeaves
}

// interruptions: SIGINT and SIGTERM are handled (the runner closes its
// tracer); after SIGKILL the kernel frees what file descriptors held, and
// the threshold makes ftrace-graph set the global tracing_thresh.
var interruptions = []interruption{
	{name: "SIGINT", sig: syscall.SIGINT},
	{name: "SIGTERM", sig: syscall.SIGTERM},
	{name: "SIGTERM-maxactive", sig: syscall.SIGTERM,
		cfg: tracers.Config{KretprobeMaxActive: 1, Threshold: time.Millisecond}},
	{name: "SIGKILL", sig: syscall.SIGKILL, cfg: tracers.Config{Threshold: time.Millisecond}},
}

// runnerTimeout bounds the runner's start-up and its exit after a signal.
const runnerTimeout = workload.StartTimeout

func TestCleanupOnSignal(t *testing.T) {
	requireRoot(t)
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			for _, in := range interruptions {
				t.Run(in.name, func(t *testing.T) {
					outcomes.track(t, m.Name, "cleanup-"+in.name)
					interruptTracer(t, m, in)
				})
			}
		})
	}
}

// interruptTracer starts a tracer in a child process, checks that its
// objects are visible in the kernel, signals the child and checks that
// none of them remain, or, where the interruption leaves some, that
// tracefs.ReclaimStale removes them.
func interruptTracer(t *testing.T, m tracers.Mechanism, in interruption) {
	mechanism := m.Name
	left, err := tracerstest.WaitNoLeftovers(releaseTimeout)
	require.NoError(t, err)
	require.Empty(t, left, "kernel objects before the run")
	defer assertTracingThreshRestored(t)()

	raw, err := json.Marshal(tracerRun{Mechanism: mechanism, Config: in.cfg})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), tracerEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	// Only the first line is read by the test; the rest is drained, so
	// that the runner never blocks on its stdout and Wait always returns.
	lines := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		if scanner.Scan() {
			lines <- scanner.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()

	line := receiveLine(t, lines)
	if reason, ok := strings.CutPrefix(line, runnerUnsupported); ok {
		outcomes.skip(t, mechanism, "cleanup", reason)
	}
	require.Equal(t, runnerReady, line, "runner's first line")

	// The enumeration must see a live tracer, or its empty answer later
	// would prove nothing.
	left, err = tracerstest.Leftovers()
	require.NoError(t, err)
	require.NotEmpty(t, left, "kernel objects of the running tracer")
	t.Logf("while running: %v", left)

	require.NoError(t, cmd.Process.Signal(in.sig))
	select {
	case err := <-exited:
		exited <- err // for the deferred cleanup
		if in.sig != syscall.SIGKILL {
			assert.NoError(t, err, "runner exit after %v", in.sig)
		}
	case <-time.After(runnerTimeout):
		t.Fatalf("runner did not exit within %v of %v", runnerTimeout, in.sig)
	}
	if kinds := in.leaves(m); kinds != 0 {
		assertLeftThenReclaimed(t, kinds)
	}
	assertNoLeftovers(t)
}

// assertLeftThenReclaimed checks that Leftovers lists what a killed
// tracer left (of the kinds) and that ReclaimStale removes it, as the
// operator would.
func assertLeftThenReclaimed(t *testing.T, kinds tracers.Residues) {
	t.Helper()
	left, err := tracerstest.Leftovers()
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(left, func(l tracerstest.Leftover) bool { return kinds.Has(l.Kind) }),
		"Leftovers after the kill %v: want a %v", left, kinds)
	reclaimed, err := tracefs.ReclaimStale()
	require.NoError(t, err)
	assert.NotEmpty(t, reclaimed, "ReclaimStale removed nothing")
	t.Logf("left by the killed tracer: %v; ReclaimStale removed: %v", left, reclaimed)
}

func receiveLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case line, ok := <-lines:
		require.True(t, ok, "runner exited without a line")
		return line
	case <-time.After(runnerTimeout):
		t.Fatalf("no line from the runner within %v", runnerTimeout)
		return ""
	}
}

// runTracer runs a tracer until SIGINT or SIGTERM, in the process
// interruptTracer launched.
func runTracer(raw string) error {
	var run tracerRun
	if err := json.Unmarshal([]byte(raw), &run); err != nil {
		return err
	}
	// Registered before anything loads, so no signal finds the tracer
	// attached and unhandled.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	tr, err := tracers.Start(run.Mechanism, run.Config)
	if errors.Is(err, tracers.ErrUnsupported) {
		// One line: a refusal may hold the verifier's log.
		fmt.Println(runnerUnsupported + strings.ReplaceAll(err.Error(), "\n", "; "))
		return nil
	}
	if err != nil {
		return err
	}
	defer tr.Close()
	go func() { // the consumer, busy when the signal comes
		for {
			if _, err := tr.ReadEvent(time.Time{}); errors.Is(err, os.ErrClosed) {
				return
			}
		}
	}()
	fmt.Println(runnerReady)
	<-stop
	return tr.Close()
}

// badConfig is a configuration Start must refuse before anything is
// loaded, with an error containing the mechanism's name, ": " and wantErr.
type badConfig struct {
	name    string
	cfg     tracers.Config
	wantErr string
}

// badConfigs are refused by every mechanism.
var badConfigs = []badConfig{
	{"negative-threshold", tracers.Config{Threshold: -time.Millisecond}, "threshold -1ms is negative"},
	{"overflowed-threshold", tracers.Config{Threshold: overflowedSeconds(1 << 34)},
		"threshold -351909h41m29.709551616s is negative"},
	{"threshold-above-max", tracers.Config{Threshold: 2 * time.Hour}, "threshold 2h0m0s exceeds 1h0m0s"},
	{"ring-not-power-of-two", tracers.Config{RingBufferBytes: 3 * 4096},
		"ring buffer size 12288 bytes is not a power of two"},
	{"ring-below-page", tracers.Config{RingBufferBytes: 64}, "ring buffer size 64 bytes is not a power of two"},
	{"maxactive-negative", tracers.Config{KretprobeMaxActive: -1}, "kretprobe maxactive -1 is not between 0 and 4096"},
	{"thread-map-negative", tracers.Config{ThreadMapEntries: -1}, "per-thread map size -1 entries is not between 0 and"},
}

// ruledOut returns the configurations a mechanism declaring can cannot
// apply: a threshold between two steps of its resolution (ftrace-graph's
// tracing_thresh is in µs), aggregates where it does not count every call.
func ruledOut(can tracers.Capabilities) []badConfig {
	var bcs []badConfig
	if r := can.ThresholdResolution; r > time.Nanosecond {
		th := r + r/2
		bcs = append(bcs, badConfig{"threshold-below-resolution", tracers.Config{Threshold: th},
			fmt.Sprintf("threshold %v is not a multiple of the mechanism's threshold resolution", th)})
	}
	if !can.Aggregates() {
		bcs = append(bcs,
			badConfig{"histogram", tracers.Config{Threshold: time.Millisecond, Histogram: true}, "histogram asked for"},
			badConfig{"per-tgid", tracers.Config{Threshold: time.Millisecond, PerTGID: true}, "per-TGID totals asked for"})
	}
	return bcs
}

// overflowedSeconds converts s seconds to a Duration the way a caller
// might, wrapping around for s beyond ~292 years.
func overflowedSeconds(s int64) time.Duration { return time.Duration(s) * time.Second }

// TestBadConfig checks in the kernel that a refused configuration loaded
// nothing; tracers' unit tests cover the messages without a kernel.
func TestBadConfig(t *testing.T) {
	requireRoot(t)
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			outcomes.track(t, m.Name, "bad-config")
			for _, bc := range slices.Concat(badConfigs, ruledOut(m.Can)) {
				t.Run(bc.name, func(t *testing.T) {
					tr, err := m.Start(bc.cfg)
					if err == nil {
						tr.Close()
					}
					assert.ErrorContains(t, err, m.Name+": "+bc.wantErr)
					assert.NotErrorIs(t, err, tracers.ErrUnsupported, "refused for the config, not the kernel")
					assertNoLeftovers(t)
				})
			}
		})
	}
	t.Run("unknown-mechanism", func(t *testing.T) {
		_, err := tracers.Start("kprobe", tracers.Config{})
		// The list is the registry's, which grows.
		assert.EqualError(t, err, `unknown mechanism "kprobe" (known: `+strings.Join(mechanismNames(), ", ")+")")
	})
}
