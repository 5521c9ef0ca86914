package bench

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"tracebench/tracers"
)

// BenchmarkBPFStats reports the kernel's run-time statistics of each
// mechanism's programs over the same loop: bpf-ns/op (all program bodies,
// per read), and per program <name>-ns/run and <name>-runs/op. A mechanism
// without BPF programs is skipped, saying what it is instead. Only in
// bpfStatsCase: the floors split every case's overhead already, and each
// sub-benchmark costs a load and attach (most of a round's time under TCG).
func BenchmarkBPFStats(b *testing.B) {
	runUnits(b, perMechanism(selectedMechanisms(b), casesNamed(bpfStatsCase), benchBPFStats))
}

// bpfStatsCase is the case BenchmarkBPFStats measures: the programs' whole
// work but the ring buffer.
const bpfStatsCase = "below-threshold"

// casesNamed returns the cases of those names.
func casesNamed(names ...string) []benchCase {
	var cs []benchCase
	for _, c := range cases {
		if slices.Contains(names, c.name) {
			cs = append(cs, c)
		}
	}
	return cs
}

func benchBPFStats(m tracers.Mechanism, c benchCase) func(*testing.B) {
	return func(b *testing.B) {
		if why := noBPFStats(m); why != "" {
			b.Skip(why)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		s := attach(b, m, c)
		before, after := s.statsOfLoop(b, fd)
		s.finish(b, c)
		reportRunTime(b, before, after)
	}
}

// statsOfLoop warms up and times the loop on fd on one CPU (onOneCPU)
// with BPF run-time statistics on, returning the session's program
// statistics before and after. Read before enabling: the counters of
// fresh programs only move while statistics are on, so nothing outside
// the loop is counted (unless another process turned them on too).
func (s *session) statsOfLoop(b *testing.B, fd int) (before, after map[string]tracers.ProgramStats) {
	defer onOneCPU(b)()
	warmUp(fd)
	before = s.programStats(b)
	s.loopStarts(b)
	stats, err := tracers.EnableRunTimeStats()
	if errors.Is(err, tracers.ErrUnsupported) {
		b.Skip(err.Error())
	}
	if err != nil {
		b.Fatal(err)
	}
	readLoop(b, fd)
	if err := stats.Close(); err != nil {
		b.Fatal(err)
	}
	return before, s.programStats(b)
}

// noBPFStats says why m has no BPF run-time statistics, "" if it has.
func noBPFStats(m tracers.Mechanism) string {
	if m.Can.ProgramStats() {
		return ""
	}
	return fmt.Sprintf("%s has no BPF programs, so no BPF run-time statistics: %s", m.Name, m.Summary)
}

// reportRunTime reports the programs' run time between two snapshots.
// Programs that are not attached to vfs_read (e.g. a task iterator that
// reports state) do not run in the loop: they get runs/op 0 and no ns/run.
// It fails b if no program ran at all, since then nothing was traced.
func reportRunTime(b *testing.B, before, after map[string]tracers.ProgramStats) {
	var total time.Duration
	var runs uint64
	for _, name := range slices.Sorted(maps.Keys(after)) {
		d := after[name].Sub(before[name])
		total += d.Runtime
		runs += d.RunCount
		b.ReportMetric(float64(d.RunCount)/float64(b.N), name+"-runs/op")
		if d.RunCount > 0 {
			b.ReportMetric(float64(d.Runtime.Nanoseconds())/float64(d.RunCount), name+"-ns/run")
		}
	}
	if runs == 0 {
		b.Fatalf("no program of %v ran while statistics were on", slices.Sorted(maps.Keys(after)))
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "bpf-ns/op")
}

func TestNoBPFStats(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		why := noBPFStats(m)
		if m.Can.ProgramStats() != (why == "") {
			t.Errorf("%s (ProgramStats %v): noBPFStats = %q", m.Name, m.Can.ProgramStats(), why)
		}
	}
	graph := notBPF()
	why := noBPFStats(graph)
	if !strings.Contains(why, graph.Name+" has no BPF programs") || !strings.Contains(why, graph.Summary) {
		t.Errorf("noBPFStats(%s) = %q, want the mechanism and what it is instead", graph.Name, why)
	}
}
