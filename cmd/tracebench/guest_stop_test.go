package main

// Guest tests of the ways a trace run ends early: its output's reader
// exits, a terminating signal, a second Ctrl-C. Each must close the tracer
// (no BPF program or link, no tracefs instance left, tracing_thresh as it
// was) and exit non-zero with one line saying why. They need root and a
// kernel that runs the mechanisms; elsewhere they skip with the reason.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/internal/testenv"
	"tracebench/tracers"
)

// stopMechanisms are traced by the stop tests: the first mechanism that is
// not a BPF object (ftrace-graph changes tracefs: two instances and the
// global tracing_thresh) and the first that is (fsession holds BPF links).
func stopMechanisms() []tracers.Mechanism {
	ms := tracers.Mechanisms()
	var stop []tracers.Mechanism
	for _, bpf := range []bool{false, true} {
		if i := slices.IndexFunc(ms, func(m tracers.Mechanism) bool { return m.Can.BPF == bpf }); i >= 0 {
			stop = append(stop, ms[i])
		}
	}
	return stop
}

// forEachStopMechanism runs test for each of stopMechanisms the kernel
// runs, with the tracing_thresh read before.
func forEachStopMechanism(t *testing.T, test func(t *testing.T, mechanism, thresh string)) {
	for _, m := range stopMechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			requireTraceable(t, m)
			test(t, m.Name, testenv.TracingThresh(t))
		})
	}
}

// TestTraceStopSignals sends each terminating signal, or Ctrl-C twice, to
// a running trace.
func TestTraceStopSignals(t *testing.T) {
	// SIGHUP and SIGTERM finish as Ctrl-C does, summary included; SIGQUIT
	// aborts without it.
	summarized := map[syscall.Signal]bool{syscall.SIGHUP: true, syscall.SIGQUIT: false, syscall.SIGTERM: true}
	for sig, summary := range summarized {
		name := unix.SignalName(sig)
		t.Run(name, func(t *testing.T) {
			forEachStopMechanism(t, func(t *testing.T, mechanism, thresh string) {
				c := startCLI(t, "trace", "--mechanism", mechanism, "--threshold-us", fmt.Sprint(thresholdUS),
					"--duration", "600", "--pid", fmt.Sprint(os.Getpid()))
				require.NoError(t, c.cmd.Process.Signal(sig))
				checkStoppedEarly(t, c, c.exited(t), name, thresh)
				out := strings.TrimSuffix(c.stdout.String(), "\n")
				last := out[strings.LastIndexByte(out, '\n')+1:]
				assert.Equal(t, summary, summaryRE.MatchString(last), "a summary ends stdout: %q", out)
			})
		})
	}
}

// TestTraceSecondInterrupt: a second Ctrl-C aborts a run that finishes
// after the first, even one blocked writing to a full pipe nobody reads.
func TestTraceSecondInterrupt(t *testing.T) {
	forEachStopMechanism(t, func(t *testing.T, mechanism, thresh string) {
		r, w := fullPipe(t)
		defer r.Close()
		c := startCLITo(t, w, "trace", "--mechanism", mechanism, "--threshold-us", fmt.Sprint(thresholdUS),
			"--duration", "600", "--pid", fmt.Sprint(os.Getpid()))
		w.Close()
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
		require.NoError(t, c.waitStderr(func(line string) bool { return strings.Contains(line, "SIGINT received") }),
			"the CLI says it finishes; stderr: %q", c.seen)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
		checkStoppedEarly(t, c, c.exited(t), "second SIGINT", thresh)
	})
}

// fullPipe returns a pipe whose buffer is full: a write to w blocks until
// r is read.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	raw, err := w.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, raw.Control(func(fd uintptr) {
		err = unix.SetNonblock(int(fd), true)
		for chunk := make([]byte, 4096); err == nil; {
			_, err = unix.Write(int(fd), chunk)
		}
		if errors.Is(err, unix.EAGAIN) {
			err = unix.SetNonblock(int(fd), false)
		}
	}))
	require.NoError(t, err, "fill the pipe")
	return r, w
}

// TestTraceOutputReaderExits pipes the trace into `head -1`, which exits
// after the first event: the CLI must end by itself.
func TestTraceOutputReaderExits(t *testing.T) {
	forEachStopMechanism(t, func(t *testing.T, mechanism, thresh string) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		var headOut bytes.Buffer
		head := exec.Command("head", "-1")
		head.Stdin, head.Stdout = r, &headOut
		require.NoError(t, head.Start())
		r.Close()
		c, _ := runWorkload(t, func(tgid uint32) *cli {
			defer w.Close() // the CLI holds the only write end
			return startCLITo(t, w, "trace", "--mechanism", mechanism, "--threshold-us", fmt.Sprint(thresholdUS),
				"--duration", "600", "--pid", fmt.Sprint(tgid))
		})
		require.NoError(t, head.Wait())
		assert.Regexp(t, `\AEVENT .*\n\z`, headOut.String(), "head's one line")
		checkStoppedEarly(t, c, c.exited(t), "output", thresh)
	})
}

// checkStoppedEarly checks how the CLI ended (err from exec.Cmd.Wait): by
// itself with a non-zero status, its last stderr line naming why, and
// nothing of the tracer left.
func checkStoppedEarly(t *testing.T, c *cli, err error, why, thresh string) {
	t.Helper()
	t.Cleanup(reclaim(t))
	var exit *exec.ExitError
	if assert.ErrorAs(t, err, &exit, "non-zero exit; stderr: %q", c.seen) {
		ws := exit.Sys().(syscall.WaitStatus)
		assert.False(t, ws.Signaled(), "the CLI exits by itself, not killed by %v; stderr: %q", ws.Signal(), c.seen)
	}
	require.NotEmpty(t, c.seen)
	last := c.seen[len(c.seen)-1]
	assert.True(t, strings.HasPrefix(last, "tracebench: ") && strings.Contains(last, why),
		"last stderr line says why (%q): %q", why, c.seen)
	assertNoLeftovers(t)
	assert.Equal(t, thresh, testenv.TracingThresh(t), "tracing_thresh after the CLI exited")
}

// reclaim returns a cleanup that removes what a failed CLI left, so that
// the tests after it can start ftrace-graph.
func reclaim(t *testing.T) func() {
	return func() {
		if left, err := tracers.ReclaimStale(); err != nil || len(left) > 0 {
			t.Logf("reclaimed after the CLI: %q (error %v)", left, err)
		}
	}
}
