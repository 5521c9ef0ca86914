package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"

	"tracebench/internal/testenv"
	"tracebench/matrix"
	"tracebench/tracers"
	"tracebench/workload"
)

func TestMain(m *testing.M) {
	workload.RunHelperIfRequested()
	workload.RunRoleIfRequested(tracerEnv, "tracer runner", runTracer)
	code := m.Run()
	outcomes.print(os.Stdout)
	if os.Getenv(matrix.OutcomesEnv) != "" {
		outcomes.printJSON(os.Stdout)
	}
	os.Exit(code)
}

// outcomes collects PASS / SKIP / FAIL per mechanism and scenario for the
// table printed after the run.
var outcomes = &outcomeTable{status: map[[2]string]string{}, reason: map[string]string{},
	retries: map[[2]string]int{}, missed: map[[2]string]uint64{}}

type outcomeTable struct {
	mu         sync.Mutex
	mechanisms []string
	scenarios  []string
	status     map[[2]string]string // {mechanism, scenario} -> status
	reason     map[string]string    // mechanism or scenario -> first skip reason
	retries    map[[2]string]int    // {mechanism, scenario} -> attempts repeated
	missed     map[[2]string]uint64 // {mechanism, scenario} -> Stats.Missed, all attempts
	skipAllMsg string
}

// track records the outcome of t for (mechanism, scenario) when t ends.
func (o *outcomeTable) track(t *testing.T, mechanism, scenario string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Contains(o.mechanisms, mechanism) {
		o.mechanisms = append(o.mechanisms, mechanism)
	}
	if !slices.Contains(o.scenarios, scenario) {
		o.scenarios = append(o.scenarios, scenario)
	}
	t.Cleanup(func() {
		status := "PASS"
		switch {
		case t.Failed():
			status = "FAIL"
		case t.Skipped():
			status = "SKIP"
		}
		o.mu.Lock()
		o.status[[2]string{mechanism, scenario}] = status
		o.mu.Unlock()
	})
}

// retried records that (mechanism, scenario) repeats its attempt.
func (o *outcomeTable) retried(mechanism, scenario string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.retries[[2]string{mechanism, scenario}]++
}

// counted adds an attempt's Stats.Missed to (mechanism, scenario), when
// the mechanism observes it.
func (o *outcomeTable) counted(mechanism, scenario string, s tracers.Stats) {
	if s.Unknown.Has(tracers.FieldMissed) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.missed[[2]string{mechanism, scenario}] += s.Missed
}

// skip skips t because the kernel lacks what the mechanism needs; the
// first reason is kept per mechanism.
func (o *outcomeTable) skip(t *testing.T, mechanism, scenario, reason string) {
	o.skipKeyed(t, mechanism, mechanism+"/"+scenario, reason)
}

// skipScenario skips t because the kernel cannot run the scenario's
// workload, whatever the mechanism; the reason is kept per scenario.
func (o *outcomeTable) skipScenario(t *testing.T, mechanism, scenario, reason string) {
	o.skipKeyed(t, scenario, mechanism+"/"+scenario, reason)
}

// skipCell skips t because the scenario does not apply to the mechanism
// (the reason says why); the reason is kept as "mechanism/scenario".
func (o *outcomeTable) skipCell(t *testing.T, mechanism, scenario, reason string) {
	o.skipKeyed(t, mechanism+"/"+scenario, mechanism+"/"+scenario, reason)
}

func (o *outcomeTable) skipKeyed(t *testing.T, key, label, reason string) {
	o.mu.Lock()
	if _, ok := o.reason[key]; !ok {
		o.reason[key] = reason
	}
	o.mu.Unlock()
	t.Skipf("%s: %s", label, reason)
}

// skipAll skips the whole run with reason.
func (o *outcomeTable) skipAll(t *testing.T, reason string) {
	o.mu.Lock()
	o.skipAllMsg = reason
	o.mu.Unlock()
	t.Skip(reason)
}

func (o *outcomeTable) print(w io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.status) == 0 && o.skipAllMsg == "" {
		return
	}
	out := o.outcomes()
	if err := out.WriteTable(w); err != nil {
		fmt.Fprintf(os.Stderr, "writing the outcome table: %v\n", err)
	}
}

// printJSON prints the table as one line for the kernel matrix, in the
// form matrix.ParseOutcomes reads (matrix.Outcomes is the contract).
func (o *outcomeTable) printJSON(w io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	raw, err := json.Marshal(o.outcomes())
	if err != nil {
		raw = []byte(fmt.Sprintf(`{"error": %q}`, err.Error()))
	}
	fmt.Fprintf(w, "%s%s\n", matrix.OutcomesPrefix, raw)
}

// outcomes is the table as matrix.Outcomes; o.mu is held.
func (o *outcomeTable) outcomes() matrix.Outcomes {
	out := matrix.Outcomes{
		Kernel: tracers.KernelRelease(), Accel: testenv.Accel(), CPUs: runtime.NumCPU(),
		Mechanisms: o.mechanisms, Scenarios: o.scenarios,
		Status: map[string]map[string]string{}, Reasons: o.reason, SkipAll: o.skipAllMsg,
	}
	for key, s := range o.status {
		if out.Status[key[0]] == nil {
			out.Status[key[0]] = map[string]string{}
		}
		out.Status[key[0]][key[1]] = s
	}
	out.Retries = nested(o.retries)
	out.Missed = nested(o.missed)
	if out.Missed == nil { // recorded, none observed: not an old file's null
		out.Missed = map[string]map[string]uint64{}
	}
	return out
}

// nested turns {mechanism, scenario} keys into the JSON's two levels; nil
// when m is empty.
func nested[V any](m map[[2]string]V) map[string]map[string]V {
	var out map[string]map[string]V
	for key, v := range m {
		if out == nil {
			out = map[string]map[string]V{}
		}
		if out[key[0]] == nil {
			out[key[0]] = map[string]V{}
		}
		out[key[0]][key[1]] = v
	}
	return out
}
