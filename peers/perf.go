package peers

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// perf ftrace latency -T FUNC -p PID: without -b, the kernel's
// function_graph tracer on the top-level tracefs instance
// (set_graph_function, set_ftrace_pid), whose trace_pipe text perf parses
// into a log2 histogram in user space; with -b, BPF programs of perf's own
// (needs perf built with BPF skeletons).
var (
	perfGraph = perfLatency("perf-ftrace-graph",
		"perf ftrace latency: function_graph tracer (tracefs), durations parsed from trace_pipe in user space")
	perfBPF = perfLatency("perf-ftrace-bpf",
		"perf ftrace latency -b: perf's BPF programs, log2 histogram in BPF", "-b")
)

// tracefs is where the guest's tracefs is mounted; the peer's own mount
// inside the root is the same instance.
const tracefs = "/sys/kernel/tracing/"

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
		p.after = graphReset
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

// perfPipeFailure is what perf 7.2.13 printed with -p PID in the 7.2
// guest, then it never switched tracing on (10 min): -p is unusable there.
const perfPipeFailure = "unable to write to pipe: Bad file descriptor"

// graphReady: perf has set function_graph on vfs_read for pid and
// switched tracing on, so calls are being recorded.
func graphReady(out []byte, pid int) (bool, error) {
	if bytes.Contains(out, []byte(perfPipeFailure)) {
		return false, fmt.Errorf("%w: perf ftrace latency -p %d printed %q and did not start tracing (seen with perf 7.2.13)",
			ErrUnavailable, pid, perfPipeFailure)
	}
	want := map[string]func(string) bool{
		"current_tracer":     func(s string) bool { return s == "function_graph" },
		"tracing_on":         func(s string) bool { return s == "1" },
		"set_graph_function": func(s string) bool { return s == "vfs_read" },
		"set_ftrace_pid":     func(s string) bool { return containsField(s, strconv.Itoa(pid)) },
	}
	for file, ok := range want {
		raw, err := os.ReadFile(tracefs + file)
		if err != nil {
			return false, err
		}
		if !ok(strings.TrimSpace(string(raw))) {
			return false, nil
		}
	}
	return true, nil
}

// graphReset checks that perf put the top-level tracer back on exit.
func graphReset() error {
	raw, err := os.ReadFile(tracefs + "current_tracer")
	if err != nil {
		return err
	}
	if t := strings.TrimSpace(string(raw)); t != "nop" {
		return fmt.Errorf("perf left %scurrent_tracer = %s", tracefs, t)
	}
	return nil
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

// parsePerf reads perf's histogram; its buckets are labelled from 0 - 1
// us, then 1 - 2, 2 - 4, ... with ms standing for 1024 us (perf shifts
// by 10 bits). Calls is the histogram's sum.
func parsePerf(out []byte) (Result, error) {
	var res Result
	for _, line := range bytes.Split(out, []byte("\n")) {
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
	return res, nil
}
