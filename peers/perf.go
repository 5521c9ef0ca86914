package peers

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"tracebench/internal/tracefs"
)

// perf ftrace latency -T FUNC -p PID: without -b, the kernel's
// function_graph tracer in a tracefs instance of perf's own
// (instances/perf-ftrace-XXXXXX in perf 7.2; set_ftrace_filter,
// set_ftrace_pid with the threads the process has when perf starts),
// whose trace_pipe text perf parses into a log2 histogram in user space;
// with -b, BPF programs of perf's own (needs perf built with BPF
// skeletons).
var (
	perfGraph = perfLatency("perf-ftrace-graph",
		"perf ftrace latency: function_graph tracer (tracefs instance), durations parsed from trace_pipe in user space")
	perfBPF = perfLatency("perf-ftrace-bpf",
		"perf ftrace latency -b: perf's BPF programs, log2 histogram in BPF", "-b")
)

// perfInstancePrefix names the tracefs instances perf ftrace creates.
const perfInstancePrefix = "perf-ftrace-"

func perfLatency(name, design string, flags ...string) Peer {
	p := Peer{
		Name:    name,
		Package: "linux-perf",
		Design:  design,
		command: func(pid int) []string {
			return append(append([]string{"perf", "ftrace", "latency"}, flags...), "-T", "vfs_read", "-p", strconv.Itoa(pid))
		},
		parse: parsePerf,
	}
	if len(flags) == 0 {
		p.ready = graphReady
		p.after = graphGone
		p.observe = func(int) (Kernel, error) { return observeGraph() }
	} else {
		p.probe = perfSkeletons
		// perf -b prints nothing once attached; a perf with BPF
		// skeletons was not at hand to learn a condition from.
		p.ready = func([]byte, int) (bool, error) {
			return false, fmt.Errorf("no readiness condition known for perf ftrace latency -b")
		}
	}
	return p
}

// perfInstances returns perf's tracefs instances.
func perfInstances() ([]tracefs.Instance, error) {
	root, err := tracefs.Root()
	if err != nil {
		return nil, err
	}
	dirs, err := filepath.Glob(filepath.Join(root, "instances", perfInstancePrefix+"*"))
	var ins []tracefs.Instance
	for _, dir := range dirs {
		ins = append(ins, tracefs.Instance{Root: root, Dir: dir})
	}
	return ins, err
}

// graphReady: perf's instance has function_graph on vfs_read for pid and
// tracing on, so calls are being recorded. perf 7.2 also prints "unable
// to write to pipe: Bad file descriptor" at this point when its stdin is
// not writable: it writes its "start the workload" byte to descriptor 0
// although -p started no workload; tracing is not affected.
func graphReady(_ []byte, pid int) (bool, error) {
	ins, err := perfInstances()
	if err != nil || len(ins) == 0 {
		return false, err
	}
	want := map[string]func(string) bool{
		"current_tracer":    func(s string) bool { return s == "function_graph" },
		"tracing_on":        func(s string) bool { return s == "1" },
		"set_ftrace_filter": func(s string) bool { return containsField(s, "vfs_read") },
		"set_ftrace_pid":    func(s string) bool { return containsField(s, strconv.Itoa(pid)) },
	}
	for _, in := range ins {
		ok := true
		for file, match := range want {
			v, err := in.Read(file)
			if errors.Is(err, os.ErrNotExist) {
				ok = false // perf is still creating or already removing it
				break
			}
			if err != nil {
				return false, err
			}
			ok = ok && match(v)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// graphGone checks that perf removed its instance on exit.
func graphGone() error {
	ins, err := perfInstances()
	if err != nil {
		return err
	}
	if len(ins) > 0 {
		return fmt.Errorf("perf left tracefs instance %s", ins[0].Dir)
	}
	return nil
}

// observeGraph reads perf's instance: its tracer, filters and what its
// ring buffer lost.
func observeGraph() (Kernel, error) {
	var k Kernel
	ins, err := perfInstances()
	if err != nil {
		return k, err
	}
	if len(ins) != 1 {
		return k, fmt.Errorf("%d perf ftrace instances, want 1", len(ins))
	}
	in := ins[0]
	var settings []string
	for _, file := range []string{"current_tracer", "set_ftrace_filter", "options/function-fork", "options/sleep-time",
		"trace_clock"} {
		v, err := in.Read(file)
		if err != nil {
			return k, err
		}
		settings = append(settings, fmt.Sprintf("%s %s", file, strings.Join(strings.Fields(v), " ")))
	}
	pids, err := in.Read("set_ftrace_pid")
	if err != nil {
		return k, err
	}
	settings = append(settings, fmt.Sprintf("set_ftrace_pid %d threads", len(strings.Fields(pids))))
	k.Attached = []string{fmt.Sprintf("tracefs instance %s: %s", filepath.Base(in.Dir), strings.Join(settings, ", "))}
	counts, err := in.BufferCounts()
	if err != nil {
		return k, err
	}
	k.Dropped = counts["overrun"] + counts["commit overrun"] + counts["dropped events"]
	return k, nil
}

func containsField(s, f string) bool {
	for _, x := range strings.Fields(s) {
		if x == f {
			return true
		}
	}
	return false
}

// perfSkeletons fails with ErrUnavailable when the root's perf was built
// without BPF skeletons, which -b needs.
func perfSkeletons(r *Root) error {
	out, err := exec.Command("chroot", r.Dir, "perf", "version", "--build-options").CombinedOutput()
	if err != nil {
		return fmt.Errorf("perf version --build-options in %s: %v: %s", r.Dir, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "bpf_skeletons:") && strings.Contains(line, "OFF") {
			return fmt.Errorf("%w: perf %s is built without BPF skeletons (%q in `perf version --build-options`), so "+
				"`perf ftrace latency` has no -b",
				ErrUnavailable, r.Versions["linux-perf"], strings.TrimSpace(line))
		}
	}
	return nil
}

// perfRow is one histogram line: "     2 -   4 us |   531 | ###  |"; the
// last bucket's upper end is "...".
var perfRow = regexp.MustCompile(`^\s*(\d+) - +(\d+|\.\.\.)\s+(ns|us|ms|s)\s*\|\s*(\d+) \|`)

var perfUnitUS = map[string]uint64{"us": 1, "ms": 1024, "s": 1024 * 1024}

// perfStat is a statistics line, "  max time:   19314", in the unit of
// the "# statistics  (in usec)" header.
var perfStat = regexp.MustCompile(`^\s*(max time|count):\s*(\d+)\s*$`)

// parsePerf reads perf's histogram; its buckets are labelled from 0 - 1
// us, then 1 - 2, 2 - 4, ... with ms standing for 1024 us (perf shifts
// by 10 bits). Calls is the histogram's sum, which must be the
// statistics' count (an output without it is cut short). The statistics'
// max time bounds the open-ended last bucket.
func parsePerf(out []byte) (Result, error) {
	var res Result
	maxUS := uint64(math.MaxUint64)
	usec := false
	stats := map[string]uint64{}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("# statistics")) {
			usec = bytes.Contains(line, []byte("(in usec)"))
		}
		if m := perfStat.FindSubmatch(line); m != nil {
			stats[string(m[1])], _ = strconv.ParseUint(string(m[2]), 10, 64)
		}
		m := perfRow.FindStringSubmatch(string(line))
		if m == nil {
			continue
		}
		unit, ok := perfUnitUS[m[3]]
		if !ok {
			return res, fmt.Errorf("histogram in %s, want µs: %q", m[3], line)
		}
		low, _ := strconv.ParseUint(m[1], 10, 64)
		high := uint64(math.MaxUint64)
		if m[2] != "..." {
			h, _ := strconv.ParseUint(m[2], 10, 64)
			high = h * unit
		}
		n, _ := strconv.ParseUint(m[4], 10, 64)
		res.Buckets = append(res.Buckets, Bucket{LowUS: low * unit, HighUS: high, Count: n})
		res.Calls += n
	}
	if res.Buckets == nil {
		return res, fmt.Errorf("no histogram (\"N - M us | count |\" lines) in perf's output")
	}
	count, ok := stats["count"]
	if !ok {
		return res, fmt.Errorf("output cut short: no statistics count after the histogram")
	}
	if count != res.Calls {
		return res, fmt.Errorf("the histogram holds %d calls, the statistics count %d", res.Calls, count)
	}
	if m, ok := stats["max time"]; ok && usec {
		maxUS = m
	}
	if last := &res.Buckets[len(res.Buckets)-1]; last.HighUS == math.MaxUint64 && maxUS != math.MaxUint64 {
		if maxUS < last.LowUS && last.Count > 0 {
			return res, fmt.Errorf("max time %d us below the last bucket's %d us, which holds %d calls", maxUS, last.LowUS, last.Count)
		}
		last.HighUS = max(last.LowUS, maxUS) + 1
	}
	return res, nil
}
