package tracers

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseGraphLine(t *testing.T) {
	tests := []struct {
		line string
		want Event
		ok   bool
	}{
		{" 1)    cat-309     | ! 50123.45 us |  } /* vfs_read */", Event{PID: 309, Comm: "cat",
			Latency: 50123450 * time.Nanosecond}, true},
		{" 0)  scenari-1042  | + 51.757 us   |  } /* vfs_read */", Event{PID: 1042, Comm: "scenari",
			Latency: 51757 * time.Nanosecond}, true},
		{" 0)    head-309    |   2.213 us    |  vfs_read();", Event{PID: 309, Comm: "head",
			Latency: 2213 * time.Nanosecond}, true},
		{" 1)  a-b c-77  | $ 1234567 us  |  } /* vfs_read */", Event{PID: 77, Comm: "a-b c",
			Latency: 1234567 * time.Microsecond}, true},
		{" 0)    head-309    |               |  vfs_read() {", Event{}, false},
		{" 1)    bash-281    | + 51.757 us   |  } /* handle_mm_fault */", Event{Function: "handle_mm_fault", PID: 281,
			Comm: "bash", Latency: 51757 * time.Nanosecond}, true},
		{" 0)    cat-309     |   0.931 us    |          anon_pipe_read();", Event{Function: "anon_pipe_read", PID: 309,
			Comm: "cat", Latency: 931 * time.Nanosecond}, true},
		{" 0)    cat-309     |   3.5 us      |  } /* __x64_sys_read.isra.0 */", Event{Function: "__x64_sys_read.isra.0",
			PID: 309, Comm: "cat", Latency: 3500 * time.Nanosecond}, true},
		{" 0)    <idle>-0    =>    head-309   ", Event{}, false},
		{" ------------------------------------------", Event{}, false},
		{"CPU:0 [LOST EVENTS]", Event{}, false},
		{"# tracer: function_graph", Event{}, false},
	}
	for _, tt := range tests {
		ev, ok := parseGraphLine(tt.line)
		require.Equal(t, tt.ok, ok, "%q", tt.line)
		if tt.ok {
			if tt.want.Function == "" {
				tt.want.Function = DefaultFunction
			}
			assert.Equal(t, tt.want, ev, "%q", tt.line)
		}
	}
}

func TestPipeThreadRunsOnOneThread(t *testing.T) {
	p := startPipeThread()
	var tids []int
	for range 3 {
		require.True(t, p.run(func() { tids = append(tids, unix.Gettid()) }))
	}
	assert.Equal(t, []int{p.tid, p.tid, p.tid}, tids)
	p.stop()
	assert.False(t, p.run(func() { t.Error("ran after stop") }))
}

func TestParseNewTask(t *testing.T) {
	parent, child, flags, ok := parseNewTask("              sh-283     [001] .....    12.345678: task_newtask: " +
		"pid=290 comm=sh clone_flags=1200000 oom_score_adj=0")
	require.True(t, ok)
	assert.Equal(t, []uint64{283, 290, 0x1200000}, []uint64{uint64(parent), uint64(child), flags})
	_, _, flags, ok = parseNewTask("  my-app 2-77 [000] d..1. 1.0: task_newtask: pid=78 comm=my-app 2 " +
		"clone_flags=3d0f00 oom_score_adj=0")
	require.True(t, ok)
	assert.NotZero(t, flags&cloneThread, "3d0f00 holds CLONE_THREAD")
	_, _, _, ok = parseNewTask(" 1)    cat-309     | ! 50123.45 us |  } /* vfs_read */")
	assert.False(t, ok)
}

func TestTaskNamesFollowForksAndReuse(t *testing.T) {
	n := taskNames{root: t.TempDir()} // no saved_cmdlines: comms stay as printed
	n.know(100, []string{"100", "101"})
	n.learn(101, 102, true)  // a thread of 100
	n.learn(101, 103, false) // a child process
	for pid, want := range map[uint32]uint32{100: 100, 101: 100, 102: 100, 103: 103} {
		ev := Event{PID: pid, Comm: "x"}
		n.fill(&ev)
		assert.Equal(t, want, ev.TGID, "pid %d", pid)
		assert.False(t, ev.Unknown.Has(FieldTGID))
	}
	assert.False(t, n.stale(Event{PID: 102, Comm: "x"}))
	assert.True(t, n.stale(Event{PID: 104, Comm: "x"}), "a pid never seen")
	n.comm = map[uint32]string{102: "worker"}
	assert.True(t, n.stale(Event{PID: 102, Comm: "other"}), "another comm: the pid was reused")
	assert.False(t, n.stale(Event{PID: 102, Comm: "worker"}))
	assert.False(t, n.stale(Event{PID: 102, Comm: "<...>"}))
}

func TestFilterLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "available_filter_functions")
	require.NoError(t, os.WriteFile(path, []byte("vfs_read\nsetup_cpu.isra.0\nsetup_cpu\nfoo_open [foo]\nsetup_cpu\n"), 0o644))
	lines, err := filterLines(path)
	require.NoError(t, err)
	assert.Equal(t, map[string][]int{"vfs_read": {1}, "setup_cpu.isra.0": {2}, "setup_cpu": {3, 5}, "foo_open": {4}}, lines)

	_, err = filterLines(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
