package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Files the report links to, relative to its directory.
const (
	RawFile                = "raw.txt"
	MetaFile               = "meta.txt"
	ChartFile              = "overhead.svg"
	BenchstatBaselineFile  = "benchstat-vs-baseline.txt"
	BenchstatReferenceFile = "benchstat-vs-" + Reference + ".txt"
)

// Label names the kernel and the emulation, which every figure depends on.
func (s *Summary) Label() string {
	return fmt.Sprintf("Linux %s, %s", orUnknown(s.Kernel), s.EmulationName())
}

// EmulationName spells out Emulation.
func (s *Summary) EmulationName() string {
	switch s.Emulation {
	case "tcg":
		return "QEMU guest under TCG (software emulation)"
	case "kvm":
		return "QEMU guest under KVM"
	case "none":
		return "not a tracebench guest (bare metal or the host's own VM)"
	}
	return "emulation unknown"
}

// Guest reports whether the figures come from an emulated guest, where
// only ratios within the run carry over.
func (s *Summary) Guest() bool { return s.Emulation == "tcg" || s.Emulation == "kvm" }

// WriteMarkdown writes the report's summary. regenerate is the command
// that regenerates the report (left out if ""); meta is nil without
// meta.txt. The files it lists are those of a report with an overhead
// (Summary.HasOverhead): the chart and benchstat's comparisons exist only
// then.
func WriteMarkdown(w io.Writer, s *Summary, meta Meta, regenerate string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# vfs_read tracing overhead: %s\n\n", s.Label())
	writeNoOverhead(&b, s)
	if len(s.Rows) > 0 {
		writeCaveat(&b, s)
	}
	writeRun(&b, s, meta)
	writeOverhead(&b, s)
	writeConsumer(&b, s)
	writeBody(&b, s)
	writeOutcomes(&b, s)
	writeFiles(&b, s, meta, regenerate)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNoOverhead says first why a report has no overhead, chart or
// comparison, e.g. on a kernel that lacks every mechanism.
func writeNoOverhead(b *strings.Builder, s *Summary) {
	why := s.NoOverhead()
	if why == "" {
		return
	}
	fmt.Fprintf(b, "> **%s**", strings.ToUpper(why[:1])+why[1:])
	var see []string
	if len(s.Skipped) > 0 {
		see = append(see, "*Skipped*")
	}
	if len(s.Failed) > 0 {
		see = append(see, "*Failed*")
	}
	switch len(see) {
	case 1:
		fmt.Fprintf(b, " (%s below says why)", see[0])
	case 2:
		fmt.Fprintf(b, " (%s below say why)", strings.Join(see, " and "))
	}
	b.WriteString(", so this report has no overhead over baseline, no chart and no benchstat comparison.")
	if len(s.Rows) == 0 {
		if s.HasBase {
			b.WriteString(" Only the baseline was measured.")
		} else {
			b.WriteString(" Nothing was measured.")
		}
	}
	b.WriteString("\n\n")
}

func writeCaveat(b *strings.Builder, s *Summary) {
	if s.Emulation == "tcg" {
		fmt.Fprintf(b, "> Every figure below was measured in a %s. TCG translates and emulates every guest instruction, about 10x slower than bare metal and not uniformly so: compare mechanisms with each other and with the baseline **within this report** (differences, ratios, p-values), never its nanoseconds with another machine. See bench/README.md for bare-metal anchors.\n\n", s.EmulationName())
		return
	}
	fmt.Fprintf(b, "> Every figure below was measured on %s. Compare mechanisms within this report; absolute nanoseconds hold for this machine only.\n\n", s.Label())
}

func writeRun(b *strings.Builder, s *Summary, meta Meta) {
	b.WriteString("## Run\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, escape(v)) }
	row("kernel", orUnknown(s.Kernel))
	row("emulation", s.EmulationName())
	row("CPUs seen by the benchmark", orUnknown(s.CPUs)+" ("+orUnknown(s.CPUModel)+")")
	for _, l := range metaLabels {
		if v := meta.Get(l.Key); v != "" {
			row(l.Value, v)
		}
	}
	for _, f := range meta {
		if !slices.ContainsFunc(metaLabels, func(l MetaField) bool { return l.Key == f.Key }) {
			row(f.Key, f.Value)
		}
	}
	b.WriteString("\n")
}

func writeOverhead(b *strings.Builder, s *Summary) {
	b.WriteString("## Cost per read(2)\n\n")
	if !s.HasBase {
		b.WriteString("No baseline was measured, so there is no overhead to report.\n\n")
		return
	}
	fmt.Fprintf(b, "Workload: 1-byte read(2) of /dev/zero in a tight loop on one locked thread. **baseline** (nothing attached): %s ns/op %s, n=%d.\n\n",
		fmtNs(s.Baseline.Center), fmtCI(s.Baseline), s.Baseline.N)
	if len(s.Rows) == 0 {
		b.WriteString("No mechanism was measured, so there is nothing to compare it with.\n\n")
		return
	}
	fmt.Fprintf(b, "![overhead per mechanism and case](%s)\n\n", ChartFile)
	b.WriteString("| case | mechanism | ns/op, median [95% CI] | overhead ns over baseline [95% CI] | p vs baseline | Δ ns vs " + Reference + " [95% CI] | p vs " + Reference + " | overhead ÷ " + Reference + "'s |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Rows {
		vsRef, pRef := "(reference)", ""
		if r.HasVsReference {
			vsRef, pRef = fmtShift(r.VsReference), fmtP(r.VsReference)
		} else if r.Mechanism != Reference {
			vsRef, pRef = "n/a", "n/a"
		}
		fmt.Fprintf(b, "| %s | %s | %s %s | %s | %s | %s | %s | %s |\n",
			r.Case, r.Mechanism, fmtNs(r.NsPerOp.Center), fmtCI(r.NsPerOp),
			fmtShift(r.Overhead), fmtP(r.Overhead), vsRef, pRef, fmtRatio(r.Ratio))
	}
	fmt.Fprintf(b, "\nOverhead and Δ are Hodges-Lehmann shifts (median of all pairwise differences between rounds) with exact 95%% intervals; p is the two-sided Mann-Whitney U test, as benchstat computes it; *n.s.* marks p ≥ %.2f. The ratio divides two point estimates and is left out where %s's own overhead is not significant.\n\n", Alpha, Reference)
}

func writeConsumer(b *strings.Builder, s *Summary) {
	rows := filterRows(s.Rows, func(r Row) bool { return r.HasEvents || r.HasDropped })
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Events (every-call)\n\n")
	b.WriteString("Every call is an event; a Go goroutine consumes them while the loop runs: BPF mechanisms' from a 256 KiB BPF ring buffer, ftrace-graph's as trace_pipe text that it parses.")
	if slices.ContainsFunc(rows, func(r Row) bool { return !r.HasDropped }) {
		b.WriteString(" *n/a*: the mechanism cannot count that in this case (it declares the counter unknown).")
	}
	b.WriteString("\n\n")
	b.WriteString("| case | mechanism | events consumed /s, median [95% CI] | events dropped /s, median [95% CI] |\n|---|---|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.Case, r.Mechanism, fmtRate(r.Events, r.HasEvents), fmtRate(r.Dropped, r.HasDropped))
	}
	b.WriteString("\n")
}

func writeBody(b *strings.Builder, s *Summary) {
	rows := filterRows(s.Rows, func(r Row) bool { return r.HasBody })
	skipped := bodySkipped(s.Rows)
	if len(rows) == 0 && len(skipped) == 0 {
		return
	}
	b.WriteString("## Program body vs dispatch (kernel BPF run-time statistics)\n\n")
	b.WriteString("A second, independent measurement (BenchmarkBPFStats): the same loop with `kernel.bpf_stats_enabled` on, reading each program's run_time_ns and run_cnt. *Body* is the time inside the BPF programs per read(2); *≈ dispatch* is the overhead above minus the body: a derived difference of two medians from different benchmarks (statistics add clock reads of their own), not a measurement, showing roughly what the trampoline or kprobe around the programs costs.\n\n")
	if len(rows) > 0 {
		writeBodyTable(b, rows)
	}
	if len(skipped) > 0 {
		b.WriteString("Measured above but not here, since BenchmarkBPFStats skipped them:\n\n")
		for _, l := range skipped {
			fmt.Fprintf(b, "- %s\n", escape(l))
		}
		b.WriteString("\n")
	}
}

func writeBodyTable(b *strings.Builder, rows []Row) {
	b.WriteString("| case | mechanism | body ns per read(2), median [95% CI] | ≈ dispatch ns (derived) | per program: ns/run [95% CI] × runs per read(2) |\n|---|---|---:|---:|---|\n")
	for _, r := range rows {
		dispatch := "n/a"
		if d, ok := r.Dispatch(); ok {
			dispatch = fmtNs(d)
		}
		var progs []string
		for _, p := range r.Programs {
			if !p.HasNsPerRun {
				progs = append(progs, p.Name+": did not run (not attached to vfs_read)")
				continue
			}
			progs = append(progs, fmt.Sprintf("%s: %s %s × %.2f", p.Name, fmtNs(p.NsPerRun.Center), fmtCI(p.NsPerRun), p.RunsPerOp.Center))
		}
		fmt.Fprintf(b, "| %s | %s | %s %s | %s | %s |\n", r.Case, r.Mechanism, fmtNs(r.Body.Center), fmtCI(r.Body), dispatch, strings.Join(progs, "<br>"))
	}
	b.WriteString("\n")
}

// bodySkipped lists the mechanisms with an overhead row that
// BenchmarkBPFStats skipped, one line per mechanism and reason:
// "<mechanism> (<cases>): <reason>".
func bodySkipped(rows []Row) []string {
	type group struct{ mechanism, reason string }
	var order []group
	cases := map[group][]string{}
	for _, r := range rows {
		if r.HasBody || r.BodySkipped == "" {
			continue
		}
		g := group{r.Mechanism, r.BodySkipped}
		if cases[g] == nil {
			order = append(order, g)
		}
		cases[g] = append(cases[g], r.Case)
	}
	var lines []string
	for _, g := range order {
		lines = append(lines, fmt.Sprintf("%s (%s): %s", g.mechanism, strings.Join(cases[g], ", "), g.reason))
	}
	return lines
}

// writeOutcomes lists the skipped and failed sub-benchmarks, one item per
// mechanism; one with several reasons gets one sub-item per reason.
func writeOutcomes(b *strings.Builder, s *Summary) {
	for _, o := range []struct {
		title    string
		outcomes []Outcome
	}{{"Skipped", s.Skipped}, {"Failed", s.Failed}} {
		if len(o.outcomes) == 0 {
			continue
		}
		fmt.Fprintf(b, "## %s\n\n", o.title)
		for _, out := range o.outcomes {
			fmt.Fprintf(b, "- %s (%d sub-benchmark%s):", escape(out.Who), out.N, plural(out.N))
			if len(out.Reasons) == 1 {
				fmt.Fprintf(b, " %s\n", escape(out.Reasons[0].Msg))
				continue
			}
			b.WriteString("\n")
			for _, r := range out.Reasons {
				fmt.Fprintf(b, "  - %s (%d): %s\n", strings.Join(r.Benchmarks, ", "), r.N, escape(r.Msg))
			}
		}
		b.WriteString("\n")
	}
}

func writeFiles(b *strings.Builder, s *Summary, meta Meta, regenerate string) {
	b.WriteString("## Files\n\n")
	fmt.Fprintf(b, "- [%s](%s): the raw `go test -bench` output of every round\n", RawFile, RawFile)
	if meta != nil {
		fmt.Fprintf(b, "- [%s](%s): when, where and how loaded the host was\n", MetaFile, MetaFile)
	}
	if s.HasOverhead() {
		fmt.Fprintf(b, "- [%s](%s), [%s](%s): benchstat's comparisons (benchstat prints sec/op)\n", BenchstatBaselineFile, BenchstatBaselineFile, BenchstatReferenceFile, BenchstatReferenceFile)
		fmt.Fprintf(b, "- [%s](%s): the chart above\n", ChartFile, ChartFile)
	}
	if regenerate != "" {
		fmt.Fprintf(b, "\nRegenerate with `%s`; how to read it: bench/README.md.\n", regenerate)
	} else {
		b.WriteString("\nHow to read it: bench/README.md.\n")
	}
}

func filterRows(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// fmtNs prints about three significant digits.
func fmtNs(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtCI(e Estimate) string {
	if !e.HasCI() {
		return fmt.Sprintf("[no CI: n=%d]", e.N)
	}
	return fmt.Sprintf("[%s, %s]", fmtNs(e.Lo), fmtNs(e.Hi))
}

func fmtShift(s Shift) string {
	if s.N == 0 {
		return "n/a"
	}
	sign := ""
	if s.Center > 0 {
		sign = "+"
	}
	return sign + fmtNs(s.Center) + " " + fmtCI(s.Estimate)
}

func fmtP(s Shift) string {
	if s.N == 0 {
		return "n/a"
	}
	p := fmt.Sprintf("%.3f", s.P)
	if s.P < 0.001 {
		p = "<0.001"
	}
	if !s.Significant() {
		p += " *n.s.*"
	}
	return p
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", r)
}

func fmtRate(e Estimate, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmtNs(e.Center) + " " + fmtCI(e)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// escape keeps a value inside its Markdown table cell.
func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
