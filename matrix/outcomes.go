package matrix

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// OutcomesPrefix starts the line the scenario test binary prints with its
// outcome table as JSON when OutcomesEnv is set (scenarios/outcomes_test.go).
const (
	OutcomesPrefix = "tracebench-outcomes: "
	OutcomesEnv    = "TRACEBENCH_OUTCOMES_JSON"
)

// Status values of a cell, as the scenario table prints them.
const (
	Pass = "PASS"
	Skip = "SKIP"
	Fail = "FAIL"
)

// Outcomes is one run's outcome table.
type Outcomes struct {
	Kernel string `json:"kernel"` // uname -r in the guest
	Accel  string `json:"accel"`  // kvm or tcg
	// CPUs is the guest's CPU count (0 in outcome files from before it
	// was recorded).
	CPUs       int      `json:"cpus,omitempty"`
	Mechanisms []string `json:"mechanisms"`
	Scenarios  []string `json:"scenarios"`
	// Status is PASS, SKIP or FAIL by mechanism, then scenario.
	Status map[string]map[string]string `json:"status"`
	// Reasons holds the first skip reason per mechanism (the kernel lacks
	// what it needs) or per scenario (the kernel cannot run its workload).
	Reasons map[string]string `json:"reasons"`
	// Retries holds, by mechanism then scenario, how often a cell's run was
	// repeated because the kernel skipped program runs the row does not
	// expect (absent: none); its Status is that of the last attempt.
	Retries map[string]map[string]int `json:"retries,omitempty"`
	// Missed holds, by mechanism then scenario, the program runs the
	// kernel skipped (Stats.Missed, system-wide) summed over the cell's
	// attempts; absent for a mechanism that does not observe them. Nil
	// in outcome files from before it was recorded.
	Missed map[string]map[string]uint64 `json:"missed"`
	// SkipAll is set when the whole run was skipped (not root).
	SkipAll string `json:"skip_all"`
}

// ParseOutcomes finds the outcome line in a run's output. The last one
// counts: a run prints one, and anything after it is not the test binary's.
func ParseOutcomes(r io.Reader) (*Outcomes, error) {
	var last string
	err := EachLine(r, func(line string) {
		if rest, ok := strings.CutPrefix(line, OutcomesPrefix); ok {
			last = rest
		}
	})
	if err != nil {
		return nil, err
	}
	if last == "" {
		return nil, fmt.Errorf("no %q line in the output", strings.TrimSpace(OutcomesPrefix))
	}
	var o Outcomes
	dec := json.NewDecoder(strings.NewReader(last))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("outcome line: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("outcome line: data after its JSON object at byte %d", dec.InputOffset())
	}
	return &o, nil
}

// EachLine calls each with every line of r, without its line ending
// ("\n" or "\r\n"), however long: a guest's output may hold a line of
// megabytes before the outcome line, which itself holds every reason.
func EachLine(r io.Reader, each func(string)) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			each(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// allScenarios returns the line's scenarios, then those it leaves out but
// some mechanism's row has, by name.
func (o *Outcomes) allScenarios() []string {
	extra := map[string]bool{}
	for _, row := range o.Status {
		for sc := range row {
			extra[sc] = true
		}
	}
	for _, sc := range o.Scenarios {
		delete(extra, sc)
	}
	return append(slices.Clone(o.Scenarios), slices.Sorted(maps.Keys(extra))...)
}

// cell returns the status of (mechanism, scenario), "" when not run.
func (o *Outcomes) cell(mechanism, scenario string) string {
	return o.Status[mechanism][scenario]
}

// skippedAsUnsupported reports whether the mechanism was skipped because
// the kernel lacks what it needs: such a skip records a reason keyed by
// the mechanism.
func (o *Outcomes) skippedAsUnsupported(mechanism string) bool {
	_, skipped := o.Reasons[mechanism]
	return skipped
}

// ranTracer reports whether the mechanism's tracer got past its kernel
// check in some scenario: a scenario that starts one passed or failed.
func (o *Outcomes) ranTracer(mechanism string) bool {
	for sc, s := range o.Status[mechanism] {
		if (s == Pass || s == Fail) && !slices.Contains(runsNoTracer, sc) {
			return true
		}
	}
	return false
}

// skipReason says why (mechanism, scenario) was skipped: because the
// scenario does not apply to the mechanism (keyed "mechanism/scenario"),
// the kernel cannot run its workload (keyed by scenario; the harness
// checks that before the mechanism) or lacks the mechanism.
func (o *Outcomes) skipReason(mechanism, scenario string) string {
	for _, key := range []string{mechanism + "/" + scenario, scenario} {
		if r, ok := o.Reasons[key]; ok {
			return r
		}
	}
	return o.Reasons[mechanism]
}

// WriteTable writes the outcome table as the scenario binary prints it:
// a line naming the kernel, a row per scenario with a column per
// mechanism ("PASS(2)": the status of attempt 2), then each skip reason.
func (o *Outcomes) WriteTable(w io.Writer) error {
	cpus := "" // unknown in outcome files from before it was recorded
	if o.CPUs > 0 {
		cpus = fmt.Sprintf(", %d CPUs", o.CPUs)
	}
	fmt.Fprintf(w, "\ntracebench scenarios on Linux %s%s, %s\n", o.Kernel, cpus, Emulation(o.Accel))
	if o.SkipAll != "" {
		_, err := fmt.Fprintf(w, "all SKIP: %s\n", o.SkipAll)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(o.Mechanisms, "\t"))
	for _, sc := range o.allScenarios() {
		row := []string{sc}
		for _, m := range o.Mechanisms {
			row = append(row, o.statusOf(m, sc))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(o.Retries) > 0 {
		fmt.Fprintf(w, "(n): the cell's status is that of attempt n; the earlier ones were repeated because the "+
			"kernel skipped program runs the row does not expect\n")
	}
	var cells []string
	for _, m := range o.Mechanisms {
		for _, sc := range o.allScenarios() {
			cells = append(cells, m+"/"+sc)
		}
	}
	// One line per reason, naming every key skipped for it.
	var reasons []string
	keys := map[string][]string{}
	for _, key := range slices.Concat(o.Mechanisms, o.allScenarios(), cells) {
		if r, ok := o.Reasons[key]; ok {
			if keys[r] == nil {
				reasons = append(reasons, r)
			}
			keys[r] = append(keys[r], key)
		}
	}
	for _, r := range reasons {
		if _, err := fmt.Fprintf(w, "SKIP %s: %s\n", strings.Join(keys[r], ", "), r); err != nil {
			return err
		}
	}
	return nil
}

// statusOf is a cell as the table shows it: "-" when not run, "PASS(2)"
// when it passed at its second attempt.
func (o *Outcomes) statusOf(mechanism, scenario string) string {
	s := o.cell(mechanism, scenario)
	if s == "" {
		return "-"
	}
	if n := o.Retries[mechanism][scenario]; n > 0 {
		return fmt.Sprintf("%s(%d)", s, n+1)
	}
	return s
}

// Emulation labels a run by its accelerator (vm/run.sh's TRACEBENCH_ACCEL
// in the guest).
func Emulation(accel string) string {
	if accel != "" {
		return "guest under " + strings.ToUpper(accel)
	}
	return "not a tracebench guest (TRACEBENCH_ACCEL unset)"
}
