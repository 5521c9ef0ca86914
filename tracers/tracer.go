// Package tracers puts every vfs_read tracing mechanism behind one interface.
// A call is filtered by TGID at entry, timed until return, counted in Stats
// and, at or above the threshold, reported as an Event (or counted dropped).
// Each mechanism declares what it can do in its Capabilities.
package tracers

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cilium/ebpf"

	"tracebench/funcset"
)

// DefaultRingBufferBytes is the ring buffer size used when
// Config.RingBufferBytes is 0.
const DefaultRingBufferBytes = 256 * 1024

// maxRingBufferBytes bounds Config.RingBufferBytes well below the kernel's
// own limit, so that a typo cannot pin gigabytes of kernel memory.
const maxRingBufferBytes = 1 << 30

// MaxThreshold is the largest Config.Threshold accepted. No vfs_read worth
// reporting takes an hour; a larger value is a unit mistake or a duration
// whose arithmetic overflowed (time.Duration wraps silently).
const MaxThreshold = time.Hour

// DefaultThreadMapEntries is the per-thread map size used when
// Config.ThreadMapEntries is 0: MAX_THREADS of bpf/vfsread.h and
// libbpf-tools.
const DefaultThreadMapEntries = 10240

// MaxThreadMapEntries bounds Config.ThreadMapEntries (a preallocated
// hash map pins its entries' memory).
const MaxThreadMapEntries = 1 << 22

// MaxKretprobeMaxActive is the kernel's KRETPROBE_MAXACTIVE_MAX.
const MaxKretprobeMaxActive = 4096

// MaxFunctions bounds Config.Functions: more than the 47535 functions a
// 7.2 kernel lists in available_filter_functions, few enough that the
// per-function counters (a per-CPU array) stay small.
const MaxFunctions = 1 << 16

// Config selects what a mechanism reports. The zero value is valid: every
// process, every call reported, default ring buffer.
type Config struct {
	// Threshold is the smallest latency reported as an Event; 0 reports
	// every call. Must be between 0 and MaxThreshold.
	Threshold time.Duration
	// TGID restricts tracing to one process (thread group); 0 traces all.
	TGID uint32
	// RingBufferBytes sizes the event ring buffer in bytes: 0 for
	// DefaultRingBufferBytes, otherwise a power of two and a multiple of
	// the page size, at most 1 GiB.
	RingBufferBytes int
	// KretprobeMaxActive is the number of calls each kretprobe of a
	// mechanism declaring LossMaxActive can follow at once (the kernel's
	// maxactive); a call entering beyond it is counted in Stats.Missed
	// instead of Calls.
	// 0 keeps the kernel's default (max(10, 2 x CPUs)); otherwise at most
	// MaxKretprobeMaxActive. A non-zero value makes the kretprobe go
	// through tracefs (kprobe_events), which must be mounted. The
	// trampoline mechanisms have no such limit and ignore it.
	KretprobeMaxActive int
	// ThreadMapEntries sizes the per-thread hash map of the mechanisms
	// whose Capabilities.State keeps one (StateHashMap,
	// StateCookieAndHashMap): 0 keeps DefaultThreadMapEntries, as
	// libbpf-tools; otherwise 1 to MaxThreadMapEntries. Calls entering
	// with the map full are counted in Stats.Lost. Mechanisms without
	// such a map have nothing to size and ignore it.
	ThreadMapEntries int
	// Histogram makes the tracer count every call of Stats.Calls in a
	// log2 latency histogram, read with Aggregator.Histogram.
	Histogram bool
	// PerTGID makes the tracer aggregate every call of Stats.Calls per
	// process (count, total and maximum latency), read with
	// Aggregator.PerTGID.
	PerTGID bool
	// Functions are the kernel functions to trace, by name (vmlinux
	// functions in the kernel's BTF), each once, at most MaxFunctions, in
	// the order Stats.PerFunction lists them; nil traces DefaultFunction
	// (vfs_read) alone. A mechanism whose Can.Functions.Many is false
	// refuses any other list at Start, before loading anything.
	Functions []string
}

// Validate reports the first invalid field, naming its value, whatever the
// mechanism (ValidateFor adds what one rules out; Start calls it). Any TGID
// is valid: one that no process has traces nothing (the scenarios filter on
// 4294967295 for that), as does a process that has exited.
func (c Config) Validate() error {
	if c.Threshold < 0 {
		return fmt.Errorf("threshold %v is negative", c.Threshold)
	}
	if c.Threshold > MaxThreshold {
		return fmt.Errorf("threshold %v exceeds %v (a unit mistake or an overflowed duration?)",
			c.Threshold, MaxThreshold)
	}
	if c.KretprobeMaxActive < 0 || c.KretprobeMaxActive > MaxKretprobeMaxActive {
		return fmt.Errorf("kretprobe maxactive %d is not between 0 and %d",
			c.KretprobeMaxActive, MaxKretprobeMaxActive)
	}
	if c.ThreadMapEntries < 0 || c.ThreadMapEntries > MaxThreadMapEntries {
		return fmt.Errorf("per-thread map size %d entries is not between 0 and %d",
			c.ThreadMapEntries, MaxThreadMapEntries)
	}
	if err := validateFunctions(c.Functions); err != nil {
		return err
	}
	if c.RingBufferBytes == 0 {
		return nil
	}
	page := os.Getpagesize()
	n := c.RingBufferBytes
	if n < page || n > maxRingBufferBytes || n&(n-1) != 0 {
		return fmt.Errorf("ring buffer size %d bytes is not a power of two between the page size (%d) and %d",
			n, page, maxRingBufferBytes)
	}
	return nil
}

// ValidateFor reports Validate's error, else the first value of c that a
// mechanism declaring can cannot apply on any kernel, naming it: a
// threshold finer than its resolution, aggregates of a mechanism that does
// not count every call, functions of one that traces DefaultFunction alone.
func (c Config) ValidateFor(can Capabilities) error {
	if err := c.Validate(); err != nil {
		return err
	}
	switch {
	case c.Threshold%can.ThresholdResolution != 0:
		return fmt.Errorf("threshold %v is not a multiple of the mechanism's threshold resolution (%v)",
			c.Threshold, can.ThresholdResolution)
	case c.Histogram && !can.Aggregates():
		return errors.New("histogram asked for: the mechanism does not count every call in the kernel")
	case c.PerTGID && !can.Aggregates():
		return errors.New("per-TGID totals asked for: the mechanism does not count every call in the kernel")
	case !can.Functions.Many && !slices.Equal(c.TracedFunctions(), []string{DefaultFunction}):
		return fmt.Errorf("functions %s asked for: the mechanism traces %s alone", abbreviate(c.Functions, 4), DefaultFunction)
	}
	return nil
}

// validateFunctions reports the first bad value of Config.Functions: an
// empty (non-nil) list, too many, an empty name or one holding blanks or
// control characters, a name given twice.
func validateFunctions(functions []string) error {
	if functions == nil {
		return nil
	}
	if len(functions) == 0 {
		return fmt.Errorf("function list is empty (nil traces %s alone)", DefaultFunction)
	}
	if len(functions) > MaxFunctions {
		return fmt.Errorf("%d functions asked for, more than %d", len(functions), MaxFunctions)
	}
	seen := make(map[string]int, len(functions))
	for i, name := range functions {
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return fmt.Errorf("function %d of the list, %q, is not a kernel function name", i+1, name)
		}
		if j, ok := seen[name]; ok {
			return fmt.Errorf("function %q is given twice (items %d and %d of the list)", name, j+1, i+1)
		}
		seen[name] = i
	}
	return nil
}

// abbreviate lists names, the first n of them and how many more.
func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func (c Config) ringBufferBytes() int {
	if c.RingBufferBytes == 0 {
		return DefaultRingBufferBytes
	}
	return c.RingBufferBytes
}

// Stats are a mechanism's counters, summed over CPUs and over the traced
// functions.
type Stats struct {
	// Calls counts calls that passed the TGID filter at entry and returned
	// while the mechanism was attached.
	Calls uint64
	// Slow counts the calls with latency >= Config.Threshold.
	Slow uint64
	// Errors counts the calls that returned -errno: vfs_read's negative
	// results; for another function a signed integer, enum or pointer
	// result in [-4095, -1] (the kernel's IS_ERR_VALUE), never an
	// unsigned, void or struct one.
	Errors uint64
	// Dropped counts slow calls whose event did not fit the ring buffer.
	Dropped uint64
	// Lost counts calls that passed the TGID filter at entry but whose
	// per-call state could not be kept (Capabilities.Loses says which
	// losses land here): a full or busy per-thread map, no task storage,
	// or an entry overwritten by the thread's next call because its
	// return was missed. Filtered by TGID like Calls.
	Lost uint64
	// Overwritten counts, of Lost, the entries a thread's later call
	// replaced because their return was missed; the rest of Lost found no
	// room (a full or busy map, no task storage).
	Overwritten uint64
	// Missed counts program runs the kernel skipped (Capabilities.Loses):
	// the links' missed counts plus recursion misses. The kernel keeps
	// them per probe, not per process: they are not filtered by TGID.
	Missed uint64
	// RecursionMisses counts, of Missed, the runs skipped because the
	// program was running on the CPU already (bpf_prog_info's
	// recursion_misses, 5.12); the rest are the links' missed counts
	// (kretprobe maxactive, fprobe).
	RecursionMisses uint64
	// Pending counts per-thread records of calls whose entry was seen but
	// whose return was not (yet), where Capabilities.State keeps any.
	// Read after Drain, a non-zero value is state left behind.
	Pending uint64
	// Unknown lists the counters the mechanism could not observe in this
	// run (Capabilities.Blind); they read 0 and are not measurements.
	Unknown Fields
	// PerFunction holds the counters of each traced function
	// (Config.TracedFunctions), in that order; the counters above are
	// their sums where each function's is known.
	PerFunction []FunctionStats
}

// Tracer is one attached mechanism. It is not safe for concurrent use,
// except that Close may be called while ReadEvent blocks.
type Tracer interface {
	// ReadEvent returns the next event. It blocks until one is available
	// or deadline passes (then it returns os.ErrDeadlineExceeded); the
	// zero deadline blocks indefinitely. After Close it returns an error
	// wrapping os.ErrClosed.
	ReadEvent(deadline time.Time) (Event, error)
	// Stats reads the counters.
	Stats() (Stats, error)
	// Detach stops tracing new calls; events already in the ring buffer
	// stay readable and the counters stay readable.
	Detach() error
	// Close detaches and frees every kernel object of the tracer. It is
	// safe to call more than once.
	Close() error
}

// ErrUnsupported is wrapped by the error Start returns when the running
// kernel lacks what a mechanism needs.
var ErrUnsupported = errors.New("not supported by this kernel")

// UnsupportedError says which kernel feature a mechanism lacks and how that
// was detected. It wraps ErrUnsupported.
type UnsupportedError struct {
	Mechanism string // registry name
	Needs     string // e.g. "BPF_TRACE_FSESSION (Linux 7.0)"
	Kernel    string // uname release of the running kernel
	Detected  string // what the probe saw
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s needs %s; this kernel is %s: %s", e.Mechanism, e.Needs, e.Kernel, e.Detected)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// KernelVersion is a Linux release, e.g. {7, 0}.
type KernelVersion struct{ Major, Minor int }

func (v KernelVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Before reports whether v is an earlier release than w.
func (v KernelVersion) Before(w KernelVersion) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// Requirement is what a mechanism needs of the running kernel. The probe
// and the load look for the features themselves, not at the version:
// distributions backport them.
type Requirement struct {
	// Features names them: config options, attach types, kfuncs, BPF
	// instructions, tracefs files.
	Features string
	// Since is the first Linux release that has every one of them.
	Since KernelVersion
}

// String says the features and the release, e.g.
// "BPF_TRACE_FSESSION (Linux 7.0)".
func (r Requirement) String() string { return fmt.Sprintf("%s (Linux %v)", r.Features, r.Since) }

// Mechanism is a registered way of tracing vfs_read.
type Mechanism struct {
	// Name is the stable registry name, e.g. "fsession".
	Name string
	// Summary says in one line how the mechanism works.
	Summary string
	// Can declares what the mechanism can do.
	Can Capabilities
	// Needs is what it needs of the kernel; UnsupportedError.Needs says it.
	Needs Requirement

	// probe returns an *UnsupportedError when the kernel lacks a feature.
	probe func(m Mechanism) error
	// spec returns the mechanism's BPF object, as compiled by bpf2go.
	spec func() (*ebpf.CollectionSpec, error)
	// loadProgram loads one program whose maps are already associated;
	// nil: cilium/ebpf loads the whole object.
	loadProgram func(*ebpf.ProgramSpec) (*ebpf.Program, error)
	// perFunction: loadProgram loads each program once per traced
	// function, its target (the kernel fixes a trampoline program's
	// target at load).
	perFunction bool
	// attach attaches the loaded programs as the configuration asks.
	attach attachFunc
	// start, if set, starts a mechanism that is not a BPF object (spec,
	// loadProgram and attach are then nil); cfg is already validated and
	// within what Can declares.
	start func(m Mechanism, cfg Config) (Tracer, error)
}

// registry lists the mechanisms, best first.
var registry = []Mechanism{
	fsession,
	fentryFexit,
	kprobeKretprobe,
	kprobeSession,
	fentryFexitTaskstorage,
	fsessionMulti,
	ftraceGraph,
	fentryFexitMulti,
	kprobeSessionMulti,
	kprobeKretprobeMulti,
	fsessionEach,
	fentryFexitEach,
	kprobeKretprobeEach,
}

// bpfCapabilities declares a BPF object counting through bpf/vfsread.h.
func bpfCapabilities(role Role, state State, loses Losses, functions FunctionSupport) Capabilities {
	return Capabilities{Role: role, BPF: true, ThresholdResolution: time.Nanosecond, State: state, Loses: loses,
		Functions: functions}
}

// vfsReadOnly declares a mechanism tracing vfs_read alone with kinds.
func vfsReadOnly(kinds ...funcset.Kind) FunctionSupport { return FunctionSupport{Kinds: kinds} }

// Mechanisms returns every registered mechanism, best first.
func Mechanisms() []Mechanism { return slices.Clone(registry) }

// MechanismsFor returns the registered mechanisms declaring role r, best
// first.
func MechanismsFor(r Role) []Mechanism {
	return slices.DeleteFunc(Mechanisms(), func(m Mechanism) bool { return m.Can.Role != r })
}

// Lookup returns the mechanism registered under name.
func Lookup(name string) (Mechanism, error) {
	for _, m := range registry {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, len(registry))
	for i, m := range registry {
		names[i] = m.Name
	}
	return Mechanism{}, fmt.Errorf("unknown mechanism %q (known: %s)", name, strings.Join(names, ", "))
}

// Start looks up the mechanism called name and starts it.
func Start(name string, cfg Config) (Tracer, error) {
	m, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return m.Start(cfg)
}

// Probe reports whether the running kernel can run m: nil, an error
// wrapping ErrUnsupported that names the missing feature (or DisableEnv's
// reason), or another error when probing itself failed.
func (m Mechanism) Probe() error {
	if err := disabled(m.Name); err != nil {
		return err
	}
	return m.probe(m)
}
