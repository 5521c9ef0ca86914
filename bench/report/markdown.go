package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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

// Label names the kernel, the emulation and the clock, which every figure
// depends on.
func (s *Summary) Label() string {
	l := fmt.Sprintf("Linux %s, %s", orUnknown(s.Kernel), s.EmulationName())
	if s.Clock != "" {
		l += ", " + s.Clock + " clock"
	}
	return l
}

// Icount reports whether ns/op counts guest instructions (QEMU icount).
func (s *Summary) Icount() bool { return s.Clock == "icount" }

// Unit names what ns/op measures: under icount one guest instruction is
// one ns of guest time.
func (s *Summary) Unit() string {
	if s.Icount() {
		return "guest instructions"
	}
	return "ns"
}

// ClockName spells out Clock.
func (s *Summary) ClockName() string {
	switch s.Clock {
	case "icount":
		return "QEMU icount (-icount shift=0,sleep=on): guest time advances 1 ns per executed guest instruction, " +
			"so ns/op is guest instructions per read(2)"
	case "wall":
		return "wall time"
	case "":
		return "not recorded (tracebench-clock missing)"
	}
	return s.Clock
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
	peersRun := s.PeersOnly() || strings.HasPrefix(meta.Get("suite"), "peers")
	writeDrops(&b, s)
	if peersRun {
		b.WriteString("> This run measured the peer tools only (`make bench-peers`, BENCH_SUITE=peers); the " +
			"mechanisms' own benchmarks are in [the report one directory up](../README.md).\n\n")
	} else {
		writeNoOverhead(&b, s)
	}
	if len(s.Rows) > 0 {
		writeCaveat(&b, s)
	}
	writeRun(&b, s, meta)
	if !peersRun {
		writeOverhead(&b, s)
	}
	writeFloors(&b, s)
	writeTargets(&b, s, meta)
	writeConsumer(&b, s)
	writeBody(&b, s)
	writeCosts(&b, s)
	writePeers(&b, s)
	writeOutcomes(&b, s)
	writeMissing(&b, s)
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

// writeDrops says first that a run whose mechanisms dropped events is no
// comparison: a dropped event skips the work a consumed one costs.
func writeDrops(b *strings.Builder, s *Summary) {
	if len(s.Drops) == 0 {
		return
	}
	b.WriteString("> **Events were dropped, so this run is no comparison**: a dropped event skips reserving, " +
		"filling and submitting it, so a mechanism that drops more does less work per call. `make bench` fails on it.\n>\n")
	for _, d := range s.Drops {
		fmt.Fprintf(b, "> - %s/%s: dropped in %d of %d rounds, up to %s events/s\n",
			d.Mechanism, d.Case, d.Rounds, d.Of, fmtNs(d.Max))
	}
	b.WriteString("\n")
}

func writeCaveat(b *strings.Builder, s *Summary) {
	if s.Emulation == "tcg" && s.Icount() {
		fmt.Fprintf(b, "> Every figure below was measured in a %s with QEMU's instruction counter as the guest "+
			"clock (`-icount shift=0,sleep=on`): a guest nanosecond is one executed guest instruction, "+
			"so **ns/op is guest instructions per read(2)**, repeatable regardless of the host's load. "+
			"The model: every instruction costs 1; cache and TLB misses, branch mispredictions, atomics "+
			"and serialising instructions are not weighted, and instructions of every vCPU count (a "+
			"consumer goroutine or kernel thread running on the other vCPU while the loop runs is "+
			"counted too). Compare mechanisms with each other and with the baseline **within this "+
			"report**; bare metal stays the reference for time: see bench/README.md for bare-metal "+
			"anchors.\n\n", s.EmulationName())
		return
	}
	if s.Emulation == "tcg" {
		fmt.Fprintf(b, "> Every figure below was measured in a %s. TCG translates and emulates every guest "+
			"instruction, about 10x slower than bare metal and not uniformly so: compare mechanisms with each other "+
			"and with the baseline **within this report** (differences, ratios, p-values), never its nanoseconds "+
			"with another machine. See bench/README.md for bare-metal anchors.\n\n", s.EmulationName())
		return
	}
	fmt.Fprintf(b, "> Every figure below was measured on %s. Compare mechanisms within this report; absolute "+
		"nanoseconds hold for this machine only.\n\n", s.Label())
}

func writeRun(b *strings.Builder, s *Summary, meta Meta) {
	b.WriteString("## Run\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, escape(v)) }
	row("kernel", orUnknown(s.Kernel))
	row("emulation", s.EmulationName())
	row("clock", s.ClockName())
	row("rounds in "+RawFile, fmt.Sprint(s.Rounds))
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
	fmt.Fprintf(b, "Workload: 1-byte read(2) of /dev/zero in a tight loop on one locked thread. **baseline** "+
		"(nothing attached): %s %s per read(2) %s, n=%d.\n\n",
		fmtNs(s.Baseline.Center), s.Unit(), fmtCI(s.Baseline), s.Baseline.N)
	if len(s.Rows) == 0 {
		b.WriteString("No mechanism was measured, so there is nothing to compare it with.\n\n")
		return
	}
	fmt.Fprintf(b, "![overhead per mechanism and case](%s)\n\n", ChartFile)
	u := s.Unit()
	fmt.Fprintf(b, "| case | mechanism | %s per read(2), median [95%% CI] | overhead over baseline, %s [95%% "+
		"CI] | p vs baseline | Δ %s vs %s [95%% CI] | p vs %s | overhead ÷ %s's |\n",
		u, u, u, Reference, Reference, Reference)
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
			fmtShift(r.Overhead), fmtP(r.Overhead), vsRef, pRef, fmtRatio(r))
	}
	fmt.Fprintf(b, "\nThe sub-benchmarks of one round share a process and the host's load, so overhead and Δ "+
		"come from the differences within each round: the Hodges-Lehmann estimate (median of the Walsh averages "+
		"of the per-round differences) with its exact 95%% interval, and p from the two-sided exact Wilcoxon "+
		"signed-rank test; *n.s.* marks p ≥ %.2f. The ratio divides two point estimates and is left out (saying "+
		"why) where either overhead is not significant. benchstat's unpaired comparisons are in the files "+
		"below.\n\n", Alpha)
}

// Targets of the benchmark (issue 11): enough rounds, a short run, and
// overheads known to within a few percent where nothing is reported.
const (
	TargetRounds    = 6
	TargetDurationS = 600
	TargetCIShare   = 0.03
)

// targetCases are the cases whose overheads must be that precise.
var targetCases = []string{"tgid-miss", "below-threshold"}

// writeTargets says for each target whether this run met it.
func writeTargets(b *strings.Builder, s *Summary, meta Meta) {
	if len(s.Rows) == 0 {
		return
	}
	b.WriteString("## Targets\n\n| target | this run | met |\n|---|---|---|\n")
	row := func(target, got string, met bool) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", target, got, yesNo(met))
	}
	row(fmt.Sprintf("≥ %d rounds", TargetRounds), fmt.Sprint(s.Rounds), s.Rounds >= TargetRounds)
	if d := meta.Get("duration-s"); d != "" {
		secs, err := strconv.Atoi(d)
		row(fmt.Sprintf("one run ≤ %d s, boot included", TargetDurationS), d+" s", err == nil && secs <= TargetDurationS)
	} else {
		fmt.Fprintf(b, "| one run ≤ %d s, boot included | not recorded | n/a |\n", TargetDurationS)
	}
	for _, r := range s.Rows {
		if !slices.Contains(targetCases, r.Case) || !r.HasOverhead {
			continue
		}
		share, ok := ciShare(r.Overhead.Estimate)
		got := fmt.Sprintf("no interval (n=%d)", r.Overhead.N)
		if ok {
			got = fmt.Sprintf("±%.1f%%", 100*share)
		}
		target := fmt.Sprintf("%s/%s overhead: 95%% CI within ±%.0f%%", r.Mechanism, r.Case, 100*TargetCIShare)
		row(target, got, ok && share <= TargetCIShare)
	}
	for _, r := range filterRows(s.Rows, func(r Row) bool { return r.HasDropped }) {
		d, dropped := findDrop(s.Drops, r)
		got := "0 in every round"
		if dropped {
			got = fmt.Sprintf("dropped in %d of %d rounds", d.Rounds, d.Of)
		}
		row(fmt.Sprintf("%s/%s: no event dropped", r.Mechanism, r.Case), got, !dropped)
	}
	b.WriteString("\n")
}

// ciShare is the larger distance from e's center to a bound, as a share of
// the center; ok is false without an interval or with a zero center.
func ciShare(e Estimate) (float64, bool) {
	if !e.HasCI() || e.Center == 0 {
		return 0, false
	}
	return max(e.Hi-e.Center, e.Center-e.Lo) / math.Abs(e.Center), true
}

func findDrop(drops []Drop, r Row) (Drop, bool) {
	for _, d := range drops {
		if d.Mechanism == r.Mechanism && d.Case == r.Case {
			return d, true
		}
	}
	return Drop{}, false
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func writeConsumer(b *strings.Builder, s *Summary) {
	rows := filterRows(s.Rows, func(r Row) bool { return r.HasEvents || r.HasDropped })
	if len(rows) == 0 {
		return
	}
	u := s.Unit()
	b.WriteString("## Events (every-call)\n\n")
	b.WriteString("Every call is an event. The ring buffer (BPF mechanisms') or trace buffer (ftrace-graph's) " +
		"is sized for every event of the loop and its warm-up, and nothing consumes while the loop " +
		"runs: the events are read after it, in batches of 256 (`tracers.ReadEvents`), so none is " +
		"dropped (a drop fails the sub-benchmark) and the loop's figure is the producer's alone. " +
		"*events /s* counts the timed reads' events per second of the loop; *consumer* is the " +
		"reading's own cost per event (ftrace-graph's trace_pipe reader thread parses while the " +
		"loop runs, so part of its cost is in the loop's figure instead).")
	if slices.ContainsFunc(rows, func(r Row) bool { return !r.HasDropped }) {
		b.WriteString(" *n/a*: the mechanism cannot count that in this case (it declares the counter unknown).")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(b, "| case | mechanism | events /s, median [95%% CI] | dropped /s | consumer, %s per event, "+
		"median [95%% CI] |\n|---|---|---:|---:|---:|\n", u)
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.Case, r.Mechanism, fmtRate(r.Events, r.HasEvents),
			fmtRate(r.Dropped, r.HasDropped), fmtRate(r.Consumer, r.HasConsumer))
	}
	b.WriteString("\n")
}

// writeFloors shows the floors and each mechanism's overhead as its floor
// plus what its programs add above it.
func writeFloors(b *strings.Builder, s *Summary) {
	if len(s.Floors) == 0 || !s.HasBase {
		return
	}
	u := s.Unit()
	b.WriteString("## Floor + body\n\n")
	b.WriteString("A floor is an empty BPF program (`return 0`) of each attach kind on vfs_read " +
		"(bpf/floors.bpf.c), measured in the same rounds: what the kind's dispatch costs per call " +
		"before a program body runs, as the kernel's selftests/bpf trigger benchmarks measure " +
		"it.\n\n")
	fmt.Fprintf(b, "| floor | %s per read(2), median [95%% CI] | overhead over baseline [95%% CI] | p "+
		"|\n|---|---:|---:|---:|\n", u)
	for _, f := range s.Floors {
		fmt.Fprintf(b, "| %s | %s %s | %s | %s |\n", f.Name, fmtNs(f.NsPerOp.Center), fmtCI(f.NsPerOp),
			fmtShift(f.Overhead), fmtP(f.Overhead))
	}
	b.WriteString("\nEach mechanism's overhead = its floor's overhead + *above floor*, the paired difference " +
		"from the floor within each round (program bodies, maps, ring buffer); the two parts are " +
		"separate estimates, so their sum is near, not equal to, the overhead.\n\n")
	fmt.Fprintf(b, "| case | mechanism | overhead, %s [95%% CI] | floor | floor's overhead | above floor [95%% "+
		"CI] | p vs floor |\n|---|---|---:|---|---:|---:|---:|\n", u)
	for _, r := range s.Rows {
		if r.Floor == "" {
			continue
		}
		floorOverhead := "n/a"
		if f, ok := s.Floor(r.Floor); ok && f.HasOverhead {
			floorOverhead = fmtShift(f.Overhead)
		}
		above, p := "n/a", "n/a"
		if r.HasAboveFloor {
			above, p = fmtShift(r.AboveFloor), fmtP(r.AboveFloor)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Case, r.Mechanism, fmtShift(r.Overhead), r.Floor,
			floorOverhead, above, p)
	}
	b.WriteString("\n")
}

func writePeers(b *strings.Builder, s *Summary) {
	if len(s.Peers) == 0 {
		return
	}
	u := s.Unit()
	b.WriteString("## Peers\n\n")
	fmt.Fprintf(b, "BenchmarkPeers (bench/peers_test.go, peers/): the same loop with each peer tool tracing this "+
		"process with its own PID filter, and tracebench's mechanisms in the peers' mode (tracebench-<mechanism>: "+
		"every call of this process into a log2 histogram, no event), against this benchmark's own baseline "+
		"(%s %s per read(2) %s), paired by round. Tools: %s.\n\n",
		fmtNs(s.PeerBaseline.Center), u, fmtCI(s.PeerBaseline), orUnknown(strings.Join(s.PeerVersions, ", ")))
	fmt.Fprintf(b, "| tool | %s per read(2), median [95%% CI] | overhead over baseline [95%% CI] | p |\n"+
		"|---|---:|---:|---:|\n", u)
	for _, p := range s.Peers {
		fmt.Fprintf(b, "| %s | %s %s | %s | %s |\n", p.Name, fmtNs(p.NsPerOp.Center), fmtCI(p.NsPerOp),
			fmtShift(p.Overhead), fmtP(p.Overhead))
	}
	b.WriteString("\n")
}

// costNames label CostUnits in the cost table.
var costNames = map[string]string{
	"start-ns":       "start: load + verify + attach, %s",
	"map-bytes":      "maps, bytes (kernel's memlock)",
	"xlated-bytes":   "programs, xlated bytes",
	"jited-bytes":    "programs, jited bytes",
	"verified-insns": "instructions the verifier processed",
}

func writeCosts(b *strings.Builder, s *Summary) {
	if len(s.Costs) == 0 {
		return
	}
	b.WriteString("## Cost beyond time\n\n")
	fmt.Fprintf(b, "Per mechanism, read in the %s sub-benchmarks (default ring buffer), medians over the "+
		"rounds: the time `Mechanism.Start` took (parse the object, create maps, load and verify "+
		"the programs, attach), and what the kernel reports for the running tracer's maps (fdinfo "+
		"memlock, which includes the ring buffer) and programs (BPF_OBJ_GET_INFO_BY_FD, all "+
		"programs summed, a task iterator included where the mechanism has one).\n\n", CostCase)
	b.WriteString("| mechanism |")
	for _, u := range CostUnits {
		name := costNames[u]
		if u == "start-ns" {
			name = fmt.Sprintf(name, s.Unit())
		}
		fmt.Fprintf(b, " %s |", name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(CostUnits)) + "\n")
	for _, c := range s.Costs {
		fmt.Fprintf(b, "| %s |", c.Mechanism)
		for _, u := range CostUnits {
			e, ok := c.Units[u]
			cell := "n/a"
			if ok {
				cell = fmt.Sprintf("%.0f", e.Center)
				if u == "start-ns" {
					cell = fmtRate(e, ok)
				}
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		b.WriteString("\n")
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
	b.WriteString("A second, independent measurement (BenchmarkBPFStats): the same loop with " +
		"`kernel.bpf_stats_enabled` on, reading each program's run_time_ns and run_cnt. *Body* is the time inside " +
		"the BPF programs per read(2); *≈ dispatch* is the overhead above minus the body: a derived difference " +
		"of two medians from different benchmarks (statistics add clock reads of their own), not a measurement, " +
		"showing roughly what the trampoline or kprobe around the programs costs.\n\n")
	if len(rows) > 0 {
		writeBodyTable(b, rows, s.Unit())
	}
	if len(skipped) > 0 {
		b.WriteString("Measured above but not here, since BenchmarkBPFStats skipped them:\n\n")
		for _, l := range skipped {
			fmt.Fprintf(b, "- %s\n", escape(l))
		}
		b.WriteString("\n")
	}
}

// writeBodyTable writes the body table; unit names what the kernel's
// run_time_ns counts (guest instructions under icount).
func writeBodyTable(b *strings.Builder, rows []Row, unit string) {
	fmt.Fprintf(b, "| case | mechanism | body %s per read(2), median [95%% CI] | ≈ dispatch %s (derived) | per "+
		"program: %s/run [95%% CI] × runs per read(2) |\n|---|---|---:|---:|---|\n",
		unit, unit, unit)
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
			progs = append(progs, fmt.Sprintf("%s: %s %s × %.2f",
				p.Name, fmtNs(p.NsPerRun.Center), fmtCI(p.NsPerRun), p.RunsPerOp.Center))
		}
		fmt.Fprintf(b, "| %s | %s | %s %s | %s | %s |\n",
			r.Case, r.Mechanism, fmtNs(r.Body.Center), fmtCI(r.Body), dispatch, strings.Join(progs, "<br>"))
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

// writeMissing names the sub-benchmarks absent from some rounds.
func writeMissing(b *strings.Builder, s *Summary) {
	if len(s.Missing) == 0 {
		return
	}
	b.WriteString("## Missing\n\nNo result, skip or failure in these rounds; " +
		"comparisons use only the rounds that have both sides.\n\n")
	for _, m := range s.Missing {
		rounds := make([]string, len(m.Rounds))
		for i, r := range m.Rounds {
			rounds[i] = fmt.Sprint(r)
		}
		what := fmt.Sprintf("rounds %s of %d", strings.Join(rounds, ", "), s.Rounds)
		if len(m.Rounds) == s.Rounds {
			what = fmt.Sprintf("every round (%d): no row", s.Rounds)
		}
		fmt.Fprintf(b, "- %s: missing from %s\n", m.Key, what)
	}
	b.WriteString("\n")
}

func writeFiles(b *strings.Builder, s *Summary, meta Meta, regenerate string) {
	b.WriteString("## Files\n\n")
	fmt.Fprintf(b, "- [%s](%s): the raw `go test -bench` output of every round\n", RawFile, RawFile)
	if meta != nil {
		fmt.Fprintf(b, "- [%s](%s): when, where and how loaded the host was\n", MetaFile, MetaFile)
	}
	if s.HasOverhead() {
		fmt.Fprintf(b, "- [%s](%s), [%s](%s): benchstat's comparisons (benchstat prints "+
			"sec/op)\n", BenchstatBaselineFile, BenchstatBaselineFile, BenchstatReferenceFile, BenchstatReferenceFile)
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

func fmtRatio(r Row) string {
	if math.IsNaN(r.Ratio) {
		return r.NoRatio
	}
	return fmt.Sprintf("%.2f×", r.Ratio)
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
