// Command benchreport writes the report of a benchmark run: given a
// directory holding raw.txt (the `go test -bench -v` output of every
// round) and meta.txt (written by bench/run.sh), it writes README.md (the
// summary) and overhead.svg (the chart) there, and, with -benchstat-dir,
// the two inputs bench/report.sh feeds to benchstat.
//
// A run in which no mechanism has an overhead over baseline (on a kernel
// that lacks every mechanism, all are skipped) gets a README.md that says
// so and why, and neither chart nor benchstat inputs; a chart or benchstat
// comparison left in the directory by an earlier run is removed. That is
// not an error: benchreport says so on stderr and exits 0.
//
// Bad input writes nothing and exits 1: a value no benchmark measures (NaN,
// infinite, negative, 0 ns/op), rounds that disagree on kernel, emulation,
// clock or CPUs, or a raw.txt without a round or a result while meta.txt
// says rounds were run.
//
// A run in which a sub-benchmark dropped events in some round is no
// comparison (a dropped event skips work a consumed one does): benchreport
// writes the whole report, which says so first, and then exits 3 naming
// the sub-benchmarks, so that bench/run.sh and `make bench` fail.
//
//	go run ./cmd/benchreport -dir results/<kernel> [-benchstat-dir DIR] [-png FILE]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"tracebench/bench/report"
)

func main() {
	dir := flag.String("dir", "", "directory with "+report.RawFile+" and "+report.MetaFile+"; the report is written there")
	benchstatDir := flag.String("benchstat-dir", "",
		"if set, write vs-baseline.txt and vs-"+report.Reference+".txt, benchstat's inputs, there")
	png := flag.String("png", "",
		"if set, also write the chart as PNG to this file (a preview; the report links the SVG); not written without a chart")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	err := run(*dir, *benchstatDir, *png, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
	}
	var drops *dropsError
	switch {
	case errors.As(err, &drops):
		os.Exit(exitDrops)
	case err != nil:
		os.Exit(1)
	}
}

// exitDrops is the exit status of a report written for a run that dropped
// events; bench/report.sh tells it from a failure to write one.
const exitDrops = 3

// dropsError lists the sub-benchmarks that dropped events.
type dropsError struct {
	dir   string
	drops []report.Drop
}

func (e *dropsError) Error() string {
	var subs []string
	for _, d := range e.drops {
		subs = append(subs, fmt.Sprintf("%s/%s (%d of %d rounds, up to %.0f/s)", d.Mechanism, d.Case, d.Rounds, d.Of, d.Max))
	}
	return fmt.Sprintf("events were dropped, so the mechanisms did different work and the run is no comparison: "+
		"%s; see %s",
		strings.Join(subs, ", "), filepath.Join(e.dir, "README.md"))
}

// run writes the report in dir; stderr gets why there is no chart, if so.
// With drops, the report is written and a *dropsError returned.
func run(dir, benchstatDir, png string, stderr io.Writer) error {
	summary, err := write(dir, benchstatDir, png, stderr)
	if err != nil {
		return err
	}
	if len(summary.Drops) > 0 {
		return &dropsError{dir: dir, drops: summary.Drops}
	}
	return nil
}

// write writes the report in dir and returns its summary.
func write(dir, benchstatDir, png string, stderr io.Writer) (*report.Summary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, report.RawFile))
	if err != nil {
		return nil, err
	}
	meta, err := readMeta(filepath.Join(dir, report.MetaFile))
	if err != nil {
		return nil, err
	}
	parsed, err := report.Parse(bytes.NewReader(raw), report.RawFile)
	if err != nil {
		return nil, err
	}
	if err := checkMeasured(parsed, meta); err != nil {
		return nil, err
	}
	summary := report.Summarize(parsed)
	regenerate, err := regenerateCommand(dir)
	if err != nil {
		return nil, err
	}
	// Everything is drawn before anything is written: a failure leaves the
	// directory as it was.
	readme := filepath.Join(dir, "README.md")
	outputs := []output{{path: readme, write: func(w io.Writer) error {
		return report.WriteMarkdown(w, summary, meta, regenerate)
	}}}
	why := summary.NoOverhead()
	if why == "" {
		outputs = append(outputs, output{path: filepath.Join(dir, report.ChartFile), write: func(w io.Writer) error {
			return report.WriteChart(w, summary, "svg")
		}})
		if png != "" {
			outputs = append(outputs, output{path: png, write: func(w io.Writer) error {
				return report.WriteChart(w, summary, "png")
			}})
		}
	}
	for i := range outputs {
		if err := outputs[i].render(); err != nil {
			return nil, err
		}
	}
	for _, o := range outputs {
		if err := writeFile(o.path, func(f *os.File) error { _, err := f.Write(o.text.Bytes()); return err }); err != nil {
			return nil, err
		}
	}
	if why != "" {
		// Nothing to draw or compare; what an earlier run left would
		// contradict the README.
		for _, name := range []string{report.ChartFile, report.BenchstatBaselineFile, report.BenchstatReferenceFile} {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		fmt.Fprintf(stderr, "benchreport: %s; see %s\n", why, readme)
		return summary, nil
	}
	if benchstatDir == "" {
		return summary, nil
	}
	inputs := map[string]func(f *os.File) error{
		"vs-baseline.txt": func(f *os.File) error {
			return report.WriteBenchstatInput(f, bytes.NewReader(raw), report.Baseline)
		},
		"vs-" + report.Reference + ".txt": func(f *os.File) error {
			return report.WriteBenchstatInput(f, bytes.NewReader(raw), report.Reference, report.Baseline)
		},
	}
	for name, write := range inputs {
		if err := writeFile(filepath.Join(benchstatDir, name), write); err != nil {
			return nil, err
		}
	}
	return summary, nil
}

// output is a file of the report, drawn in memory first.
type output struct {
	path  string
	write func(io.Writer) error
	text  bytes.Buffer
}

func (o *output) render() error {
	if err := o.write(&o.text); err != nil {
		return fmt.Errorf("%s: %w", o.path, err)
	}
	return nil
}

// checkMeasured refuses a raw.txt without a round or without a benchmark
// line when meta.txt says rounds were run: the rounds' output was lost, and
// a report would say nothing was measured.
func checkMeasured(run *report.Run, meta report.Meta) error {
	rounds := meta.Get("rounds")
	if n, err := strconv.Atoi(rounds); err != nil || n <= 0 {
		return nil
	}
	switch {
	case run.Rounds == 0:
		return fmt.Errorf("%s says %s rounds were run, but %s has no round (no tracebench-kernel: line)",
			report.MetaFile, rounds, report.RawFile)
	case len(run.Samples) == 0 && len(run.Skipped) == 0 && len(run.Failed) == 0:
		return fmt.Errorf("%s says %s rounds were run, but %s has no benchmark result, skip or failure",
			report.MetaFile, rounds, report.RawFile)
	}
	return nil
}

// defaultResults is bench.mk's BENCH_RESULTS.
const defaultResults = "results"

// regenerateCommand is the command that regenerates the report in dir:
// `make bench-report` regenerates every report in BENCH_RESULTS, so with
// BENCH_RESULTS set to dir's parent, left out if that is the default. The
// parent is given relative to the working directory if it lies below it
// (bench/report.sh and `go run ./cmd/benchreport` run in the repository's
// root, as make does), else as an absolute path.
func regenerateCommand(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	results := filepath.Dir(abs)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, results); err == nil && filepath.IsLocal(rel) {
			results = rel
		}
	}
	if results == defaultResults {
		return "make bench-report", nil
	}
	return "make bench-report BENCH_RESULTS=" + shellQuote(results), nil
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell if it needs quoting.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readMeta reads meta.txt; a run without one (e.g. raw output copied by
// hand) still gets a report.
func readMeta(path string) (report.Meta, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return report.ParseMeta(f)
}

// writeFile writes path through write, replacing it only when complete.
func writeFile(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
