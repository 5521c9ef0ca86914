package peers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"tracebench/funcset"
)

// BCCLevels is funclatency's -l: the entry times it keeps per thread, a
// stack of nested traced calls. Without -l it keys the entry time by
// thread alone, so a traced call inside another overwrites the outer
// call's (bcc's usage: only the innermost calls are recorded); its stack
// of 32 exceeds the BPF stack limit (clang in bcc 0.37 refuses it).
const BCCLevels = 16

// bccFunclatency is bcc's Python funclatency (bpfcc-tools) given the set
// as one regular expression of its names: bcc's attach_kprobe(event_re=)
// and attach_kretprobe attach a perf-event kprobe and kretprobe to each
// function it matches in available_filter_functions, one at a time, as
// bcc's tools trace a pattern. bcc compiles its program against the
// running kernel's headers at every start, and refuses more open probes
// than BCC_PROBE_LIMIT (default 1000, so 500 functions), which is left as
// operators find it.
var bccFunclatency = Wildcard{
	Name: "bcc-funclatency-pattern", Kinds: []funcset.Kind{funcset.Kprobe},
	Loses: "its histograms share one table of 64 (function, log2 slot) entries, bcc's BPF_HISTOGRAM default " +
		"(helpers.h, libbcc 0.37): a call in a pair beyond them is counted but in no histogram",
	Design: fmt.Sprintf("bcc funclatency -F -l %d with a regular expression of the set: a kprobe + kretprobe perf-event link "+
		"per function (attach_kprobe(event_re=)); entry times on a per-thread stack of %d in a hash map", BCCLevels, BCCLevels),
	on: func(functions []string) Peer {
		quoted := make([]string, len(functions))
		for i, f := range functions {
			quoted[i] = regexp.QuoteMeta(f)
		}
		pattern := "^(" + strings.Join(quoted, "|") + ")$"
		return Peer{
			Package: "bpfcc-tools",
			// Python buffers a file's output: unbuffered, its start line is
			// seen when it is printed.
			command: func(pid int) []string {
				return []string{"env", "PYTHONUNBUFFERED=1", "funclatency-bpfcc", "-u", "-F", "-l", strconv.Itoa(BCCLevels),
					"-p", strconv.Itoa(pid), "-r", pattern}
			},
			dlopens: []string{"libbcc.so.0"}, // Python's ctypes loads it
			probe:   bccHeaders,
			ready:   bccAttached,
			parse:   parseBccFunctions,
		}
	},
}

// bccHeaders fails with ErrUnavailable when the root lacks bcc or the
// headers of the running kernel bcc compiles against
// (/lib/modules/<release>/build, which vm/peer-root.sh installs for the
// newest kernel of its suite).
func bccHeaders(r *Root) error {
	if _, ok := r.Versions["bpfcc-tools"]; !ok {
		return fmt.Errorf("%w: no bpfcc-tools in the peer root (built before it held bcc: rebuild it with vm/peer-root.sh)", ErrUnavailable)
	}
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return err
	}
	build := filepath.Join("/lib/modules", strings.TrimSpace(string(release)), "build")
	if _, err := os.Stat(filepath.Join(r.Dir, build)); err != nil {
		return fmt.Errorf("%w: bcc compiles against the running kernel's headers, and the peer root has no %s "+
			"(linux-headers-%s)", ErrUnavailable, build, strings.TrimSpace(string(release)))
	}
	return nil
}

// bccTracing is funclatency's line once its probes are attached.
var bccTracing = regexp.MustCompile(`(?m)^Tracing (\d+) functions for "`)

// bccAttached: funclatency says how many functions it attached.
func bccAttached(out []byte, _ int) (bool, error) { return bccTracing.Match(out), nil }

// bccEnd is the line funclatency prints after its histograms.
const bccEnd = "Detaching..."

// bccSection starts a function's histogram under -F.
const bccSection = "Function = "

// bccCount is funclatency's total of timed calls, printed after the
// histograms when it timed any: "avg = 3 usecs, total: 9 usecs, count: 3".
var bccCount = regexp.MustCompile(`(?m)^avg = .*, count: (\d+)$`)

// parseBccFunctions reads the histogram of each function (-F), a
// function never called having none; Probes are the kprobe and kretprobe
// of each function funclatency said it attached. funclatency's count is
// of every call timed; a call whose histogram update found the table full
// is in no histogram: Lost is the difference. The table is bcc's
// BPF_HISTOGRAM default of 64 entries, one per (function, log2 slot)
// (helpers.h in libbcc 0.37), so a set whose calls span more pairs loses
// calls, and funclatency says nothing of it.
func parseBccFunctions(out []byte) (Result, error) {
	res := Result{Functions: map[string]uint64{}}
	m := bccTracing.FindSubmatch(out)
	if m == nil {
		return res, errors.New("funclatency never said it attached (no \"Tracing N functions\" line)")
	}
	n, _ := strconv.Atoi(string(m[1]))
	res.Probes = 2 * n
	function := ""
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(nil, len(out)+1) // the start line holds the whole pattern
	for scanner.Scan() {
		line := scanner.Text()
		if name, ok := strings.CutPrefix(line, bccSection); ok {
			function = strings.TrimSpace(name)
			res.Functions[function] += 0
			continue
		}
		row := funclatencyRow.FindStringSubmatch(line)
		if row == nil {
			continue
		}
		if function == "" {
			return res, fmt.Errorf("a histogram row before any %q line", bccSection)
		}
		count, _ := strconv.ParseUint(row[3], 10, 64)
		res.Functions[function] += count
		res.Calls += count
	}
	if !bytes.Contains(out, []byte(bccEnd)) {
		return res, fmt.Errorf("output cut short: no %q line after the histograms", bccEnd)
	}
	var count uint64
	if m := bccCount.FindSubmatch(out); m != nil {
		count, _ = strconv.ParseUint(string(m[1]), 10, 64)
	}
	if count < res.Calls {
		return res, fmt.Errorf("the histograms sum to %d calls, more than funclatency's count of %d", res.Calls, count)
	}
	res.Lost = count - res.Calls
	return res, nil
}
