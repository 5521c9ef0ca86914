package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"tracebench/tracers"
)

// traceUsage is the help of trace; auto's mechanisms are the declared tools,
// and with --functions those that trace many functions.
var traceUsage = fmt.Sprintf(`Usage: tracebench trace [flags]

Prints each call of vfs_read (or of the --functions) that takes at least the
threshold, then a summary. Once attached it says on stderr what it traces, in
a line starting "Tracing vfs_read for" (with --functions, "Tracing N
functions").
Needs root. Ctrl-C stops early; the summary is still printed. A second
Ctrl-C aborts at once, without it.

Flags:
  --threshold-us USEC   report calls taking at least USEC microseconds
                        (default 1000; 0 reports every call)
  --duration SEC        trace for SEC seconds, 1 to 86400 (default 10)
  --pid TGID            trace only process TGID (default: every process)
  --ring-kib KIB        BPF ring buffer for events, KiB, a power of two from 4
                        to 1048576 (default 4096: a burst of ~75000 events)
  --functions GLOB|@FILE
                        trace these kernel functions instead of vfs_read:
                        those of the kernel's BTF and available_filter_functions
                        matching GLOB (*, ?, [...]; quote it from the shell)
                        that the mechanism can attach, or every function
                        FILE names: one a line (blank lines and # comments
                        allowed), or a function set as funcset writes it;
                        each must attach, or tracing does not start
  --mechanism NAME|auto how to trace: a name from "tracebench list", or auto
                        (default) for the first this kernel runs of
                        %s
                        or, with --functions, of
                        %s
  --histogram           also print a log2 histogram of the latency of every
                        traced call, counted in the kernel (BPF mechanisms)
  --per-pid             also print calls, total and maximum latency per process
                        (BPF mechanisms)
  --output text|json    text lines (default), or one JSON object per event
                        and one for the summary
  --verbose             say on stderr why each mechanism was or was not used
  -h, --help            this help

Output (text):
  EVENT function=NAME comm=NAME tgid=N pid=N requested=BYTES result=VALUE|-ERRNO latency_us=N
  FUNCTION name=NAME calls=N slow=N errors=N dropped=N lost=N   (each, if more than one)
  SUMMARY calls=N slow=N errors=N dropped=N lost=N events=N
A value the mechanism cannot observe is printed as ?, in JSON as null:
requested is vfs_read's count argument, unknown for other functions; result
is the return value, unknown for a function returning no integer or pointer.
`, strings.Join(names(autoMechanisms()), ", "), strings.Join(names(multiMechanisms()), ", "))

// Bounds of the flags.
const (
	maxDurationSec = 86400
	// pidMaxLimit is the kernel's PID_MAX_LIMIT on 64-bit, the largest
	// pid_max; process IDs are below pid_max, so at most pidMaxLimit-1.
	pidMaxLimit = 4 << 20
)

// maxThresholdUS is tracers.MaxThreshold in microseconds.
var maxThresholdUS = tracers.MaxThreshold.Microseconds()

// traceOptions is a validated trace command line.
type traceOptions struct {
	threshold time.Duration
	duration  time.Duration
	pid       uint32 // 0: every process
	mechanism string // a registered name, or "auto"
	histogram bool
	perPID    bool
	json      bool
	verbose   bool
	ringBytes int
	functions functionsSpec // zero: vfs_read alone
}

// defaultRingKiB sizes the CLI's ring buffer above tracers' 256 KiB
// default: in a TCG guest reading and printing an event (BenchmarkPrinter,
// BenchmarkDecodeRecord) costs more than a traced read, so at
// --threshold-us 0 a burst waits in the ring (TestTraceKeepsUp).
const defaultRingKiB = 4096

// parseTrace parses and validates the flags of trace. Errors name the
// flag and the bad value; -h gives flag.ErrHelp.
func parseTrace(args []string) (traceOptions, error) {
	thresholdUS, durationSec, pid, ringKiB := int64(1000), int64(10), int64(0), int64(defaultRingKiB)
	o := traceOptions{mechanism: "auto"}
	output := "text"
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints the error and where the help is itself
	fs.Var(intIn{&thresholdUS, 0, maxThresholdUS, "microseconds"}, "threshold-us", "")
	fs.Var(intIn{&durationSec, 1, maxDurationSec, "seconds"}, "duration", "")
	fs.Var(intIn{&pid, 1, pidMaxLimit - 1, "a process ID"}, "pid", "")
	fs.Var(powerOfTwoIn{intIn{&ringKiB, 4, 1 << 20, "KiB"}}, "ring-kib", "")
	fs.Var(oneOf{&o.mechanism, validMechanism}, "mechanism", "")
	fs.Var(functionsFlag{&o.functions}, "functions", "")
	fs.Var(oneOf{&output, validOutput}, "output", "")
	fs.BoolVar(&o.histogram, "histogram", false, "")
	fs.BoolVar(&o.perPID, "per-pid", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	if err := fs.Parse(args); err != nil {
		return traceOptions{}, err
	}
	if fs.NArg() > 0 {
		return traceOptions{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkFunctionsMechanism(o.functions, o.mechanism); err != nil {
		return traceOptions{}, err
	}
	o.threshold = time.Duration(thresholdUS) * time.Microsecond
	o.duration = time.Duration(durationSec) * time.Second
	o.pid = uint32(pid)
	o.ringBytes = int(ringKiB) << 10
	o.json = output == "json"
	return o, nil
}

func (o traceOptions) config() tracers.Config {
	return tracers.Config{Threshold: o.threshold, TGID: o.pid, Histogram: o.histogram, PerTGID: o.perPID,
		RingBufferBytes: o.ringBytes}
}

// intIn is a flag.Value holding an integer in [min, max]; the flag
// package puts its error after `invalid value "X" for flag -NAME: `.
type intIn struct {
	v        *int64
	min, max int64
	unit     string
}

func (f intIn) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < f.min || n > f.max {
		return fmt.Errorf("want an integer from %d to %d (%s)", f.min, f.max, f.unit)
	}
	*f.v = n
	return nil
}

func (f intIn) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatInt(*f.v, 10)
}

// powerOfTwoIn is an intIn that also must be a power of two.
type powerOfTwoIn struct{ intIn }

func (f powerOfTwoIn) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < f.min || n > f.max || n&(n-1) != 0 {
		return fmt.Errorf("want a power of two from %d to %d (%s)", f.min, f.max, f.unit)
	}
	return f.intIn.Set(s)
}

// oneOf is a flag.Value holding a string that valid accepts.
type oneOf struct {
	v     *string
	valid func(string) error
}

func (f oneOf) Set(s string) error {
	if err := f.valid(s); err != nil {
		return err
	}
	*f.v = s
	return nil
}

func (f oneOf) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func validMechanism(name string) error {
	if name == "auto" {
		return nil
	}
	_, err := tracers.Lookup(name)
	return err
}

// checkFunctionsMechanism refuses --functions with a mechanism that traces
// vfs_read alone.
func checkFunctionsMechanism(functions functionsSpec, name string) error {
	if !functions.given() || name == "auto" {
		return nil
	}
	m, err := tracers.Lookup(name)
	if err != nil || m.Can.Functions.Many {
		return err
	}
	return fmt.Errorf("--functions %s: mechanism %s traces %s alone; trace many functions with one of %s, or auto",
		functions, name, tracers.DefaultFunction, strings.Join(names(multiMechanisms()), ", "))
}

func validOutput(s string) error {
	if s != "text" && s != "json" {
		return fmt.Errorf("want text or json")
	}
	return nil
}
