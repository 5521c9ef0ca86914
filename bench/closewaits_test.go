package bench

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/internal/poll"
)

// waitEvery is how often sampleWaits reads the closing thread's kernel
// stack, guest time: a 1 s Close gives 100 samples, each one read of a
// small /proc file beside the Close it times.
const waitEvery = 10 * time.Millisecond

// sleepFrames say that a task sleeps, not why: a stack's first frame
// outside them, and its caller, name what it waits for.
var sleepFrames = map[string]bool{"__schedule": true, "schedule": true, "schedule_timeout": true,
	"schedule_preempt_disabled": true, "schedule_hrtimeout_range": true, "schedule_hrtimeout_range_clock": true,
	"io_schedule": true, "preempt_schedule": true, "preempt_schedule_common": true,
	"preempt_schedule_thunk": true, "__cond_resched": true, "do_nanosleep": true, "hrtimer_nanosleep": true,
	"__wait_for_common": true, "wait_for_common": true, "wait_for_completion": true,
	"wait_for_completion_state": true, "wait_for_completion_killable": true, "wait_for_completion_timeout": true,
	"usleep_range_state": true, "msleep": true}

// waitOf names what a kernel stack (/proc/PID/task/TID/stack's text)
// waits in: "first ← caller" of its first frames outside sleepFrames,
// "running" for an empty stack (the task was on a CPU: the kernel does
// not unwind a running task), "" for a stack of sleep frames alone.
func waitOf(stack string) string {
	var frames []string
	for _, line := range strings.Split(strings.TrimSpace(stack), "\n") {
		_, frame, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(frame, "+")
		if name = strings.TrimSpace(name); name != "" && !sleepFrames[name] {
			frames = append(frames, name)
		}
	}
	switch len(frames) {
	case 0:
		if strings.TrimSpace(stack) == "" {
			return "running"
		}
		return ""
	case 1:
		return frames[0]
	}
	return frames[0] + " ← " + frames[1]
}

// waitSampler counts what one thread waits in (waitOf), from its kernel
// stack read every waitEvery until stop.
type waitSampler struct {
	counts map[string]int
	n      int
	stop   func()
	err    error
}

// sampleWaits starts sampling the thread tid of this process.
func sampleWaits(tid int) *waitSampler {
	s := &waitSampler{counts: map[string]int{}}
	path := fmt.Sprintf("/proc/self/task/%d/stack", tid)
	s.stop = poll.Every(waitEvery, func() bool {
		raw, err := os.ReadFile(path)
		if err != nil {
			s.err = fmt.Errorf("reading %s: %w", path, err)
			return false
		}
		s.n++
		if w := waitOf(string(raw)); w != "" {
			s.counts[w]++
		}
		return true
	})
	return s
}

// end stops sampling and returns what was sampled, as waitsText says.
func (s *waitSampler) end() (string, error) {
	s.stop()
	return waitsText(s.counts, s.n), s.err
}

// waitsText is the shares of the n samples, most first, the ties by
// name: "A ← B 61%, running 20%, ... (n samples, every 10ms)".
func waitsText(counts map[string]int, n int) string {
	if n == 0 {
		return fmt.Sprintf("no sample (none in %v)", waitEvery)
	}
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.0f%%", name, 100*float64(counts[name])/float64(n))
	}
	return fmt.Sprintf("%s (%d samples, every %v)", strings.Join(parts, ", "), n, waitEvery)
}

func TestWaitOf(t *testing.T) {
	for stack, want := range map[string]string{
		"[<0>] __schedule+0x3c4/0xb90\n[<0>] schedule+0x27/0xf0\n[<0>] schedule_timeout+0x9e/0x160\n" +
			"[<0>] __wait_for_common+0x94/0x1b0\n[<0>] synchronize_rcu_tasks_generic+0xa3/0x120\n" +
			"[<0>] ftrace_shutdown.part.0+0x1a5/0x2b0\n[<0>] unregister_ftrace_function+0x2a/0x150\n": "synchronize_rcu_tasks_generic ← ftrace_shutdown.part.0",
		"[<0>] __schedule+0x3c4/0xb90\n[<0>] bpf_trampoline_unlink_prog\n": "bpf_trampoline_unlink_prog",
		"":                                      "running",
		"[<0>] __schedule+0x3c4/0xb90\n":        "",
		"garbage\n[<0>] unregister_kprobes+0x1": "unregister_kprobes",
	} {
		assert.Equal(t, want, waitOf(stack), stack)
	}
	assert.Equal(t, "b 50%, a 25%, c 25% (4 samples, every 10ms)", waitsText(map[string]int{"a": 1, "b": 2, "c": 1}, 4))
	assert.Equal(t, "no sample (none in 10ms)", waitsText(nil, 0))
}

// The sampler names a thread of this process asleep in nanosleep(2) by
// the syscall's frames, for as long as it sleeps.
func TestSampleWaits(t *testing.T) {
	_, err := os.ReadFile("/proc/self/stack")
	switch {
	case errors.Is(err, os.ErrNotExist):
		t.Skip("no /proc/PID/stack: the kernel lacks CONFIG_STACKTRACE")
	case errors.Is(err, os.ErrPermission):
		t.Skipf("reading /proc/self/stack needs CAP_SYS_ADMIN: %v", err)
	}
	require.NoError(t, err)
	tids, slept := make(chan int), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tids <- unix.Gettid()
		ts := unix.NsecToTimespec((30 * waitEvery).Nanoseconds())
		unix.Nanosleep(&ts, nil)
		close(slept)
	}()
	s := sampleWaits(<-tids)
	<-slept
	text, err := s.end()
	require.NoError(t, err)
	t.Log(text)
	assert.Contains(t, text, "nanosleep", "the sleeping thread's wait")
	assert.GreaterOrEqual(t, s.n, 10, "samples of a sleep of 30 periods")
}
