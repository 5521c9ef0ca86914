package funcset

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is a way of attaching to a kernel function. What the kernel
// refuses to attach depends on it, so every exclusion names its kinds.
type Kind string

const (
	// Fentry is a BPF trampoline run at entry: fentry, fentry.multi.
	Fentry Kind = "fentry"
	// Fexit is a BPF trampoline run at return: fexit, fexit.multi,
	// fsession, fsession.multi. The kernel refuses it on functions that
	// never return.
	Fexit Kind = "fexit"
	// Kprobe is a kprobe or kretprobe per function (perf kprobe PMU or
	// tracefs kprobe_events), as bpftrace's kprobe: probes use.
	Kprobe Kind = "kprobe"
	// KprobeMulti is a kprobe_multi link (fprobe, Linux 5.18):
	// kprobe.multi, kretprobe.multi, kprobe.session.
	KprobeMulti Kind = "kprobe.multi"
	// Graph is ftrace's function_graph tracer with set_ftrace_filter.
	Graph Kind = "function_graph"
)

// Kinds lists every kind, in the order a set file names them.
var Kinds = []Kind{Fentry, Fexit, Kprobe, KprobeMulti, Graph}

// sectionKinds are the kinds of BPF programs by the prefix of their ELF
// section (libbpf's names).
var sectionKinds = map[string]Kind{
	"fentry": Fentry, "fentry.multi": Fentry,
	"fexit": Fexit, "fexit.multi": Fexit, "fsession": Fexit, "fsession.multi": Fexit,
	"kprobe": Kprobe, "kretprobe": Kprobe,
	"kprobe.multi": KprobeMulti, "kretprobe.multi": KprobeMulti, "kprobe.session": KprobeMulti,
}

// KindOfSection returns the kind of a BPF program whose ELF section starts
// with prefix (e.g. "fsession.multi"); false for a prefix of no kind.
func KindOfSection(prefix string) (Kind, bool) {
	k, ok := sectionKinds[prefix]
	return k, ok
}

// ParseKinds parses a blank-separated list of kinds, as a set file's
// kinds header holds; an error names an unknown kind (if it is a C
// identifier, see Read) or a repeated one, or says there is none.
func ParseKinds(s string) ([]Kind, error) {
	var kinds []Kind
	for i, f := range strings.Fields(s) {
		k := Kind(f)
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("kind %d (%s) is not an attach kind (known: %s)", i+1, shown(f), kindList(Kinds))
		}
		if slices.Contains(kinds, k) {
			return nil, fmt.Errorf("attach kind %s given twice", k)
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return nil, errors.New("no attach kind")
	}
	return kinds, nil
}

func kindList(kinds []Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, " ")
}

// trampoline reports whether k attaches through a BPF trampoline, which
// needs the function's BTF.
func (k Kind) trampoline() bool { return k == Fentry || k == Fexit }

// rule is one requirement of some kinds, checked on what the lists say
// of a function before anything is attached: the reason it fails, or "".
type rule struct {
	kinds []Kind
	check func(f *function) string
}

// function is what the kernel's lists say of one name.
type function struct {
	name        string
	ftrace      int      // entries in available_filter_functions (vmlinux)
	btf         *BTFFunc // nil: not in vmlinux BTF
	btfs        int      // BTF functions of this name
	blacklisted bool     // in the kprobes blacklist
	symbols     int      // kallsyms symbols of this name, if more than one
}

// rules are the requirements known before attaching. The kernel's own
// verdicts on the rest (deny lists, functions that never return,
// argument and return types) come from Inventory.Refused.
var rules = []rule{
	{Kinds, func(f *function) string {
		if f.ftrace == 0 {
			return "not in available_filter_functions: ftrace cannot patch it (notrace, or no call site to patch)"
		}
		return ""
	}},
	{Kinds, func(f *function) string {
		if f.ftrace > 1 {
			return fmt.Sprintf("%d functions share this name in available_filter_functions (static functions of "+
				"several objects): attaching by name picks one of them, a kprobe refuses it (EADDRNOTAVAIL)", f.ftrace)
		}
		return ""
	}},
	{[]Kind{Fentry, Fexit}, func(f *function) string {
		if f.btf == nil {
			return "not in vmlinux BTF: a BPF trampoline needs the function's BTF ID"
		}
		return ""
	}},
	{[]Kind{Fentry, Fexit}, func(f *function) string {
		if f.btfs > 1 {
			return fmt.Sprintf("%d vmlinux BTF functions share this name: a trampoline by name cannot tell them apart", f.btfs)
		}
		return ""
	}},
	{[]Kind{Fentry, Fexit}, func(f *function) string {
		if f.btf != nil && f.btf.Variadic {
			return "variadic: the verifier refuses trampolines on functions with variable arguments"
		}
		return ""
	}},
	{[]Kind{Kprobe}, func(f *function) string {
		if f.blacklisted {
			return "in the kprobes blacklist (debugfs kprobes/blacklist): register_kprobe refuses it (EINVAL)"
		}
		return ""
	}},
	{[]Kind{Kprobe}, func(f *function) string {
		if f.symbols > 1 {
			return fmt.Sprintf("%d symbols share this name in /proc/kallsyms (a function ftrace patches and "+
				"another symbol): trace_kprobe refuses a kprobe on a name that is not unique "+
				"(validate_probe_symbol, EADDRNOTAVAIL, \"The symbol is not unique\")", f.symbols)
		}
		return ""
	}},
}

// hazards are functions the kernel attaches with a kind and then hangs:
// no list of the kernel names them, so they are kept here with what was
// seen. rcu_read_unlock_special: every fexit.multi link holding it (5 of
// 5, alone too) and a fentry.multi link of all functions never returned,
// the 7.2.13 guest hung without a console message, while the same links
// without it attached (a trampoline's own rcu_read_unlock calls it);
// kprobe.multi takes it.
var hazards = []rule{
	{[]Kind{Fentry, Fexit}, named("rcu_read_unlock_special",
		"hangs the kernel: a trampoline's own rcu_read_unlock calls it; links holding it never returned (7.2.13)")},
}

// ownRuns are functions a kind's programs call on every run of their own.
// Traced, each such nested call is skipped by the kernel's recursion
// checks and counted missed, system-wide, for every run of the program:
// the sets meant to count what a workload calls (Readpath, Draw) leave
// them out; Select keeps them, for a row that traces the tracer's own path.
var ownRuns = []rule{
	{[]Kind{KprobeMulti}, named("__rcu_read_lock", rcuAroundProgram)},
	{[]Kind{KprobeMulti}, named("__rcu_read_unlock", rcuAroundProgram)},
	{[]Kind{Kprobe}, named("__rcu_read_lock", rcuAroundKprobe)},
	{[]Kind{Kprobe}, named("__rcu_read_unlock", rcuAroundKprobe)},
}

const rcuAroundProgram = "run by the tracer itself: kprobe_multi_link_prog_run holds rcu_read_lock around every " +
	"program run, so fprobe's recursion lock skips the nested call and counts it missed (16281 to 68776 misses " +
	"in one detach-in-flight row, 7.2.13)"

const rcuAroundKprobe = "run by the tracer itself: trace_call_bpf holds rcu_read_lock around every program run of " +
	"a perf-event kprobe, inside the kprobe's handler, so the nested kprobe finds a kprobe running and counts it " +
	"missed (90689 misses in one detach-in-flight row, 7.2.13)"

// ownRun returns why f is one of the ownRuns of a kind of kinds, "kind:
// reason" joined by "; ", or "".
func ownRun(kinds []Kind, f *function) string {
	var reasons []string
	for _, k := range kinds {
		for _, r := range ownRuns {
			if slices.Contains(r.kinds, k) {
				if why := r.check(f); why != "" {
					reasons = append(reasons, string(k)+": "+why)
				}
			}
		}
	}
	return strings.Join(reasons, "; ")
}

// named returns a check failing the function called name with why.
func named(name, why string) func(f *function) string {
	return func(f *function) string {
		if f.name == name {
			return why
		}
		return ""
	}
}

// refusal returns why kind cannot attach f by the lists, "" if it can.
func refusal(kind Kind, f *function) string {
	for _, list := range [][]rule{rules, hazards} {
		for _, r := range list {
			if slices.Contains(r.kinds, kind) {
				if why := r.check(f); why != "" {
					return why
				}
			}
		}
	}
	return ""
}
