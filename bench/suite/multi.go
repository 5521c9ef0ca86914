package suite

import (
	"fmt"
	"strings"
)

// The multi family's sub-benchmarks: BenchmarkMultiRead/<name>/ReadpathCase
// (and its baseline) every round, BenchmarkMultiStart/<name>/<size> once
// per run, where a size is a function set's name ("n100", "all") or
// VFSReadCase for a mechanism tracing vfs_read alone.
const (
	ReadpathCase = "readpath"
	VFSReadCase  = "vfs_read"
)

// ApartKey, printed "true" among the configuration lines of a process
// that runs a family's once-per-run benchmarks apart from the rounds
// (-tracebench.apart): the report counts such a process as no round.
const ApartKey = "tracebench-apart"

// CompilerKey names, among the configuration lines, the compiler that
// built the running kernel, as /proc/version gives it: instruction counts
// of kernels built by different compilers differ by that too.
const CompilerKey = "tracebench-kernel-compiler"

// LoopKey names, among the configuration lines, how the timed loop's
// thread was scheduled (LoopSched).
const LoopKey = "tracebench-loop"

// LoopSched is LoopKey's value: the loop's thread, for its warm-up and
// timed reads, ran SCHED_FIFO priority 1 pinned to one CPU.
const LoopSched = "fifo-pinned"

// The multi family's configuration lines ("key: value", as the benchmark
// prints them and the report reads them).
const (
	// MultiKinds: the attach kinds the sets were built for, blank-separated.
	MultiKinds = "tracebench-multi-kinds"
	// MultiSetPrefix + set name: the set's number of functions.
	MultiSetPrefix = "tracebench-multi-set-"
	// MultiSetsBuilt: how long building the sets took, guest seconds
	// (printed by the round that built them).
	MultiSetsBuilt = "tracebench-multi-sets-built-s"
	// MultiBudget: the time budget of one Start, a Go duration.
	MultiBudget = "tracebench-multi-start-budget"
	// MultiCloseBudget: the time budget of one Close, idle or with the
	// CPUs busy, a Go duration.
	MultiCloseBudget = "tracebench-multi-close-budget"
	// MultiPeerLimit: how long a peer's Start may take before the peer
	// is killed (StopKilled), a Go duration.
	MultiPeerLimit = "tracebench-multi-peer-start-limit"
	// MultiPeerPreload: "true" when the peers' programs and libraries
	// were copied to RAM before their first Start (peers.Peer.Preload: a
	// peer root on 9p keeps no page cache).
	MultiPeerPreload = "tracebench-multi-peer-preload"
	// MultiMechanisms, MultiPeers and MultiSingle name the measured
	// multi-function mechanisms, peers and vfs_read-only mechanisms, in
	// order, blank-separated.
	MultiMechanisms = "tracebench-multi-mechanisms"
	MultiPeers      = "tracebench-multi-peers"
	MultiSingle     = "tracebench-multi-single"
	// MultiDesignPrefix + name: how it traces, in one line.
	MultiDesignPrefix = "tracebench-multi-design-"
	// MultiStopPrefix + name: where it stops (Stop).
	MultiStopPrefix = "tracebench-multi-stop-"
	// MultiCloseWaitsPrefix + name/size: what the thread closing it with
	// the CPUs busy waited in, sampled from its kernel stack.
	MultiCloseWaitsPrefix = "tracebench-multi-close-waits-"
	// MultiLostFunctionsPrefix + name/size: the functions whose calls it
	// lost most, each with its lost calls and of them those overwritten.
	MultiLostFunctionsPrefix = "tracebench-multi-lost-functions-"
)

// Why a mechanism stops growing at a size.
const (
	// StopRefused: Start failed at the size, with the kernel's (or the
	// tool's) reason.
	StopRefused = "refused"
	// StopBudget: Start at the size took longer than the budget; it was
	// measured, the larger sizes were not attempted.
	StopBudget = "budget"
	// StopPredicted: the fit of the sizes measured before predicts a
	// Start beyond the budget, so the size was not attempted.
	StopPredicted = "predicted"
	// StopCloseBudget: Close at the size (idle or with the CPUs busy)
	// took longer than the close budget; it was measured, the larger
	// sizes were not attempted.
	StopCloseBudget = "close-budget"
	// StopClosePredicted: the fit of the Closes measured before predicts
	// one beyond the close budget, so the size was not attempted.
	StopClosePredicted = "close-predicted"
	// StopLoop: with the size's functions traced, the read loop passed
	// the budget: Start there was measured (the text gives it), the loop
	// was cut, the larger sizes were not attempted.
	StopLoop = "loop"
	// StopKilled: a peer did not attach within MultiPeerLimit and was
	// killed: its Start there is only known to exceed the limit.
	StopKilled = "killed"
)

// Stop is where and why a mechanism stops: MultiStopPrefix's value,
// "<size> <reason>: <text>".
type Stop struct {
	Size, Reason, Text string
}

func (s Stop) String() string { return s.Size + " " + s.Reason + ": " + s.Text }

// ParseStop reads a Stop; an error names the bad value.
func ParseStop(v string) (Stop, error) {
	head, text, ok := strings.Cut(v, ": ")
	size, reason, ok2 := strings.Cut(head, " ")
	if !ok || !ok2 || size == "" {
		return Stop{}, fmt.Errorf("stop %q is not \"<size> <reason>: <text>\"", v)
	}
	switch reason {
	case StopRefused, StopBudget, StopPredicted, StopCloseBudget, StopClosePredicted, StopLoop, StopKilled:
		return Stop{Size: size, Reason: reason, Text: text}, nil
	}
	return Stop{}, fmt.Errorf("stop %q: reason %q is none of %s", v, reason, strings.Join([]string{StopRefused, StopBudget,
		StopPredicted, StopCloseBudget, StopClosePredicted, StopLoop, StopKilled}, ", "))
}
