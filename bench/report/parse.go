// Package report turns the output of the tracebench benchmarks (package
// bench, run round after round by bench/rounds.sh) into a report: a
// Markdown summary with confidence intervals and p-values, a chart, and
// inputs for benchstat.
//
// Statistics follow benchstat's defaults: medians with distribution-free
// 95% confidence intervals, the Mann-Whitney U test for differences at
// alpha 0.05, and, for the size of a difference, the Hodges-Lehmann shift
// with its exact interval (the estimate that goes with the U test).
package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"tracebench/bench/suite"
)

// Benchmark names, as in package bench; Families groups them.
const (
	vfsRead  = "VFSRead"  // ns/op of the workload, with or without a mechanism
	bpfStats = "BPFStats" // the kernel's run-time statistics of the programs
	Peers    = "Peers"    // peer tools and tracebench in their mode: BenchmarkPeers/<name>
	Baseline = "baseline" // the sub-benchmark with nothing attached
)

// DeltaSuffix ends the units of a change, which may be negative (e.g.
// slab-bytes-delta: the kernel's Slab while attached less before).
const DeltaSuffix = "-delta"

// Key identifies one sub-benchmark: BenchmarkVFSRead/<Mechanism>/<Case>,
// BenchmarkBPFStats/<Mechanism>/<Case> or BenchmarkVFSRead/baseline (Case
// empty).
type Key struct {
	bench, Mechanism, Case string
}

func (k Key) String() string {
	if k.Mechanism == "" {
		return "Benchmark" + k.bench
	}
	if k.Case == "" {
		return "Benchmark" + k.bench + "/" + k.Mechanism
	}
	return "Benchmark" + k.bench + "/" + k.Mechanism + "/" + k.Case
}

// run is the parsed output of all rounds.
type run struct {
	// config is the file configuration ("key: value" lines such as
	// tracebench-kernel, tracebench-emulation, cpu), last value seen;
	// parse refuses rounds that disagree on those labelling the report.
	config map[string]string
	// samples holds one value per round for every sub-benchmark and
	// unit. units are as the benchmark printed them (ns/op, events/s,
	// bpf-ns/op, ...), not benchfmt's normalised seconds.
	samples map[Key]map[string][]float64
	// Skipped and Failed hold the message of each sub-benchmark that
	// was skipped or failed in any round (the last one printed); a whole
	// benchmark skipped or failed has a Key with only bench set.
	Skipped, Failed map[Key]string
	// failedIn counts, for each key of Failed, the benchmark processes
	// in which it failed (each runs a sub-benchmark once).
	failedIn map[Key]int
	// Rounds counts the benchmark processes that are rounds: each prints
	// a "tracebench-kernel:" line first (bench/rounds.sh runs one per
	// round); one apart from the rounds (suite.ApartKey) is none.
	Rounds int
	// onceProcesses counts the processes that ran Once benchmarks apart
	// from the rounds (their suite.ApartKey line).
	onceProcesses int
	// rounds holds the round of each sample in samples.
	rounds map[Key]map[string][]round
	// roundProcesses holds the process of each round, in order.
	roundProcesses []int
}

// round identifies a sample's round: its benchmark process (one result
// per sub-benchmark, -test.count 1).
type round int

// values returns the samples of k in unit, nil if there are none.
func (r *run) values(k Key, unit string) []float64 { return r.samples[k][unit] }

// missingRounds returns the rounds, from 1, in which k has no result.
func (r *run) missingRounds(k Key) []int {
	has := map[int]bool{}
	for _, rds := range r.rounds[k] {
		for _, rd := range rds {
			has[int(rd)] = true
		}
	}
	var out []int
	for i, p := range r.roundProcesses {
		if !has[p] {
			out = append(out, i+1)
		}
	}
	return out
}

// paired returns the samples of a and b in unit from the rounds that have
// both, in round order: a[i] and b[i] shared a process.
func (r *run) paired(a, b Key, unit string) (x, y []float64) {
	inB := map[round]float64{}
	for i, rd := range r.rounds[b][unit] {
		inB[rd] = r.samples[b][unit][i]
	}
	for i, rd := range r.rounds[a][unit] {
		if v, ok := inB[rd]; ok {
			x = append(x, r.samples[a][unit][i])
			y = append(y, v)
		}
	}
	return x, y
}

// parse reads `go test -bench -v` output, possibly several runs one after
// another. name labels syntax errors.
func parse(r io.Reader, name string) (*run, error) {
	whole, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	raw := boundLines(string(whole))
	run := &run{
		config:   map[string]string{},
		samples:  map[Key]map[string][]float64{},
		Skipped:  map[Key]string{},
		Failed:   map[Key]string{},
		failedIn: map[Key]int{},
		rounds:   map[Key]map[string][]round{},
	}
	labels := map[int]map[string]bool{} // sameInEveryRound keys of each round with results
	for i, process := range processes(raw) {
		keys, err := run.readResults(process, name, i)
		if err != nil {
			return nil, err
		}
		if keys != nil {
			labels[i] = keys
		}
	}
	if err := sameLabels(labels); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	run.readOutcomes(raw)
	run.dropParentFailures()
	return run, nil
}

// maxLine bounds a line of raw output the report reads (benchfmt's and
// bufio.Scanner's limit is 64 KiB): a sub-benchmark's log line can be
// longer (counters of 44591 functions).
const maxLine = 16 << 10

// boundLines cuts every line of raw longer than maxLine, saying so.
func boundLines(raw string) string {
	var b strings.Builder
	for line := range strings.Lines(raw) {
		if len(line) > maxLine {
			line = fmt.Sprintf("%s... (%d bytes cut)\n", line[:maxLine], len(line)-maxLine)
		}
		b.WriteString(line)
	}
	return b.String()
}

// process is the output of one benchmark process and the number of lines
// before it.
type process struct {
	text string
	line int
}

// processKey starts the output of each benchmark process (printConfig).
const processKey = "tracebench-kernel:"

// processes splits raw output into that of each process, cut before every
// processKey line but the first.
func processes(raw string) []process {
	var out []process
	start, startLine, line := 0, 0, 0
	for i := 0; i < len(raw); {
		end := strings.IndexByte(raw[i:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += i + 1
		}
		if i > start && strings.HasPrefix(raw[i:], processKey) {
			out = append(out, process{raw[start:i], startLine})
			start, startLine = i, line
		}
		i, line = end, line+1
	}
	return append(out, process{raw[start:], startLine})
}

// readResults reads the results of the p-th process's output; name labels
// syntax errors. It returns the sameInEveryRound keys the process printed
// (nil without results). A sub-benchmark with two results in one process
// is an error: the rounds run -test.count 1, so the output is damaged (a
// round without its processKey line runs into the one before).
func (run *run) readResults(proc process, name string, p int) (map[string]bool, error) {
	switch {
	case !strings.Contains(proc.text, processKey):
	case strings.Contains(proc.text, "\n"+suite.ApartKey+": true\n"):
		run.onceProcesses++
	default:
		run.Rounds++
		run.roundProcesses = append(run.roundProcesses, p)
	}
	var labels map[string]bool
	seen := map[Key]bool{}
	rd := benchfmt.NewReader(strings.NewReader(proc.text), name)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			rec.Line += proc.line
			return nil, rec
		case *benchfmt.Result:
			key, err := parseKey(rec.Name.Full())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			_, line := rec.Pos()
			if seen[key] {
				return nil, fmt.Errorf("%s:%d: a second result of %s in one round: the output is damaged "+
					"(a round without its %q line, or a repeated line)", name, line+proc.line, key, processKey)
			}
			seen[key] = true
			if err := run.setConfig(rec.Config, p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if labels == nil {
				labels = labelKeys(rec.Config)
			}
			if err := run.add(key, rec.Values, round(p)); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line+proc.line, err)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	run.readTrailingConfig(proc.text)
	return labels, nil
}

// readTrailingConfig records the process's "tracebench-<key>: value"
// lines, last value seen: benchfmt gives a configuration line only with
// the results after it, and one printed after the process's last result
// (a sub-benchmark's finding, e.g. where a mechanism stopped) has none.
// The labels of the report (sameInEveryRound) come from results alone.
func (run *run) readTrailingConfig(text string) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if ok && strings.HasPrefix(key, "tracebench-") && !strings.ContainsAny(key, " \t") && !sameInEveryRound[key] {
			run.config[key] = strings.TrimSpace(value)
		}
	}
}

// labelKeys returns the sameInEveryRound keys among config.
func labelKeys(config []benchfmt.Config) map[string]bool {
	keys := map[string]bool{}
	for _, c := range config {
		if sameInEveryRound[c.Key] {
			keys[c.Key] = true
		}
	}
	return keys
}

// sameLabels: every round that has results printed the same labels, so
// that no round's kernel, clock or CPUs go unchecked.
func sameLabels(byRound map[int]map[string]bool) error {
	all := map[string]bool{}
	for _, keys := range byRound {
		maps.Copy(all, keys)
	}
	for _, p := range slices.Sorted(maps.Keys(byRound)) {
		for _, k := range slices.Sorted(maps.Keys(all)) {
			if !byRound[p][k] {
				return fmt.Errorf("round %d has no %q line, which other rounds have: rounds of one report must agree", p+1, k)
			}
		}
	}
	return nil
}

// sameInEveryRound are the configuration keys that label the whole report.
var sameInEveryRound = map[string]bool{
	"tracebench-kernel": true, "tracebench-emulation": true, "tracebench-clock": true, "tracebench-cpus": true,
	"cpu": true, suite.LoopKey: true, suite.CompilerKey: true,
}

// setConfig records the configuration of a result of the p-th process;
// a round that disagrees with an earlier one on sameInEveryRound is an error.
func (run *run) setConfig(config []benchfmt.Config, p int) error {
	for _, c := range config {
		v := string(c.Value)
		if old, ok := run.config[c.Key]; ok && old != v && sameInEveryRound[c.Key] {
			return fmt.Errorf("round %d has %s %q, an earlier round %q: rounds of one report must agree", p+1, c.Key, v, old)
		}
		run.config[c.Key] = v
	}
	return nil
}

// add records the values of one result line; a value that cannot have
// been measured (NaN, infinite, 0 ns/op, or negative in a unit but a
// change's, DeltaSuffix) is an error.
func (run *run) add(key Key, values []benchfmt.Value, rd round) error {
	units := run.samples[key]
	if units == nil {
		units = map[string][]float64{}
		run.samples[key] = units
		run.rounds[key] = map[string][]round{}
	}
	for _, v := range values {
		// benchfmt rescales ns to seconds; keep what was printed.
		value, unit := v.Value, v.Unit
		if v.OrigUnit != "" {
			value, unit = v.OrigValue, v.OrigUnit
		}
		if math.IsNaN(value) || math.IsInf(value, 0) || value < 0 && !strings.HasSuffix(unit, DeltaSuffix) ||
			value == 0 && unit == "ns/op" {
			return fmt.Errorf("%s: %v %s is not a measured value", key, value, unit)
		}
		units[unit] = append(units[unit], value)
		run.rounds[key][unit] = append(run.rounds[key][unit], rd)
	}
	return nil
}

// parseKey splits "vfsRead/fsession/tgid-miss-2" (as benchfmt gives the
// name, without "Benchmark") into a Key; the GOMAXPROCS suffix is dropped.
func parseKey(full []byte) (Key, error) {
	base, parts := benchfmt.Name(full).Parts()
	var sub []string
	for _, p := range parts {
		if p[0] == '/' {
			sub = append(sub, string(p[1:]))
		}
	}
	k := Key{bench: string(base)}
	switch {
	case len(sub) == 1 && (sub[0] == Baseline || familyOf(k.bench) != nil && familyOf(k.bench).flat):
		k.Mechanism = sub[0]
	case len(sub) == 2:
		k.Mechanism, k.Case = sub[0], sub[1]
	default:
		return Key{}, fmt.Errorf("benchmark %q is neither <bench>/baseline nor <bench>/<mechanism>/<case>", full)
	}
	return k, nil
}

// readOutcomes collects skip and failure messages. In -v output the
// messages a sub-benchmark logs are printed indented, right before its
// "--- SKIP: name" or "--- FAIL: name" line.
func (run *run) readOutcomes(raw string) {
	var msgs []string
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "    ") {
			msgs = append(msgs, stripLocation(strings.TrimSpace(line)))
			continue
		}
		for prefix, into := range map[string]map[Key]string{"--- SKIP: ": run.Skipped, "--- FAIL: ": run.Failed} {
			name, ok := strings.CutPrefix(line, prefix)
			if !ok {
				continue
			}
			name = strings.TrimPrefix(name, "Benchmark")
			key, err := parseKey([]byte(name))
			if err != nil {
				// A whole benchmark (e.g. not run as root).
				key = Key{bench: name}
			}
			into[key] = strings.Join(msgs, "; ")
			if prefix == "--- FAIL: " {
				run.failedIn[key]++
			}
		}
		msgs = nil
	}
}

// dropParentFailures removes the message-less "--- FAIL: BenchmarkX" that
// go test prints for a benchmark when one of its sub-benchmarks failed:
// the sub-benchmark's failure already says why.
func (run *run) dropParentFailures() {
	for parent, msg := range run.Failed {
		if parent.Mechanism != "" || msg != "" {
			continue
		}
		for k := range run.Failed {
			if k.bench == parent.bench && k.Mechanism != "" {
				delete(run.Failed, parent)
				delete(run.failedIn, parent)
				break
			}
		}
	}
}

// stripLocation removes the "file_test.go:123: " prefix of a logged line.
func stripLocation(line string) string {
	loc, msg, ok := strings.Cut(line, ": ")
	if ok && strings.Contains(loc, ".go:") && !strings.Contains(loc, " ") {
		return msg
	}
	return line
}
