package funcset_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/funcset"
	"tracebench/internal/testenv"
	"tracebench/internal/tracefs"
	"tracebench/tracers"
)

var outDir = flag.String("funcset.out", "", "directory to write the sets built on the running kernel to (default: a temporary one)")

// buildingSets: the sets read tracefs and ask the kernel with BPF programs.
var buildingSets = testenv.Privilege{Doing: "building function sets (tracefs, BPF tracing programs)",
	Caps: "CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN"}

// requireTracing skips unless this is root with tracefs, saying which.
func requireTracing(t *testing.T) {
	t.Helper()
	buildingSets.Require(t)
	if _, err := tracefs.Root(); errors.Is(err, os.ErrNotExist) {
		t.Skipf("building function sets needs tracefs: %v", err)
	}
}

// Builds every set on the running kernel, writes each and reads it back,
// and holds the drawn sets to what they promise: the kernel attaches each
// whole with every kind that has a bulk probe.
func TestBuildSetsOnRunningKernel(t *testing.T) {
	requireTracing(t)
	step := stepTimer(t)
	inv, err := funcset.ReadKernel()
	require.NoError(t, err)
	step("read the kernel's lists: %d BTF functions, %d available_filter_functions lines", len(inv.BTF), len(inv.Ftrace))

	inv.Quiet, err = funcset.MeasureQuiet(time.Second, 4096)
	require.NoError(t, err)
	step("quiet system: %d functions called in 1s", len(inv.Quiet.Calls))

	rp, err := funcset.FindReadpath(3)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrInvalid) {
		t.Skipf("readpath needs function_graph in a tracefs instance (CONFIG_FUNCTION_GRAPH_TRACER): %v", err)
	}
	require.NoError(t, err)
	step("readpath: %d functions seen", len(rp.Functions))

	for _, kind := range funcset.Kinds {
		refused, err := tracers.RefusedFunctions(kind, inv.Attachable(kind))
		if errors.Is(err, tracers.ErrUnsupported) {
			t.Skipf("probing %s: %v", kind, err)
		}
		require.NoError(t, err, kind)
		inv.Refused[kind] = refused
		step("%s: the kernel refuses %d of %d functions", kind, len(refused), len(inv.Attachable(kind)))
	}

	readpath, err := inv.Readpath(rp, funcset.Kinds)
	require.NoError(t, err)
	for _, fn := range []string{"vfs_read", "read_zero", "anon_pipe_read"} {
		assert.True(t, readpath.Has(fn), "a read(2) of /dev/zero and a pipe passes %s", fn)
	}
	sets := []*funcset.Set{readpath}
	for _, n := range append(funcset.Sizes, funcset.All) {
		s, err := inv.Draw(n, funcset.Kinds, readpath)
		require.NoError(t, err, n)
		if n != funcset.All {
			require.Len(t, s.Members, n)
		}
		sets = append(sets, s)
	}
	step("drew %d sets, all of %d functions", len(sets), len(sets[len(sets)-1].Members))

	dir := *outDir
	if dir == "" {
		dir = t.TempDir()
	}
	for _, s := range sets {
		for _, e := range append(s.Members, s.Excluded...) {
			require.NotEmpty(t, e.Reason, "%s: %s", s.Name, e.Name)
		}
		path := filepath.Join(dir, s.Name+".txt")
		require.NoError(t, funcset.WriteFile(path, s))
		again, err := funcset.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, s, again)
	}
	step("wrote and read back each set in %s", dir)

	for _, s := range []*funcset.Set{readpath, sets[4], sets[5]} { // readpath, n1000, n10000
		for _, kind := range []funcset.Kind{funcset.Fentry, funcset.Fexit, funcset.KprobeMulti} {
			refused, err := tracers.RefusedFunctions(kind, s.Functions())
			require.NoError(t, err)
			assert.Empty(t, refused, "%s: the kernel refuses some of %s", kind, s.Name)
		}
		step("the kernel attaches %s whole with fentry, fexit and kprobe.multi", s.Name)
	}
	reasons := strings.Join(excludedReasons(sets[len(sets)-1]), "\n")
	t.Logf("why candidates are left out of all:\n%s", reasons)
}

var digits = regexp.MustCompile(`[0-9]+`)

// excludedReasons counts the reasons of s's exclusions, the function
// names and numbers in them taken out.
func excludedReasons(s *funcset.Set) []string {
	counts := map[string]int{}
	var order []string
	for _, e := range s.Excluded {
		why := digits.ReplaceAllString(strings.ReplaceAll(e.Reason, e.Name, "<f>"), "N")
		if counts[why] == 0 {
			order = append(order, why)
		}
		counts[why]++
	}
	out := make([]string, len(order))
	for i, why := range order {
		out[i] = fmt.Sprintf("%6d  %s", counts[why], why)
	}
	return out
}

// stepTimer logs each step with the time it took, in the running
// kernel's clock (guest instructions under icount).
func stepTimer(t *testing.T) func(format string, args ...any) {
	last := time.Now()
	return func(format string, args ...any) {
		t.Helper()
		now := time.Now()
		t.Logf("%8.2fs  "+format, append([]any{now.Sub(last).Seconds()}, args...)...)
		last = now
	}
}

// TraceThreads sees what the threads it traces call and nothing of
// another thread: a read(2) of /dev/zero on one, of a pipe on another.
func TestTraceThreadsOnRunningKernel(t *testing.T) {
	requireTracing(t)
	traced, other := lockedThread(t), lockedThread(t)
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	_, err := unix.Write(p[1], []byte{1})
	require.NoError(t, err)
	zero, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer zero.Close()
	called, err := funcset.TraceThreads([]int{traced.tid}, 1024, func() error {
		return errors.Join(traced.do(func() error { return readOne(int(zero.Fd())) }),
			other.do(func() error { return readOne(p[0]) }))
	})
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrInvalid) {
		t.Skipf("tracing threads needs function_graph in a tracefs instance (CONFIG_FUNCTION_GRAPH_TRACER): %v", err)
	}
	require.NoError(t, err)
	calls := map[string]int{}
	for _, c := range called {
		calls[c.Name] = c.Calls
	}
	assert.Equal(t, 1, calls["read_zero"], "the traced thread's read(2) of /dev/zero: %v", called)
	assert.Positive(t, calls["vfs_read"], "%v", called)
	assert.NotContains(t, calls, "anon_pipe_read", "the other thread's read(2) of a pipe")
}

// One FuncGraph serves traces of different threads, each seeing its own
// threads alone: a read(2) of /dev/zero on one, then of a pipe on another,
// then a readpath on the test's thread.
func TestFuncGraphFollowsEachTrace(t *testing.T) {
	requireTracing(t)
	first, second := lockedThread(t), lockedThread(t)
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	_, err := unix.Write(p[1], []byte{1, 2}) // a byte for each trace
	require.NoError(t, err)
	zero, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer zero.Close()
	readZero := func() error { return readOne(int(zero.Fd())) }
	readPipe := func() error { return readOne(p[0]) }
	var calls []map[string]int
	var rp *funcset.Readpath
	err = funcset.WithFuncGraph(1024, []int{first.tid}, func(g *funcset.FuncGraph) error {
		for _, th := range []*thread{first, second} {
			called, err := g.Threads([]int{th.tid}, func() error {
				return errors.Join(first.do(readZero), second.do(readPipe))
			})
			if err != nil {
				return err
			}
			calls = append(calls, map[string]int{})
			for _, c := range called {
				calls[len(calls)-1][c.Name] = c.Calls
			}
		}
		rp, err = g.Readpath(1)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, 1, calls[0]["read_zero"], "the first thread's read(2) of /dev/zero")
	assert.NotContains(t, calls[0], "anon_pipe_read", "the second thread's read(2) of a pipe")
	assert.Positive(t, calls[1]["vfs_read"], "the second thread's read(2): %v", calls[1])
	assert.NotContains(t, calls[1], "read_zero", "the first thread's read(2) of /dev/zero")
	assert.NotEmpty(t, rp.CalledOnlyBy("vfs_read", funcset.SourcePipe), "the readpath after both: the pipe's f_op->read")
}

func readOne(fd int) error {
	n, err := unix.Read(fd, make([]byte, 1))
	if err == nil && n != 1 {
		err = fmt.Errorf("read %d bytes, want 1", n)
	}
	return err
}

// thread runs functions on one locked OS thread.
type thread struct {
	tid  int
	work chan func()
}

// lockedThread starts a thread for t's duration.
func lockedThread(t *testing.T) *thread {
	th := &thread{work: make(chan func())}
	tids := make(chan int)
	go func() {
		runtime.LockOSThread()
		tids <- unix.Gettid()
		for f := range th.work {
			f()
		}
	}()
	th.tid = <-tids
	t.Cleanup(func() { close(th.work) })
	return th
}

// do runs f on the thread and returns its error.
func (th *thread) do(f func() error) error {
	done := make(chan error)
	th.work <- func() { done <- f() }
	return <-done
}
