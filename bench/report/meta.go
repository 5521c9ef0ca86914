package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Meta is what cmd/bench (bench run) recorded about a run outside the benchmark
// process ("key: value" lines of meta.txt), in file order.
type Meta []MetaField

// MetaField is one line of meta.txt.
type MetaField struct{ Key, Value string }

// get returns the value of key, "" if absent.
func (m Meta) get(key string) string {
	for _, f := range m {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// parseMeta reads "key: value" lines; blank lines and lines starting with
// '#' are ignored.
func parseMeta(r io.Reader) (Meta, error) {
	var m Meta
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("meta line %d: %q is not \"key: value\"", n, line)
		}
		m = append(m, MetaField{Key: key, Value: strings.TrimSpace(value)})
	}
	return m, sc.Err()
}

// metaLabels describes the keys bench run writes, in display order.
var metaLabels = []MetaField{
	{"where", "where the benchmarks ran"},
	{"commit", "tracebench commit (-dirty: with changes not committed)"},
	{"clock", "clock requested (BENCH_CLOCK)"},
	{"date-start", "started (UTC)"},
	{"date-end", "ended (UTC)"},
	{"duration-s", "duration of the benchmark run, boot included (s)"},
	{"suite", "benchmarks run (BENCH_SUITE)"},
	{"rounds", "rounds (one process each, sub-benchmark order rotated)"},
	{"benchtime", "read(2) calls per sub-benchmark and round"},
	{"mechanisms", "mechanisms selected (BENCH_MECHANISMS)"},
	{"guest-cpus", "guest CPUs (BENCH_CPUS)"},
	{"settle", "idle before each timed loop, after a garbage collection (BENCH_SETTLE)"},
	{"host-cpus", "host CPUs"},
	{"host-cpu", "host CPU model (TCG's wall-clock speed follows it)"},
	{"host-load-start", "host load average (1, 5, 15 min) at start"},
	{"host-load-end", "host load average (1, 5, 15 min) at end"},
	{"other-qemu-start", "other QEMU processes on the host at start"},
	{"other-qemu-end", "other QEMU processes on the host at end"},
	{"host-load-1min-max", "highest 1-min host load average during the run"},
	{"other-qemu-max", "most other QEMU processes on the host during the run"},
	{"quiet-wait-s", "waited for other QEMU processes to end (s)"},
	{"once-processes", "processes of the benchmarks run once, apart from the rounds, each in a fresh guest"},
	{"guests", "guests side by side at most (BENCH_GUESTS)"},
	{"failed-processes", "benchmark processes that failed or did not run"},
	{"process-durations-s", "host time of each process's guest, boot included (s), in their order"},
	{"exit-status", "exit status of the benchmark processes (0: every sub-benchmark passed or was skipped)"},
}
