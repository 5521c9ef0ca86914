package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"tracebench/funcset"
	"tracebench/tracers"
)

const (
	// signalCheckInterval bounds how long a Ctrl-C waits to be noticed:
	// ReadEvent cannot be woken by a signal, and Close, which could wake
	// it, would lose the events still in the ring buffer.
	signalCheckInterval = 100 * time.Millisecond
	// drainTimeout bounds the wait, after detaching, for the events of
	// calls that were in flight.
	drainTimeout = 2 * time.Second
)

// trace runs the trace command until the duration passes or ctx ends. It
// returns stopCause(ctx) when that is what ended it (see stop.go).
func trace(ctx context.Context, o traceOptions, stdout, stderr io.Writer) error {
	if err := checkProcess(o.pid); err != nil {
		return err
	}
	candidates, err := mechanisms(o.mechanism, o.functions)
	if err != nil {
		return err
	}
	out := newOutput(stdout)
	verbose := verboseTo(o.verbose, stderr)
	configs := configsFor(o, newFunctionSets(o.functions, funcset.ReadKernel, verbose))
	var m tracers.Mechanism
	var cfg tracers.Config
	err = running.start(out, func() (tr tracers.Tracer, err error) {
		tr, m, cfg, err = startFirst(candidates, configs, stderr, verbose)
		return tr, err
	})
	if err != nil {
		return err
	}
	defer running.Close()
	err = errors.Join(traceWith(ctx, &running, m, cfg, o, out, stderr), out.Flush())
	if cause := stopCause(ctx); cause != nil {
		return cause
	}
	return err
}

// configsFor returns what to start each mechanism tried with: o's
// configuration, and the functions of --functions judged for the
// mechanism's attach kinds (notes about them go to notes).
func configsFor(o traceOptions, sets *functionSets) func(m tracers.Mechanism, notes io.Writer) (tracers.Config, error) {
	return func(m tracers.Mechanism, notes io.Writer) (tracers.Config, error) {
		cfg := o.config()
		if !o.functions.given() {
			return cfg, nil
		}
		var err error
		cfg.Functions, err = sets.forMechanism(m, notes)
		return cfg, err
	}
}

// bannerPrefix starts the line that says what is traced, once attached:
// "Tracing vfs_read for ..." by default, as the seed tool's line starts,
// which scripts wait for before they start their workload.
const bannerPrefix = "Tracing "

// banner is the line that says what is traced, once attached.
func banner(functions string, o traceOptions, mechanism string) string {
	return fmt.Sprintf(bannerPrefix+"%s for %d s: calls by %s taking >= %d us, with %s. Ctrl-C to stop.\n",
		functions, int(o.duration.Seconds()), target(o.pid), o.threshold.Microseconds(), mechanism)
}

// traceWith traces with the started tr and prints to out.
func traceWith(ctx context.Context, tr tracers.Tracer, m tracers.Mechanism, cfg tracers.Config, o traceOptions,
	out *output, stderr io.Writer) error {
	agg, err := aggregator(m, o)
	if err != nil {
		return err
	}
	if o.mechanism == "auto" {
		fmt.Fprintf(stderr, "tracebench: --mechanism auto chose %s\n", m.Name)
	}
	io.WriteString(stderr, banner(functionsText(o.functions, cfg.Functions), o, m.Name))

	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	started := time.Now()
	p := newPrinter(o.json, out)
	printed, err := stream(ctx, tr, p, out)
	if err != nil {
		return err
	}
	if errors.As(context.Cause(ctx), new(outputError)) {
		return nil // no reader left for the rest: trace returns the cause
	}
	elapsed := time.Since(started)
	s, err := finish(tr, agg, p, printed, o)
	if err != nil {
		return err
	}
	s.Mechanism, s.Elapsed = m.Name, elapsed
	warnMissed(stderr, s.Stats)
	noteUnknown(stderr, m.Name, s.Stats)
	return p.summary(s)
}

// checkProcess refuses a --pid that names no process, or a thread rather
// than a process: the filter compares TGIDs, so either would trace nothing.
func checkProcess(pid uint32) error {
	if pid == 0 {
		return nil
	}
	if err := checkPIDNamespace(pid); err != nil {
		return err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--pid %d: no such process", pid)
	}
	if err != nil {
		return fmt.Errorf("--pid %d: %w", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if tgid := strings.TrimSpace(v); tgid != strconv.Itoa(int(pid)) {
				return fmt.Errorf("--pid %d is a thread of process %s; give the process ID", pid, tgid)
			}
		}
	}
	return nil
}

// initPIDNamespace is the initial PID namespace's inode (the kernel's
// PROC_PID_INIT_INO): BPF programs see TGIDs of that namespace.
const initPIDNamespace = 0xEFFFFFFC

// checkPIDNamespace refuses --pid from another PID namespace (a container's):
// the IDs it sees are not the TGIDs the filter compares.
func checkPIDNamespace(pid uint32) error {
	link, err := os.Readlink("/proc/self/ns/pid")
	if errors.Is(err, os.ErrNotExist) {
		return nil // no PID namespaces (CONFIG_PID_NS unset)
	}
	if err != nil {
		return fmt.Errorf("--pid %d: reading this process's PID namespace: %w", pid, err)
	}
	if link != fmt.Sprintf("pid:[%d]", initPIDNamespace) {
		return fmt.Errorf("--pid %d: this process runs in PID namespace %s, not the initial one, so its "+
			"process IDs are not the kernel's TGIDs the filter compares; run tracebench in the host's "+
			"PID namespace", pid, link)
	}
	return nil
}

// autoMechanisms are what --mechanism auto tries, best first: the designs
// the slow-read tool is specified with (tracers.RoleTool), which observe
// every field. The others are chosen by name.
func autoMechanisms() []tracers.Mechanism { return tracers.MechanismsFor(tracers.RoleTool) }

// mechanisms returns what to try for --mechanism name: auto tries the
// tools, or with --functions the mechanisms that trace many functions; a
// name traces vfs_read alone where it cannot trace many (parseTrace
// refuses it with --functions).
func mechanisms(name string, functions functionsSpec) ([]tracers.Mechanism, error) {
	switch {
	case name == "auto" && functions.given():
		if multi := multiMechanisms(); len(multi) > 0 {
			return multi, nil
		}
		return nil, fmt.Errorf("--functions %s: no registered mechanism traces many functions", functions)
	case name == "auto":
		return autoMechanisms(), nil
	}
	m, err := tracers.Lookup(name)
	if err != nil {
		return nil, err
	}
	return []tracers.Mechanism{m}, nil
}

// names returns the names of ms.
func names(ms []tracers.Mechanism) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}

// startFirst starts the first of ms the kernel supports, each with the
// configuration configs gives it. Start probes the kernel first; a kernel
// that passes the probe but refuses to load (e.g. trampolines forbidden)
// is skipped the same way. A mechanism whose functions cannot be built is
// skipped too when others remain (its kinds may attach none of a glob's
// matches), and that error is returned if none starts. Notes on the
// functions of the mechanism started go to stderr.
func startFirst(ms []tracers.Mechanism, configs func(tracers.Mechanism, io.Writer) (tracers.Config, error),
	stderr, verbose io.Writer) (tracers.Tracer, tracers.Mechanism, tracers.Config, error) {
	var setErr error
	for _, m := range ms {
		var notes bytes.Buffer
		cfg, err := configs(m, &notes)
		if err != nil {
			if len(ms) == 1 {
				return nil, m, cfg, err
			}
			fmt.Fprintf(verbose, "tracebench: skipping %s: %v\n", m.Name, err)
			setErr = cmp.Or(setErr, err)
			continue
		}
		tr, err := m.Start(cfg)
		if err == nil {
			fmt.Fprintf(verbose, "tracebench: %s started\n", m.Name)
			_, err = notes.WriteTo(stderr)
			return tr, m, cfg, err
		}
		if len(ms) == 1 || !errors.Is(err, tracers.ErrUnsupported) {
			return nil, m, cfg, err
		}
		fmt.Fprintf(verbose, "tracebench: skipping %v\n", err)
	}
	if setErr != nil {
		return nil, tracers.Mechanism{}, tracers.Config{}, setErr
	}
	return nil, tracers.Mechanism{}, tracers.Config{}, fmt.Errorf("this kernel supports none of %s (--verbose or "+
		"\"tracebench list\" says why)", strings.Join(names(ms), ", "))
}

func verboseTo(verbose bool, stderr io.Writer) io.Writer {
	if verbose {
		return stderr
	}
	return io.Discard
}

// aggregator returns the running tracer's kernel-side aggregates when the
// options ask for any; Start refuses them where m.Can says m counts none.
func aggregator(m tracers.Mechanism, o traceOptions) (tracers.Aggregator, error) {
	if !o.histogram && !o.perPID {
		return nil, nil
	}
	agg, ok := running.aggregator()
	if !ok {
		return nil, fmt.Errorf("--histogram and --per-pid need a mechanism that counts in BPF; %s does not", m.Name)
	}
	return agg, nil
}

func target(pid uint32) string {
	if pid == 0 {
		return "every process"
	}
	return fmt.Sprintf("process %d", pid)
}

// stream prints events until ctx ends and returns how many it printed.
// It reads what the ring buffer holds without waiting and flushes out
// only when it is empty, so that a burst costs few write(2)s.
func stream(ctx context.Context, tr tracers.Tracer, p printer, out *output) (uint64, error) {
	var printed uint64
	for ctx.Err() == nil {
		ev, err := tr.ReadEvent(noWait)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if err := out.Flush(); err != nil {
				return printed, err
			}
			ev, err = tr.ReadEvent(nextCheck(ctx))
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return printed, fmt.Errorf("read event: %w", err)
		}
		if err := p.event(ev); err != nil {
			return printed, err
		}
		printed++
	}
	return printed, nil
}

// nextCheck is how long stream waits for an event before it looks at ctx
// again.
func nextCheck(ctx context.Context) time.Time {
	deadline := time.Now().Add(signalCheckInterval)
	if end, ok := ctx.Deadline(); ok && end.Before(deadline) {
		deadline = end
	}
	return deadline
}

// finish detaches, prints the events left in the ring buffer and reads
// the counters and aggregates, all after the last call returned.
func finish(tr tracers.Tracer, agg tracers.Aggregator, p printer, printed uint64, o traceOptions) (summary, error) {
	events, stats, err := tracers.DrainRest(tr, printed, drainTimeout)
	if err != nil {
		return summary{}, fmt.Errorf("drain: %w", err)
	}
	for _, ev := range events {
		if err := p.event(ev); err != nil {
			return summary{}, err
		}
	}
	s := summary{Stats: stats, Events: printed + uint64(len(events))}
	if o.histogram {
		h, err := agg.Histogram()
		if err != nil {
			return summary{}, err
		}
		s.Histogram = &h
	}
	if o.perPID {
		t, err := agg.PerTGID()
		if err != nil {
			return summary{}, err
		}
		s.PerTGID = &t
	}
	return s, nil
}

// noteUnknown says which counters the mechanism could not observe, so
// that the summary's "?" (null in JSON) is not a mystery.
func noteUnknown(stderr io.Writer, mechanism string, st tracers.Stats) {
	if st.Unknown != 0 {
		fmt.Fprintf(stderr, "tracebench: %s does not observe %s: shown as %s (null in JSON)\n",
			mechanism, st.Unknown, unknownText)
	}
}

// missedWarning is warnMissed's line; the guest tests read it back.
const missedWarning = "tracebench: warning: the kernel skipped the probes of %d calls " +
	"(kretprobe maxactive or recursion); they are not counted\n"

// lostWarning is warnMissed's line for Stats.Lost.
const lostWarning = "tracebench: warning: %d calls of the traced processes were lost " +
	"(their per-thread state had no room or was overwritten after a missed return); they are not in calls\n"

// warnMissed says when the kernel skipped the probes for some calls (they
// are in none of the counts) or the mechanism lost some (counted in lost).
func warnMissed(stderr io.Writer, st tracers.Stats) {
	if st.Missed > 0 {
		fmt.Fprintf(stderr, missedWarning, st.Missed)
	}
	if st.Lost > 0 {
		fmt.Fprintf(stderr, lostWarning, st.Lost)
	}
}
