package matrix

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// TableTest is the scenario binary's test whose subtests are the
// mechanisms (scenarios/scenarios_test.go), the one a kernel's run
// divides between guests; MechanismsFlag, given to the scenario binary,
// limits it to a comma-separated list of them.
const (
	TableTest      = "TestScenarios"
	MechanismsFlag = "tracebench.mechanisms"
)

// Units of a kernel's run that Durations and a Part name besides
// TableTest's mechanisms ("TestScenarios/<mechanism>"): the CLI's test
// binary, and the scenario binary's tests other than TableTest.
const (
	UnitCLI   = "cli"
	UnitOther = "scenarios-other"
)

// UnitOf is the Durations key of mechanism's TableTest rows.
func UnitOf(mechanism string) string { return TableTest + "/" + mechanism }

// CLIUnitOf is the Durations key of one top-level test of the CLI's
// binary; UnitCLI's figure is all of them together. Split gives each test
// with a figure its own unit, and UnitCLI the tests without one.
func CLIUnitOf(test string) string { return UnitCLI + "/" + test }

// Durations are the seconds each unit of a run took in its guest, as its
// tests reported them (`--- PASS: TestScenarios/fsession (8.06s)`).
type Durations map[string]float64

// Part is what one guest of a kernel's run runs.
type Part struct {
	// CLI: the CLI's test binary, with CLIArgs: all its tests (none),
	// those named (-test.run) or all but those other parts run
	// (-test.skip).
	CLI     bool
	CLIArgs []string
	// Other: the scenario binary's tests other than TableTest.
	Other bool
	// Mechanisms are TableTest's mechanisms this guest runs, in the
	// registry's order.
	Mechanisms []string
	// Seconds is what the part is expected to take, from the weights.
	Seconds float64
	// cliRest: the part runs the CLI tests no part names; cliTests are
	// those it runs by name.
	cliRest  bool
	cliTests []string
}

// Plan is what a kernel's run runs, before Split divides it over guests.
type Plan struct {
	// Mechanisms are TableTest's mechanisms to run, in the registry's order.
	Mechanisms []string
	// CLI: the CLI's test binary too; Other: the scenario binary's tests
	// other than TableTest too.
	CLI, Other bool
}

// Split divides plan over at most guests parts of about equal expected
// duration, the longest units first, each to the part expected to end
// first (the LPT rule). A unit weights has no figure for counts as the
// median of those it has, or 1 s. Every unit is in exactly one part; no
// part is empty.
func Split(plan Plan, guests int, weights Durations) ([]Part, error) {
	if guests < 1 {
		return nil, fmt.Errorf("guests %d: want at least 1", guests)
	}
	var units []string
	if plan.Other {
		units = append(units, UnitOther)
	}
	cliTests := testsOf(weights)
	if plan.CLI {
		units = append(units, UnitCLI)
		for _, test := range cliTests {
			units = append(units, CLIUnitOf(test))
		}
	}
	for _, m := range plan.Mechanisms {
		units = append(units, UnitOf(m))
	}
	if len(units) == 0 {
		return nil, fmt.Errorf("nothing to run: no mechanism, neither the CLI's tests nor the other scenario tests")
	}
	fallback := median(slices.Collect(maps.Values(weights)))
	weight := func(unit string) float64 {
		w, ok := weights[unit]
		switch {
		case ok && unit == UnitCLI: // the tests without a figure of their own
			for _, test := range cliTests {
				w -= weights[CLIUnitOf(test)]
			}
			return max(w, 0)
		case ok:
			return w
		}
		return fallback
	}
	// Stable: equal weights keep the units' order, so a plan repeats.
	slices.SortStableFunc(units, func(a, b string) int { return cmp.Compare(weight(b), weight(a)) })
	parts := make([]Part, min(guests, len(units)))
	for _, u := range units {
		p := &parts[0]
		for i := range parts {
			if parts[i].Seconds < p.Seconds {
				p = &parts[i]
			}
		}
		p.add(u, weight(u))
	}
	setCLIArgs(parts)
	for i := range parts {
		parts[i].Mechanisms = inOrder(parts[i].Mechanisms, plan.Mechanisms)
	}
	return parts, nil
}

func (p *Part) add(unit string, seconds float64) {
	p.Seconds += seconds
	test, isTest := strings.CutPrefix(unit, UnitCLI+"/")
	switch {
	case unit == UnitCLI:
		p.CLI, p.cliRest = true, true
	case isTest:
		p.CLI, p.cliTests = true, append(p.cliTests, test)
	case unit == UnitOther:
		p.Other = true
	default:
		p.Mechanisms = append(p.Mechanisms, strings.TrimPrefix(unit, TableTest+"/"))
	}
}

// setCLIArgs selects each part's CLI tests: the part with UnitCLI runs
// every test the others do not name (a test new since the weights too).
func setCLIArgs(parts []Part) {
	for i := range parts {
		p := &parts[i]
		var others []string
		for j, o := range parts {
			if j != i {
				others = append(others, o.cliTests...)
			}
		}
		switch {
		case p.cliRest && len(others) > 0:
			p.CLIArgs = []string{"-test.skip=" + anchored(others)}
		case !p.cliRest && p.CLI:
			p.CLIArgs = []string{"-test.run=" + anchored(p.cliTests)}
		}
	}
}

// anchored is a -test.run pattern matching the top-level tests named.
func anchored(tests []string) string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	slices.Sort(quoted)
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// testsOf returns the CLI tests weights has a figure of, sorted.
func testsOf(weights Durations) []string {
	var tests []string
	for unit := range weights {
		if test, ok := strings.CutPrefix(unit, UnitCLI+"/"); ok {
			tests = append(tests, test)
		}
	}
	slices.Sort(tests)
	return tests
}

// ScenarioArgs are the scenario binary's arguments selecting the part's
// tests from a run of every mechanism of all; run is false when the part
// runs none of them.
func (p Part) ScenarioArgs(all []string) (args []string, run bool) {
	switch {
	case !p.Other && len(p.Mechanisms) == 0:
		return nil, false
	case !p.Other:
		args = append(args, "-test.run=^"+TableTest+"$")
	case len(p.Mechanisms) == 0:
		return []string{"-test.skip=^" + TableTest + "$"}, true
	}
	if len(p.Mechanisms) < len(all) {
		args = append(args, "-"+MechanismsFlag+"="+strings.Join(p.Mechanisms, ","))
	}
	return args, true
}

// String names the part's units, e.g. "cli, TestScenarios/{fsession,ftrace-graph}".
func (p Part) String() string {
	var names []string
	switch {
	case p.CLI && len(p.CLIArgs) == 0:
		names = append(names, UnitCLI)
	case p.CLI:
		names = append(names, UnitCLI+" "+strings.Join(p.CLIArgs, " "))
	}
	if p.Other {
		names = append(names, UnitOther)
	}
	if len(p.Mechanisms) > 0 {
		names = append(names, TableTest+"/{"+strings.Join(p.Mechanisms, ",")+"}")
	}
	return strings.Join(names, ", ")
}

// inOrder returns names sorted by their index in order.
func inOrder(names, order []string) []string {
	return slices.SortedFunc(slices.Values(names), func(a, b string) int {
		return cmp.Compare(slices.Index(order, a), slices.Index(order, b))
	})
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 1
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// MergeOutcomes makes one outcome table of the tables of a kernel's
// parts: every cell from the part that ran it, mechanisms in order's
// order (then any other, as found), scenarios as the parts list them.
// Parts that ran another kernel, or the same cell twice, are an error.
func MergeOutcomes(parts []*Outcomes, order []string) (*Outcomes, error) {
	var out *Outcomes
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &Outcomes{Kernel: p.Kernel, Accel: p.Accel, CPUs: p.CPUs, Status: map[string]map[string]string{},
				Reasons: map[string]string{}, Missed: map[string]map[string]uint64{}}
		}
		if p.Kernel != out.Kernel {
			return nil, fmt.Errorf("parts ran kernels %s and %s", out.Kernel, p.Kernel)
		}
		if err := out.add(p); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return nil, fmt.Errorf("no part has an outcome table")
	}
	out.Mechanisms = inOrder(out.Mechanisms, append(slices.Clone(order), out.Mechanisms...))
	return out, nil
}

// add merges p's cells into o.
func (o *Outcomes) add(p *Outcomes) error {
	o.Mechanisms = appendNew(o.Mechanisms, p.Mechanisms...)
	o.Scenarios = appendNew(o.Scenarios, p.Scenarios...)
	if o.SkipAll == "" {
		o.SkipAll = p.SkipAll
	}
	for key, reason := range p.Reasons {
		if _, ok := o.Reasons[key]; !ok {
			o.Reasons[key] = reason
		}
	}
	for m, row := range p.Status {
		for sc, status := range row {
			if prev := o.cell(m, sc); prev != "" {
				return fmt.Errorf("%s %s ran in two parts (%s, %s)", m, sc, prev, status)
			}
			setCell(&o.Status, m, sc, status)
		}
	}
	for m, row := range p.Retries {
		for sc, n := range row {
			setCell(&o.Retries, m, sc, n)
		}
	}
	for m, row := range p.Missed {
		for sc, n := range row {
			setCell(&o.Missed, m, sc, n)
		}
	}
	return nil
}

func setCell[V any](table *map[string]map[string]V, m, sc string, v V) {
	if *table == nil {
		*table = map[string]map[string]V{}
	}
	if (*table)[m] == nil {
		(*table)[m] = map[string]V{}
	}
	(*table)[m][sc] = v
}

func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
