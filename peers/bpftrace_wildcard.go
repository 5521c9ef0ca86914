package peers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"tracebench/funcset"
)

// Wildcard is bpftrace timing every call of each function of a set with
// one pair of wildcard probes, as an operator traces many functions at
// once. bpftrace matches a wildcard against the functions it is told are
// traceable (--traceable-functions, available_filter_functions' format),
// here the set's. The script keys the entry time by thread and function
// (fentry) or by thread and call depth (kprobes): a key of the thread
// alone loses every outer call of two nested traced functions (bcc
// #2548); per function, hist() of µs and count().
type Wildcard struct {
	Name, Design string
	// Kinds are the attach kinds bpftrace attaches the functions with:
	// a set given to it is built for them.
	Kinds       []funcset.Kind
	entry, exit string
	flags       []string
	// byDepth keys the entry time by thread and the thread's depth of
	// traced calls: in the 7.2 guest bpftrace 0.27's func never matched
	// between a kprobe:* run and the kretprobe:* run of the same call as
	// a map key (session or not; both print the same name), so a
	// (tid, func) key counted no call.
	byDepth bool
}

// Wildcards are the variants, in the order the benchmarks run them:
// kprobes, which bpftrace 0.24+ collapses into one kprobe.session program
// where the kernel has it, the same without that (--no-feature
// kprobe_session), and fentry/fexit.
func Wildcards() []Wildcard {
	return []Wildcard{
		{Name: "bpftrace-wildcard-kprobe", entry: "kprobe:*", exit: "kretprobe:*", Kinds: []funcset.Kind{funcset.KprobeMulti},
			byDepth: true, Design: "bpftrace kprobe:* + kretprobe:*, as bpftrace attaches them by default (collapsed into kprobe.session where the kernel has it); entry time by thread and call depth"},
		{Name: "bpftrace-wildcard-kprobe-no-session", entry: "kprobe:*", exit: "kretprobe:*", flags: []string{"--no-feature", "kprobe_session"},
			Kinds: []funcset.Kind{funcset.KprobeMulti}, byDepth: true,
			Design: "bpftrace --no-feature kprobe_session kprobe:* + kretprobe:*: separate entry and return programs; entry time by thread and call depth"},
		{Name: "bpftrace-wildcard-fentry", entry: "fentry:*", exit: "fexit:*", Kinds: []funcset.Kind{funcset.Fentry, funcset.Fexit},
			Design: "bpftrace fentry:* + fexit:*; entry time by thread and function"},
	}
}

// traceableFile is the list of functions On gives bpftrace, in the root's /tmp.
const traceableFile = "traceable-functions.txt"

// On returns the peer tracing the named functions, vmlinux functions of
// the running kernel, with w.
func (w Wildcard) On(functions []string) Peer {
	script := fmt.Sprintf(`%s { @start[tid, func] = nsecs; }
%s /@start[tid, func]/ { @us[func] = hist((nsecs - @start[tid, func]) / 1000); @calls[func] = count(); delete(@start, (tid, func)); }
END { clear(@start); }`, w.entry, w.exit)
	if w.byDepth {
		script = fmt.Sprintf(`%s { @depth[tid]++; @start[tid, @depth[tid]] = nsecs; }
%s { $d = @depth[tid]; if (@start[tid, $d]) { @us[func] = hist((nsecs - @start[tid, $d]) / 1000); @calls[func] = count(); delete(@start, (tid, $d)); } @depth[tid] = $d - 1; }
END { clear(@start); clear(@depth); }`, w.entry, w.exit)
	}
	return Peer{
		Name:    w.Name,
		Package: "bpftrace",
		Design:  w.Design,
		command: func(pid int) []string {
			args := []string{"bpftrace", "-f", "json", "-B", "line", "-p", strconv.Itoa(pid),
				"--traceable-functions", "/tmp/" + traceableFile}
			return append(append(args, w.flags...), "-e", script)
		},
		files: map[string]string{traceableFile: strings.Join(functions, "\n") + "\n"},
		ready: bpftraceAttached,
		parse: parseBpftraceFunctions,
	}
}

// parseBpftraceFunctions reads the per-function counts (@calls) and the
// number of probes attached; Calls is their sum. A function never called
// is absent from @calls, and bpftrace prints no @calls at all when none
// was (a set off the read path): Functions is then empty.
func parseBpftraceFunctions(out []byte) (Result, error) {
	var res Result
	var ok bool
	if res.Probes, ok = bpftraceProbes(out); !ok {
		return res, fmt.Errorf("bpftrace never said it attached its probes (no attached_probes message)")
	}
	for _, m := range bpftraceMessages(out) {
		raw, isCalls := m.Data["@calls"]
		if m.Type != "map" || !isCalls {
			continue
		}
		if err := json.Unmarshal(raw, &res.Functions); err != nil {
			return res, fmt.Errorf("map @calls: %w", err)
		}
	}
	if res.Functions == nil {
		res.Functions = map[string]uint64{}
	}
	for _, n := range res.Functions {
		res.Calls += n
	}
	return res, nil
}
