package matrix

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// testExpect: fsession unsupported and fentry-fexit supported on old:1.
var testExpect = Expectations{
	Mechanisms: []string{"fsession", "fentry-fexit"},
	Kernels: []Kernel{{Selector: "old:1", Packages: Full,
		Supports: map[string]bool{"fsession": false, "fentry-fexit": true}}},
}

const (
	noFsession = "fsession needs BPF_TRACE_FSESSION (Linux 7.0)"
	noIoUring  = "io_uring unavailable"
)

// asExpected is a run of old:1 that matches testExpect: fsession skips
// everything but bad-config, fentry-fexit runs, and the io_uring scenario
// skips for every mechanism because the kernel cannot run its workload.
func asExpected() Run {
	return Run{
		Kernel: testExpect.Kernels[0], ABI: "1.0-amd64", PkgVersion: "1.0-1", Suite: "old",
		Outcomes: &Outcomes{
			Kernel: "1.0-amd64", Accel: "tcg",
			Mechanisms: []string{"fsession", "fentry-fexit"},
			Scenarios:  []string{"bad-config", "zero-threshold", "coverage-io_uring"},
			Status: map[string]map[string]string{
				"fsession":     {"bad-config": Pass, "zero-threshold": Skip, "coverage-io_uring": Skip},
				"fentry-fexit": {"bad-config": Pass, "zero-threshold": Pass, "coverage-io_uring": Skip},
			},
			Reasons: map[string]string{"fsession": noFsession, "coverage-io_uring": noIoUring},
		},
	}
}

// testCrash: fentry-fexit crashed old:1 in the first boot.
var testCrash = Crash{
	Mechanism: "fentry-fexit", Test: "TestScenarios/fentry-fexit/drops",
	Lines: []string{"Oops: int3: 0000 [#1] SMP NOPTI", "Kernel panic - not syncing: Fatal exception in interrupt"},
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Run)
		want   []string // Mismatch.String() of each
	}{
		{"as expected", func(*Run) {}, nil},
		{"supported mechanism skipped as unsupported", func(r *Run) {
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Skip
			r.Outcomes.Reasons["fentry-fexit"] = "EPERM"
		}, []string{"old:1 fentry-fexit: skipped as unsupported where it should run: EPERM"}},
		{"unsupported mechanism ran", func(r *Run) {
			r.Outcomes.Status["fsession"]["zero-threshold"] = Pass
			delete(r.Outcomes.Reasons, "fsession")
		}, []string{
			"old:1 fsession: never skipped as unsupported where it should",
			"old:1 fsession zero-threshold: passed where the mechanism should skip as unsupported: a tracer ran",
		}},
		{"unsupported mechanism ran in one scenario only", func(r *Run) {
			r.Outcomes.Status["fsession"]["zero-threshold"] = Pass
		}, []string{"old:1 fsession zero-threshold: passed where the mechanism should skip as unsupported: a tracer ran"}},
		{"failed scenario", func(r *Run) {
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Fail
			r.Exit = 1
		}, []string{"old:1 fentry-fexit zero-threshold: failed"}},
		{"skip without a reason", func(r *Run) {
			delete(r.Outcomes.Reasons, "coverage-io_uring")
			// fsession's own reason still explains its skip.
		}, []string{"old:1 fentry-fexit coverage-io_uring: skipped with no recorded reason"}},
		{"scenario that does not apply to the mechanism", func(r *Run) {
			r.Outcomes.Scenarios = append(r.Outcomes.Scenarios, "threads")
			r.Outcomes.Status["fentry-fexit"]["threads"] = Pass
			r.Outcomes.Status["fsession"]["threads"] = Skip
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Skip
			r.Outcomes.Reasons["fentry-fexit/zero-threshold"] = "the row checks dropped, which it does not observe"
		}, nil},
		{"supported mechanism whose every row did not apply", func(r *Run) {
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Skip
			r.Outcomes.Reasons["fentry-fexit/zero-threshold"] = "the row checks dropped, which it does not observe"
		}, []string{"old:1 fentry-fexit: never started its tracer where it should run (no scenario that starts one passed or failed)"}},
		{"no scenarios at all", func(r *Run) {
			r.Outcomes.Scenarios, r.Outcomes.Status = nil, map[string]map[string]string{"fsession": {}, "fentry-fexit": {}}
		}, []string{
			"old:1: the run has no scenarios",
			"old:1 fentry-fexit: never started its tracer where it should run (no scenario that starts one passed or failed)",
		}},
		{"outcomes of a mechanism the line does not list", func(r *Run) {
			r.Outcomes.Status["bogus"] = map[string]string{"zero-threshold": Fail}
		}, []string{"old:1 bogus: has outcomes, but is absent from the outcome line's mechanisms"}},
		{"missing cell", func(r *Run) {
			delete(r.Outcomes.Status["fentry-fexit"], "zero-threshold")
		}, []string{"old:1 fentry-fexit: never started its tracer where it should run (no scenario that starts one passed or failed)", "old:1 fentry-fexit zero-threshold: no outcome"}},
		{"scenario left out of the line's list", func(r *Run) {
			r.Outcomes.Scenarios = []string{"bad-config", "coverage-io_uring"}
		}, []string{"old:1 zero-threshold: absent from the outcome line's scenarios"}},
		{"scenario left out of the line's list and one row", func(r *Run) {
			r.Outcomes.Scenarios = []string{"bad-config", "coverage-io_uring"}
			delete(r.Outcomes.Status["fsession"], "zero-threshold")
		}, []string{
			"old:1 zero-threshold: absent from the outcome line's scenarios",
			"old:1 fsession zero-threshold: no outcome",
		}},
		{"unknown status", func(r *Run) {
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = "BENCH"
		}, []string{"old:1 fentry-fexit: never started its tracer where it should run (no scenario that starts one passed or failed)", `old:1 fentry-fexit zero-threshold: unknown status "BENCH"`}},
		{"mechanism without a column", func(r *Run) {
			r.Outcomes.Mechanisms = append(r.Outcomes.Mechanisms, "ftrace-graph")
		}, []string{"old:1 ftrace-graph: ran, but kernels.tsv has no column for it"}},
		{"column without a mechanism", func(r *Run) {
			r.Outcomes.Mechanisms = r.Outcomes.Mechanisms[:1]
		}, []string{"old:1 fentry-fexit: has a column in kernels.tsv, but the run has no outcome for it"}},
		{"kernel warning", func(r *Run) {
			r.KernelErrors = []KernelError{{Test: "TestScenarios/fentry-fexit/drops", Line: "WARNING: kernel/trace/fprobe.c:683"}}
		}, []string{`old:1: the kernel reported "WARNING: kernel/trace/fprobe.c:683" (last test started before it: TestScenarios/fentry-fexit/drops)`}},
		{"kernel warning during a mechanism that warns", func(r *Run) {
			r.Kernel.Warns = map[string]bool{"fentry-fexit": true}
			r.KernelErrors = []KernelError{
				{Test: "TestScenarios/fentry-fexit/drops", Line: "WARNING: kernel/trace/fprobe.c:683"},
				{Test: "TestTraceKeepsUp/fentry-fexit", Line: "RIP: 0010:fprobe_return+0x18e/0x1c0"},
			}
		}, nil},
		{"kernel warning during a mechanism that warns, but another's test", func(r *Run) {
			r.Kernel.Warns = map[string]bool{"fentry-fexit": true}
			r.KernelErrors = []KernelError{{Test: "TestScenarios/fsession/drops", Line: "WARNING: kernel/trace/fprobe.c:683"}}
		}, []string{`old:1: the kernel reported "WARNING: kernel/trace/fprobe.c:683" (last test started before it: TestScenarios/fsession/drops)`}},
		{"a BUG during a mechanism that warns", func(r *Run) {
			r.Kernel.Warns = map[string]bool{"fentry-fexit": true}
			r.KernelErrors = []KernelError{{Test: "TestScenarios/fentry-fexit/drops", Line: "BUG: kernel NULL pointer dereference"}}
		}, []string{`old:1: the kernel reported "BUG: kernel NULL pointer dereference" (last test started before it: TestScenarios/fentry-fexit/drops)`}},
		{"another kernel booted", func(r *Run) {
			r.Outcomes.Kernel = "6.18.44-fc-v595"
		}, []string{"old:1: the guest ran kernel 6.18.44-fc-v595, not the fetched 1.0-amd64"}},
		{"non-zero exit without a failed cell", func(r *Run) {
			r.Exit = 2
		}, []string{"old:1: the scenarios exited with status 2 and no failed cell"}},
		{"whole run skipped", func(r *Run) {
			r.Outcomes.SkipAll = "not root"
		}, []string{"old:1: every test skipped: not root"}},
		{"boot failure", func(r *Run) {
			r.Problem, r.Outcomes, r.Exit = "guest did not boot or died (status 125): vm: error: no boot", nil, 125
		}, []string{"old:1: guest did not boot or died (status 125): vm: error: no boot"}},
		{"no outcomes, no problem", func(r *Run) {
			r.Outcomes = nil
		}, []string{"old:1: no outcome table"}},
		{"crashed mechanism: one mismatch, its disabled cells unchecked", func(r *Run) {
			r.Crashes = []Crash{testCrash}
			r.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Skip
			r.Outcomes.Reasons["fentry-fexit"] = "fentry-fexit disabled by TRACEBENCH_DISABLE: crashed this kernel"
		}, []string{"old:1 fentry-fexit: crashed the kernel during TestScenarios/fentry-fexit/drops: Oops: int3: 0000 [#1] SMP NOPTI; Kernel panic - not syncing: Fatal exception in interrupt"}},
		{"crash, then a boot without an outcome table", func(r *Run) {
			r.Crashes = []Crash{testCrash}
			r.Problem, r.Outcomes, r.Exit = "guest did not boot or died (status 125)", nil, 125
		}, []string{
			"old:1 fentry-fexit: crashed the kernel during TestScenarios/fentry-fexit/drops: Oops: int3: 0000 [#1] SMP NOPTI; Kernel panic - not syncing: Fatal exception in interrupt",
			"old:1: guest did not boot or died (status 125)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := asExpected()
			tc.change(&r)
			var got []string
			for _, m := range Check(testExpect, r) {
				got = append(got, m.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
