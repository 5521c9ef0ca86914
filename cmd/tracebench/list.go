package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"tracebench/tracers"
)

// list prints every registered mechanism and whether this kernel runs it.
func list(stdout io.Writer, euid int) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MECHANISM\tSUPPORTED\tDETAIL")
	for _, m := range tracers.Mechanisms() {
		supported, detail := support(m, euid == 0)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, supported, detail)
	}
	return tw.Flush()
}

// The verdict as non-root on a mechanism whose probe passed.
const (
	notVerified       = "unverified"
	notVerifiedDetail = "not verified (not root): the probe found nothing missing, but only loading it as root can tell"
)

// support says whether the kernel runs m and why. The probe alone cannot
// see every refusal (a kernel may have the BTF for trampolines yet forbid
// loading them), so as root m is started, filtering on a process that
// makes no reads meanwhile, and closed at once; through the guard, so that
// an abort (a second Ctrl-C) closes it too.
func support(m tracers.Mechanism, root bool) (supported, detail string) {
	if err := m.Probe(); err != nil {
		return verdict(err)
	}
	if !root {
		return notVerified, notVerifiedDetail
	}
	cfg := tracers.Config{TGID: uint32(os.Getpid()), Threshold: tracers.MaxThreshold}
	if err := running.start(nil, func() (tracers.Tracer, error) { return m.Start(cfg) }); err != nil {
		return verdict(err)
	}
	if err := running.Close(); err != nil {
		return "unknown", fmt.Sprintf("started, then failed to close: %v", err)
	}
	return "yes", m.Summary
}

func verdict(err error) (supported, detail string) {
	if errors.Is(err, tracers.ErrUnsupported) {
		return "no", err.Error()
	}
	return "unknown", describe(err, 0)
}
