package tracers

import (
	"strings"
	"sync"
	"time"

	"tracebench/internal/kernelbtf"
)

// Capabilities declare what a mechanism can do. Every consumer (CLI,
// benchmarks, scenarios, matrix) reads them instead of probing types.
type Capabilities struct {
	// Role is what tracebench offers the mechanism for.
	Role Role
	// BPF: the mechanism is a BPF object counting through bpf/vfsread.h,
	// with a BPF ring buffer; Aggregates and ProgramStats follow from it.
	BPF bool
	// ThresholdResolution is the step of the thresholds it can apply:
	// Config.Threshold must be a multiple of it (BPF objects compare
	// bpf_ktime_get_ns differences, 1 ns; function_graph's tracing_thresh
	// is in µs).
	ThresholdResolution time.Duration
	// State is where a call's entry is kept until its return.
	State State
	// Loses lists how it can lose calls; Loss.ShowsIn says in which
	// counters each loss shows.
	Loses Losses
	// Blind is what it does not observe (see Blind.Under).
	Blind Blind
	// KillLeaves is what a SIGKILL of the tracing process leaves in the
	// kernel (nothing holds it by file descriptor).
	KillLeaves Residues
	// Functions is what it does with kernel functions: vfs_read alone or
	// many, attached with which kinds.
	Functions FunctionSupport
}

// Role is what tracebench offers a mechanism for.
type Role uint8

const (
	// RoleTool: a design the slow-read tool is specified with (fsession
	// and the two classic designs it replaces). It counts in BPF and
	// observes every field (kprobe links' missed count aside, before 6.7).
	// `tracebench trace --mechanism auto` starts the first of them, in
	// registry order, that the kernel runs; the peers' benchmark measures
	// each beside the tools operators run.
	RoleTool Role = iota + 1
	// RoleSubject: checked and benchmarked like every mechanism, chosen
	// by name only.
	RoleSubject
)

// Aggregates reports whether the mechanism counts every call in the kernel
// into the aggregates (histogram, per-TGID table): its Tracer implements
// Aggregator. Every BPF object does (record_return in bpf/vfsread.h).
func (c Capabilities) Aggregates() bool { return c.BPF }

// ProgramStats reports whether Mechanism.ProgramStats reads the run-time
// statistics of the mechanism's programs: those of a BPF object.
func (c Capabilities) ProgramStats() bool { return c.BPF }

// EventsInReturnOrder reports whether a thread's events arrive in the
// order its calls returned: a BPF object submits each to one ring buffer
// at the return. ftrace-graph's come from per-CPU buffers that trace_pipe
// merges, which delivered a thread's records out of that order (7.2 and
// 6.12 guests: a pipe read's vfs_read event after the next read's).
func (c Capabilities) EventsInReturnOrder() bool { return c.BPF }

// State is where a mechanism keeps a call's entry (time, arguments).
type State uint8

const (
	// StateHashMap: a BPF hash map keyed by pid_tgid; an entry whose
	// return is missed stays until the thread's next call.
	StateHashMap State = iota + 1
	// StateTaskStorage: BPF task local storage, freed with the thread.
	StateTaskStorage
	// StateSessionCookie: the call's session cookie, nothing per thread.
	StateSessionCookie
	// StateCookieAndHashMap: time in the session cookie, the count
	// argument in a hash map keyed by pid_tgid.
	StateCookieAndHashMap
	// StateKernel: kept by the kernel's tracer (function_graph), not by us.
	StateKernel
	// StateCallHashMap: a BPF hash map keyed by pid_tgid, the call's
	// frame and its function (bpf/calls.h), so that a traced call nested in another, or
	// re-entering it, keeps its own entry; an entry whose return is
	// missed stays until the thread's next call at that frame.
	StateCallHashMap
	// StateCookieAndCallHashMap: time in the session cookie, vfs_read's
	// count argument in a hash map keyed by pid_tgid and the cookie's
	// address.
	StateCookieAndCallHashMap
)

// KeysByFrame reports whether an entry is keyed by the call's frame as
// well as pid_tgid, so that a thread's next call overwrites a stale entry
// only at the same frame address, which kernels randomizing the kernel
// stack offset per system call (CONFIG_RANDOMIZE_KSTACK_OFFSET) rarely
// give: each missed return can leave an entry of its own.
func (s State) KeysByFrame() bool {
	return s == StateCallHashMap || s == StateCookieAndCallHashMap
}

// KeepsPerThread reports whether Stats.Pending counts per-thread records
// that a missed return leaves until the thread's next call (at the same
// frame, for the call-keyed maps).
func (s State) KeepsPerThread() bool {
	switch s {
	case StateHashMap, StateCookieAndHashMap, StateCallHashMap, StateCookieAndCallHashMap:
		return true
	}
	return false
}

// Loss is one way the kernel can skip a mechanism's programs.
type Loss uint8

// Losses is a set of Loss.
type Losses = Loss

const (
	// LossRecursion: the kernel skips a program run nested in another
	// BPF program run on its CPU. Trampoline programs run preemptible, so
	// the per-CPU recursion guard held by a preempted thread skips other
	// threads' runs of the program on that CPU; kprobe_multi programs are
	// skipped by fprobe's recursion lock and bpf_prog_active whenever a
	// traced function runs inside a BPF program (e.g. __rcu_read_lock,
	// which kprobe_multi_link_prog_run calls around every run).
	LossRecursion Loss = 1 << iota
	// LossMaxActive: a kretprobe follows at most maxactive calls at once;
	// the return of a call entering beyond it is missed.
	LossMaxActive
	// LossRethookPool: an fprobe with a rethook pool (2 x CPUs entries,
	// e.g. 6.12) misses a call entering with the pool empty, whole.
	LossRethookPool
	// LossMapFull: the per-thread hash map (Config.ThreadMapEntries) has
	// no room for a call's entry; the call is counted in Stats.Lost.
	LossMapFull
	// LossReturnPool: a kretprobe.multi link's fprobe with a rethook pool
	// (2 x CPUs x functions entries, e.g. 6.12) misses the return of a
	// call entering with the pool empty, while the separate kprobe.multi
	// link keeps its entry.
	LossReturnPool
)

// Has reports whether every loss of l is in the set.
func (s Loss) Has(l Loss) bool { return s&l == l }

// OnRunningKernel drops the losses the running kernel cannot cause.
func (s Loss) OnRunningKernel() Losses {
	if !rethookPool() {
		s &^= LossRethookPool | LossReturnPool
	}
	return s
}

var lossNames = []string{"recursion", "maxactive", "rethook-pool", "map-full", "return-pool"}

// ShowsIn returns the Stats counters in which a loss of l shows for a
// mechanism keeping state s. Missed is system-wide; Lost and Pending are
// the traced process's. A missed return leaves its entry (Pending) until
// the thread's next call overwrites it (Lost); task storage forgets it when
// the thread exits, a hash map never (a stale entry).
func (l Loss) ShowsIn(s State) Fields {
	var f Fields
	if l&(LossRecursion|LossMaxActive|LossRethookPool|LossReturnPool) != 0 {
		f |= FieldMissed
	}
	if l&(LossRecursion|LossMaxActive|LossReturnPool) != 0 && (s.KeepsPerThread() || s == StateTaskStorage) {
		f |= FieldPending | FieldLost
	}
	if l.Has(LossMapFull) {
		f |= FieldLost
	}
	return f
}

// ForgetsAtExit reports whether a call pending when its thread exits is
// counted nowhere afterwards (task storage is freed with the thread); a
// hash map keeps it as a stale entry, in Pending, until the map is closed.
func (s State) ForgetsAtExit() bool { return s == StateTaskStorage }

func (s Loss) String() string { return setString(uint64(s), lossNames) }

// rethookPool reports whether the running kernel's fprobe returns through
// a rethook pool: struct fprobe has a rethook member (6.12; 6.18 and 7.x
// use the function graph's shadow stack). False without kernel BTF.
var rethookPool = sync.OnceValue(func() bool {
	spec, err := kernelbtf.Spec()
	return err == nil && hasMember(spec, "fprobe", "rethook")
})

// Residue is a kind of kernel object a tracer can leave behind.
type Residue uint8

// Residues is a set of Residue.
type Residues = Residue

const (
	ResidueBPFProgram Residue = 1 << iota
	ResidueBPFLink
	ResidueKprobeEvent     // a tracefs kprobe_events entry (maxactive kretprobe)
	ResidueTracefsInstance // a tracefs instance of ftrace-graph
)

var residueNames = []string{"BPF program", "BPF link", "tracefs kprobe event", "tracefs instance"}

func (s Residue) String() string { return setString(uint64(s), residueNames) }

// Has reports whether every residue of r is in the set.
func (s Residue) Has(r Residue) bool { return s&r == r }

// Blind is what a mechanism does not observe; unknown values read 0.
type Blind struct {
	Stats       Fields // never in Stats
	StatsAtZero Fields // also not in Stats at threshold 0
	Event       Fields // in no Event
	EventMay    Fields // in some Events (e.g. the TGID of an exited thread)
	// KprobeLinkMissed: Stats.Missed comes from kprobe or kprobe_multi
	// links' info, so it is unknown where the kernel does not report it
	// (KprobeLinkReportsMissed).
	KprobeLinkMissed bool
}

// Under returns what is unknown under cfg on the running kernel: Stats and
// every Event's fields.
func (b Blind) Under(cfg Config) (stats, event Fields) {
	stats = b.Stats
	if b.KprobeLinkMissed && !KprobeLinkReportsMissed() {
		stats |= FieldMissed
	}
	if cfg.Threshold == 0 {
		stats |= b.StatsAtZero
	}
	return stats, b.Event
}

// setString names the bits of s, e.g. "calls,errors"; "none" if empty.
func setString(s uint64, names []string) string {
	var out []string
	for i, name := range names {
		if s&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}
