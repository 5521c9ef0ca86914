package docs

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"tracebench/matrix"
	"tracebench/scenarios"
	"tracebench/tracers"
	"tracebench/workload"
)

// scenarioTable is the Markdown table of the scenario rows the code
// declares (scenarios.Rows): each row's workload, tracer configuration
// and what it asserts.
func scenarioTable() string {
	var b strings.Builder
	b.WriteString("| scenario | workload | tracer configuration | what is asserted |\n| --- | --- | --- | --- |")
	for _, r := range scenarios.Rows() {
		fmt.Fprintf(&b, "\n| %s | %s | %s | %s |", r.Name, planText(r.Plan), configText(r.Config(helperMark)),
			strings.ReplaceAll(r.Doc, "|", `\|`))
	}
	return b.String()
}

// helperMark stands for the helper's TGID when a row's configuration is
// shown.
const helperMark = 1

// planText says what a workload plan's steps read, in order.
func planText(p workload.Plan) string {
	if len(p) == 0 {
		return "none (Start and Close only)"
	}
	steps := make([]string, len(p))
	for i, s := range p {
		steps[i] = stepText(s)
	}
	return strings.Join(steps, "; ")
}

// stepText says what one step reads, e.g. "1000 file-read of 64 B on 4
// threads".
func stepText(s workload.Step) string {
	text := fmt.Sprintf("%d %s of %s", s.Count, s.Op, bytesText(s.Size))
	switch {
	case s.Spawn == workload.SpawnEarly:
		text += fmt.Sprintf(" on %d threads created before attach", s.Threads)
	case s.Spawn == workload.SpawnFresh:
		text += fmt.Sprintf(" on %d threads one after another", s.Threads)
	case s.Threads > 1:
		text += fmt.Sprintf(" on %d threads", s.Threads)
	}
	if s.Blocks() {
		text += fmt.Sprintf(", answered %v after blocking", s.Delay)
	}
	if s.Gap > 0 {
		text += fmt.Sprintf(", %v apart", s.Gap)
	}
	return text
}

// configText says how a row configures the tracer for the helper.
func configText(c tracers.Config) string {
	var parts []string
	switch c.TGID {
	case 0:
		parts = append(parts, "no TGID filter")
	case helperMark:
		parts = append(parts, "the helper's TGID")
	case workload.NoProcess:
		parts = append(parts, "a TGID no process has")
	}
	if c.TGID != 0 || c.Threshold != 0 {
		parts = append(parts, "threshold "+durationText(c.Threshold))
	}
	if c.RingBufferBytes != 0 {
		parts = append(parts, "ring buffer "+bytesText(c.RingBufferBytes))
	}
	if c.KretprobeMaxActive != 0 {
		parts = append(parts, fmt.Sprintf("maxactive %d", c.KretprobeMaxActive))
	}
	if c.ThreadMapEntries != 0 {
		parts = append(parts, fmt.Sprintf("per-thread map of %d entries", c.ThreadMapEntries))
	}
	return strings.Join(parts, ", ")
}

func durationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// bytesText writes n bytes in the largest binary unit that divides it.
func bytesText(n int) string {
	for _, u := range []struct {
		name string
		size int
	}{{"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// missed is the Markdown table of the program runs the kernel skipped
// (Stats.Missed, system-wide, summed over a cell's attempts) in the
// outcome file at path: the cells with any, by mechanism.
func (s *source) missed(path string) (string, error) {
	raw, err := s.read(path)
	if err != nil {
		return "", err
	}
	r, err := matrix.ReadShard(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if r.Outcomes == nil || r.Outcomes.Missed == nil {
		return "", fmt.Errorf("%s: no missed counts", path)
	}
	o := r.Outcomes
	var b strings.Builder
	b.WriteString("| mechanism | runs missed, by scenario |\n| --- | --- |")
	for _, m := range o.Mechanisms {
		var cells []string
		for _, sc := range o.Scenarios {
			if n := o.Missed[m][sc]; n > 0 {
				cells = append(cells, fmt.Sprintf("%s %d", sc, n))
			}
		}
		if _, observes := o.Missed[m]; !observes {
			cells = []string{"no count (not observed, or not run)"}
		}
		if len(cells) == 0 {
			cells = []string{"none"}
		}
		fmt.Fprintf(&b, "\n| %s | %s |", m, strings.Join(cells, ", "))
	}
	return b.String(), nil
}
