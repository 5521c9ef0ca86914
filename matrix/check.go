package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Run is what one kernel of the matrix produced.
type Run struct {
	// Kernel is the kernels.tsv row; outcome files hold only its selector.
	Kernel Kernel `json:"-"`
	// Origin is the matrix run that produced this one.
	Origin Origin
	// ABI, PkgVersion and Suite name the kernel that was fetched (its
	// tracebench-kernel.env); empty when fetching failed.
	ABI, PkgVersion, Suite string
	// Problem says why the run has no outcome table (fetch failed, guest
	// did not boot, timed out, ...); empty when it has one.
	Problem string
	// Exit is the last guest command's exit status (vm/run.sh's
	// conventions: 124 timeout, 125 no status from the guest).
	Exit int
	// Duration is how long the kernel's run took, its guests side by
	// side, boots included.
	Duration time.Duration
	// Guests is how many guests the run was divided over (0 in outcome
	// files from before runs were divided: one).
	Guests int `json:",omitempty"`
	// Durations are the seconds each unit took in its guest, by which the
	// next run of the kernel divides its units between guests.
	Durations Durations `json:",omitempty"`
	// CLI is the CLI test binary's result, where the run had it.
	CLI *CLIResult `json:",omitempty"`
	// Host is what else the host was doing meanwhile.
	Host HostLoad
	// Crashes are the mechanisms that crashed the kernel, in the order of
	// the boots they ended; each later boot ran without them, so Outcomes
	// (the last boot's) hold no outcome of theirs.
	Crashes []Crash
	// KernelErrors are the kernel's error reports (WARNING, BUG, Oops...)
	// on the console of a boot that still finished its tests.
	KernelErrors []KernelError
	Outcomes     *Outcomes
}

// CLIResult is how the CLI's test binary ended in a kernel's run.
type CLIResult struct {
	Exit int
	// Failed are its top-level tests that failed.
	Failed []string `json:",omitempty"`
}

// KernelError is one console line of a kernel error report and the last
// test started before it was read (the console and the tests' output are
// separate streams, so the line may come from a test started before).
type KernelError struct {
	Test, Line string
}

// WarningMarker starts the console line of a kernel WARNING report, which
// leaves the kernel running.
const WarningMarker = "WARNING:"

// Expected reports whether e is a line of a WARNING report (its
// "WARNING:" or "RIP:" line) made while a test of a mechanism ran that
// kernels.tsv says makes this kernel warn (Kernel.Warns). A test's
// mechanism is an element of its name (TestScenarios/M/row, TestX/M).
func (r Run) Expected(e KernelError) bool {
	if !strings.HasPrefix(e.Line, WarningMarker) && !strings.HasPrefix(e.Line, "RIP:") {
		return false
	}
	return slices.ContainsFunc(strings.Split(e.Test, "/"), func(part string) bool { return r.Kernel.Warns[part] })
}

// Crash is a kernel crash while a mechanism's test was running.
type Crash struct {
	Mechanism string
	// Test is the test that was running, e.g.
	// TestCleanupOnSignal/kprobe-session/SIGINT.
	Test string
	// Lines are the console's first crash lines (Oops, RIP, panic).
	Lines []string
}

func (c Crash) what() string {
	return fmt.Sprintf("crashed the kernel during %s: %s", c.Test, strings.Join(c.Lines, "; "))
}

// Crashed returns mechanism's crash on r's kernel, if it crashed it.
func (r Run) Crashed(mechanism string) (Crash, bool) {
	i := slices.IndexFunc(r.Crashes, func(c Crash) bool { return c.Mechanism == mechanism })
	if i < 0 {
		return Crash{}, false
	}
	return r.Crashes[i], true
}

// HostLoad describes the host while one kernel ran.
type HostLoad struct {
	OtherGuestsMax int     // most QEMU processes of others seen at once
	LoadMean       float64 // mean 1-minute load average over the samples
	Samples        int
}

// Mismatch is one way a run differs from its expectations. Mechanism and
// Scenario are empty when it concerns the whole run or mechanism.
type Mismatch struct {
	Kernel, Mechanism, Scenario string
	What                        string
}

func (m Mismatch) String() string {
	where := m.Kernel
	for _, part := range []string{m.Mechanism, m.Scenario} {
		if part != "" {
			where += " " + part
		}
	}
	return where + ": " + m.What
}

// runsNoTracer are the scenarios that start no tracer on any kernel (every
// configuration they try is refused before the kernel is asked), so they
// pass where a mechanism is unsupported too.
var runsNoTracer = []string{"bad-config"}

// Check compares a run with its kernel's expectations for the mechanisms
// of exp; it returns nothing when the run is as expected. A mechanism that
// crashed the kernel is one mismatch, and its cells are not checked: the
// boot they come from ran without it.
func Check(exp Expectations, r Run) []Mismatch {
	mismatch := func(mechanism, scenario, format string, args ...any) Mismatch {
		return Mismatch{Kernel: r.Kernel.Selector, Mechanism: mechanism, Scenario: scenario,
			What: fmt.Sprintf(format, args...)}
	}
	var out []Mismatch
	for _, c := range r.Crashes {
		out = append(out, mismatch(c.Mechanism, "", "%s", c.what()))
	}
	for _, e := range r.KernelErrors {
		if !r.Expected(e) {
			out = append(out, mismatch("", "", "the kernel reported %q (last test started before it: %s)", e.Line, orDash(e.Test)))
		}
	}
	if r.CLI != nil && r.CLI.Exit != 0 {
		out = append(out, mismatch("", "", "the CLI tests exited with status %d, failed: %s", r.CLI.Exit,
			orDash(strings.Join(r.CLI.Failed, ", "))))
	}
	if problem := runProblem(r); problem != "" {
		return append(out, mismatch("", "", "%s", problem))
	}
	if r.ABI != "" && r.Outcomes.Kernel != r.ABI {
		out = append(out, mismatch("", "", "the guest ran kernel %s, not the fetched %s", r.Outcomes.Kernel, r.ABI))
	}
	out = append(out, checkMechanismSets(exp, r, mismatch)...)
	if len(r.Outcomes.allScenarios()) == 0 {
		out = append(out, mismatch("", "", "the run has no scenarios"))
	}
	for m := range r.Outcomes.Status { // a table column missing from the line is reported above
		if !slices.Contains(r.Outcomes.Mechanisms, m) && !slices.Contains(exp.Mechanisms, m) {
			out = append(out, mismatch(m, "", "has outcomes, but is absent from the outcome line's mechanisms"))
		}
	}
	for _, sc := range r.Outcomes.allScenarios() {
		if !slices.Contains(r.Outcomes.Scenarios, sc) {
			out = append(out, mismatch("", sc, "absent from the outcome line's scenarios"))
		}
	}
	for _, m := range exp.Mechanisms {
		_, crashed := r.Crashed(m)
		if slices.Contains(r.Outcomes.Mechanisms, m) && !crashed {
			out = append(out, checkMechanism(r, m, mismatch)...)
		}
	}
	if failed := countStatus(r.Outcomes, Fail); r.Exit != 0 && failed == 0 {
		out = append(out, mismatch("", "", "the scenarios exited with status %d and no failed cell", r.Exit))
	}
	return out
}

// runProblem says why r has no outcome table to check, or "".
func runProblem(r Run) string {
	switch o := r.Outcomes; {
	case r.Problem != "":
		return r.Problem
	case o == nil:
		return "no outcome table"
	case o.SkipAll != "":
		return "every test skipped: " + o.SkipAll
	}
	return ""
}

type mismatchFunc func(mechanism, scenario, format string, args ...any) Mismatch

// checkMechanismSets: the run's mechanisms are exactly the table's, so
// that a mechanism added to the registry needs a stated expectation.
func checkMechanismSets(exp Expectations, r Run, mismatch mismatchFunc) []Mismatch {
	var out []Mismatch
	for _, m := range r.Outcomes.Mechanisms {
		if !slices.Contains(exp.Mechanisms, m) {
			out = append(out, mismatch(m, "", "ran, but kernels.tsv has no column for it"))
		}
	}
	for _, m := range exp.Mechanisms {
		if !slices.Contains(r.Outcomes.Mechanisms, m) {
			out = append(out, mismatch(m, "", "has a column in kernels.tsv, but the run has no outcome for it"))
		}
	}
	return out
}

// checkMechanism holds mechanism m's cells to Kernel.Supports[m].
func checkMechanism(r Run, m string, mismatch mismatchFunc) []Mismatch {
	o, supported := r.Outcomes, r.Kernel.Supports[m]
	var out []Mismatch
	switch {
	case supported && o.skippedAsUnsupported(m):
		out = append(out, mismatch(m, "", "skipped as unsupported where it should run: %s", o.Reasons[m]))
	case supported && !o.ranTracer(m):
		out = append(out, mismatch(m, "", "never started its tracer where it should run (no scenario that starts one passed or failed)"))
	case !supported && !o.skippedAsUnsupported(m):
		out = append(out, mismatch(m, "", "never skipped as unsupported where it should"))
	}
	for _, sc := range o.allScenarios() {
		if what := checkCell(o, m, sc, supported); what != "" {
			out = append(out, mismatch(m, sc, "%s", what))
		}
	}
	return out
}

// checkCell returns what is wrong with one cell, or "".
func checkCell(o *Outcomes, m, sc string, supported bool) string {
	switch o.cell(m, sc) {
	case Fail:
		return "failed"
	case Pass:
		if !supported && !slices.Contains(runsNoTracer, sc) {
			return "passed where the mechanism should skip as unsupported: a tracer ran"
		}
	case Skip:
		if o.skipReason(m, sc) == "" {
			return "skipped with no recorded reason"
		}
	case "":
		return "no outcome"
	default:
		return fmt.Sprintf("unknown status %q", o.cell(m, sc))
	}
	return ""
}

func countStatus(o *Outcomes, status string) int {
	n := 0
	for _, row := range o.Status {
		for _, s := range row {
			if s == status {
				n++
			}
		}
	}
	return n
}
