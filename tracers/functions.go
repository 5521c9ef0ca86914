package tracers

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"tracebench/funcset"
	"tracebench/internal/kernelbtf"
)

// DefaultFunction is what a tracer traces when Config.Functions is nil,
// and the one function whose count argument (Event.Requested) is known.
const DefaultFunction = "vfs_read"

// FunctionSupport declares what a mechanism does with kernel functions.
type FunctionSupport struct {
	// Many: it traces any list of Config.Functions at once; otherwise
	// DefaultFunction alone (Config.Functions nil or just it).
	Many bool
	// Kinds are the attach kinds it attaches every function with: a set
	// it traces is built for all of them (funcset's Readpath and Draw
	// take them), so that funcset keeps out what any of them refuses.
	Kinds []funcset.Kind
	// Shared are the counters the kernel keeps per program or per link
	// where one serves every function (a tracing_multi or kprobe_multi
	// link): unknown in each FunctionStats when it traces more than one
	// function, known in Stats' totals.
	Shared Fields
}

// FunctionStats are the counters of one traced function, summed over
// CPUs, as Stats' are of all (Stats.PerFunction).
type FunctionStats struct {
	Function                                            string
	Calls, Slow, Errors, Dropped, Lost, Missed, Pending uint64
	// Overwritten is Stats.Overwritten of this function.
	Overwritten uint64
	// Unknown lists the counters not observed for this function
	// (Capabilities.OfFunction); they read 0.
	Unknown Fields
}

// TracedFunctions returns the functions c traces, in order: Functions, or
// DefaultFunction alone when it is nil.
func (c Config) TracedFunctions() []string {
	if c.Functions == nil {
		return []string{DefaultFunction}
	}
	return c.Functions
}

// OfFunction returns what is unknown under cfg of function's counters
// (FunctionStats.Unknown) and of each of its events: what Blind.Under
// says of every function, plus the count argument (Requested) of every
// function but DefaultFunction, the result of a function whose kernel BTF
// return type is no integer, enum or pointer (void, a struct; or no BTF),
// and the Shared counters when cfg traces more than one function.
func (c Capabilities) OfFunction(cfg Config, function string) (stats, event Fields) {
	return c.ofFunction(cfg, function, c.resultOf(function))
}

func (c Capabilities) ofFunction(cfg Config, function string, r result) (stats, event Fields) {
	stats, event = c.Blind.Under(cfg)
	if function != DefaultFunction {
		event |= FieldRequested
	}
	if !r.value {
		event |= FieldResult
	}
	if len(cfg.TracedFunctions()) > 1 {
		stats |= c.Functions.Shared
	}
	return stats, event
}

// resultOf is how function's result reads where c observes results at
// all; a mechanism blind to them reads no BTF.
func (c Capabilities) resultOf(function string) result {
	if c.Blind.Event.Has(FieldResult) {
		return result{}
	}
	return resultOf(function)
}

// result is how a function's return register reads as Event.Result; its
// cookie carries it to the BPF programs (bpf/multi.h).
type result struct {
	value  bool  // it returns an integer, enum or pointer
	size   uint8 // bytes of it the register holds, 1 to 8
	signed bool  // sign-extended from size
	// errno: a value in [-4095, -1] is an error (-errno, the kernel's
	// IS_ERR_VALUE): signed integers and enums, pointers (ERR_PTR).
	errno bool
}

// resultOf reads function's return type from the kernel BTF; a function
// BTF does not describe has no known result.
func resultOf(function string) result {
	fn, _, err := kernelbtf.Function(function)
	if err != nil {
		return result{}
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok {
		return result{}
	}
	return resultOfType(proto.Return)
}

func resultOfType(t btf.Type) result {
	switch r := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		if r.Size < 1 || r.Size > 8 {
			return result{}
		}
		signed := r.Encoding&btf.Signed != 0
		return result{value: true, size: uint8(r.Size), signed: signed, errno: signed}
	case *btf.Enum:
		if r.Size < 1 || r.Size > 8 {
			return result{}
		}
		return result{value: true, size: uint8(r.Size), signed: r.Signed, errno: r.Signed}
	case *btf.Pointer:
		return result{value: true, size: 8, errno: true}
	}
	return result{}
}

// FunctionsRefusedError: the kernel refused to attach some of
// Config.Functions with one of the mechanism's attach kinds; nothing was
// left attached. Start returns it.
type FunctionsRefusedError struct {
	Mechanism string
	Kind      funcset.Kind
	// Refused holds each refused function with the kernel's reason (the
	// verifier's sentence where there is one).
	Refused map[string]string
	// Of is how many functions were asked for.
	Of int
}

func (e *FunctionsRefusedError) Error() string {
	names := sortedKeys(e.Refused)
	reasons := make([]string, len(names))
	for i, name := range names {
		reasons[i] = name + ": " + e.Refused[name]
	}
	return fmt.Sprintf("%s: the kernel refuses to attach %d of the %d functions with %s, so none is traced: %s",
		e.Mechanism, len(names), e.Of, e.Kind, strings.Join(reasons, "; "))
}

// functionTable is what a tracer knows of its traced functions, by the
// index its BPF object counts them under.
type functionTable struct {
	names []string
	// cookies are each function's attach cookie: its index, and above it
	// how its result reads (bpf/multi.h).
	cookies []uint64
	// stats and event are what OfFunction says is unknown of each.
	stats, event []Fields
	// countIndex is DefaultFunction's index, noFunction if not traced.
	countIndex uint32
}

// noFunction is NO_FUNCTION of bpf/multi.h.
const noFunction = ^uint32(0)

// The bits of a cookie above the function's index (bpf/multi.h).
const (
	cookieSizeShift = 32
	cookieSigned    = 1 << 40
	cookieErrno     = 1 << 41
)

func newFunctionTable(can Capabilities, cfg Config) functionTable {
	names := cfg.TracedFunctions()
	n := len(names)
	ft := functionTable{names: names, cookies: make([]uint64, n), stats: make([]Fields, n), event: make([]Fields, n),
		countIndex: noFunction}
	for i, name := range names {
		r := can.resultOf(name)
		ft.cookies[i] = r.cookie(uint32(i))
		ft.stats[i], ft.event[i] = can.ofFunction(cfg, name, r)
		if name == DefaultFunction {
			ft.countIndex = uint32(i)
		}
	}
	return ft
}

// cookie is the attach cookie of the function of index i returning r.
func (r result) cookie(i uint32) uint64 {
	c := uint64(i)
	if r.value {
		c |= uint64(r.size) << cookieSizeShift
	}
	if r.signed {
		c |= cookieSigned
	}
	if r.errno {
		c |= cookieErrno
	}
	return c
}

// of names the function at index i of the object's counters and events;
// an index the tracer did not give out is an error.
func (ft functionTable) of(i uint32) (string, error) {
	if int(i) >= len(ft.names) {
		return "", fmt.Errorf("function index %d, but %d functions are traced", i, len(ft.names))
	}
	return ft.names[i], nil
}

// fill sets ev's function (index i) and what is unknown of it.
func (ft functionTable) fill(ev *Event, i uint32) error {
	name, err := ft.of(i)
	if err != nil {
		return err
	}
	ev.Function, ev.Unknown = name, ev.Unknown|ft.event[i]
	return nil
}

// only returns s as the counters of its one traced function.
func (s Stats) only(function string) FunctionStats {
	return FunctionStats{Function: function, Calls: s.Calls, Slow: s.Slow, Errors: s.Errors, Dropped: s.Dropped,
		Lost: s.Lost, Missed: s.Missed, Pending: s.Pending, Overwritten: s.Overwritten, Unknown: s.Unknown}
}

// totals sums per-function counters into Stats, the unknown ones
// excepted; Missed, Pending and Unknown are the caller's.
func totals(per []FunctionStats) Stats {
	var s Stats
	for _, f := range per {
		s.Calls += f.Calls
		s.Slow += f.Slow
		s.Errors += f.Errors
		s.Dropped += f.Dropped
		s.Lost += f.Lost
		s.Overwritten += f.Overwritten
	}
	s.PerFunction = per
	return s
}
