package peers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"tracebench/funcset"
)

// Wildcard is a tool timing every call of each function of a set at
// once, as an operator traces many functions: bpftrace's wildcard probes
// (this file) or bcc's funclatency with a pattern (bcc_funclatency.go).
type Wildcard struct {
	Name, Design string
	// Kinds are the attach kinds the tool attaches the functions with:
	// a set given to it is built for them.
	Kinds []funcset.Kind
	// Loses, if set, is how the tool loses calls it timed without saying
	// so; Result.Lost counts them exactly.
	Loses string
	// on is the tool's command tracing the named functions.
	on func(functions []string) Peer
}

// Wildcards are the variants, in the order the benchmarks run them:
// bpftrace with kprobes, which bpftrace 0.24+ collapses into one
// kprobe.session program where the kernel has it, the same without that
// (--no-feature kprobe_session), and fentry/fexit; bcc's funclatency.
func Wildcards() []Wildcard {
	return []Wildcard{
		{Name: "bpftrace-wildcard-kprobe", Kinds: []funcset.Kind{funcset.KprobeMulti},
			on:     bpftraceWildcard("kprobe:*", "kretprobe:*", true),
			Design: "bpftrace kprobe:* + kretprobe:*, as bpftrace attaches them by default (collapsed into kprobe.session where the kernel has it); entry time by thread and call depth"},
		{Name: "bpftrace-wildcard-kprobe-no-session", Kinds: []funcset.Kind{funcset.KprobeMulti},
			on:     bpftraceWildcard("kprobe:*", "kretprobe:*", true, "--no-feature", "kprobe_session"),
			Design: "bpftrace --no-feature kprobe_session kprobe:* + kretprobe:*: separate entry and return programs; entry time by thread and call depth"},
		{Name: "bpftrace-wildcard-fentry", Kinds: []funcset.Kind{funcset.Fentry, funcset.Fexit},
			on:     bpftraceWildcard("fentry:*", "fexit:*", false),
			Design: "bpftrace fentry:* + fexit:*; entry time by thread and function"},
		bccFunclatency,
	}
}

// On returns the peer tracing the named functions, vmlinux functions of
// the running kernel, with w.
func (w Wildcard) On(functions []string) Peer {
	p := w.on(functions)
	p.Name, p.Design = w.Name, w.Design
	return p
}

// traceableFile is the list of functions bpftrace is given, in the root's /tmp.
const traceableFile = "traceable-functions.txt"

// bpftraceWildcard is bpftrace with one pair of wildcard probes, entry
// and exit, given the set as the functions it may trace
// (--traceable-functions, available_filter_functions' format). The
// script keys the entry time by thread and function, or by thread and
// call depth (byDepth): a key of the thread alone loses every outer call
// of two nested traced functions (bcc #2548), and in the 7.2 guest
// bpftrace 0.27's func never matched between a kprobe:* run and the
// kretprobe:* run of the same call as a map key (session or not; both
// print the same name), so a (tid, func) key counted no call. Per
// function, hist() of µs and count().
func bpftraceWildcard(entry, exit string, byDepth bool, flags ...string) func([]string) Peer {
	script := fmt.Sprintf(`%s { @start[tid, func] = nsecs; }
%s /@start[tid, func]/ { @us[func] = hist((nsecs - @start[tid, func]) / 1000); @calls[func] = count(); delete(@start, (tid, func)); }
END { clear(@start); }`, entry, exit)
	if byDepth {
		script = fmt.Sprintf(`%s { @depth[tid]++; @start[tid, @depth[tid]] = nsecs; }
%s { $d = @depth[tid]; if (@start[tid, $d]) { @us[func] = hist((nsecs - @start[tid, $d]) / 1000); @calls[func] = count(); delete(@start, (tid, $d)); } @depth[tid] = $d - 1; }
END { clear(@start); clear(@depth); }`, entry, exit)
	}
	return func(functions []string) Peer {
		return Peer{
			Package: "bpftrace",
			command: func(pid int) []string {
				args := []string{"bpftrace", "-f", "json", "-B", "line", "-p", strconv.Itoa(pid),
					"--traceable-functions", "/tmp/" + traceableFile}
				return append(append(args, flags...), "-e", script)
			},
			files: map[string]string{traceableFile: strings.Join(functions, "\n") + "\n"},
			ready: bpftraceAttached,
			parse: parseBpftraceFunctions,
		}
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
