package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"tracebench/bench/report"
)

// reportUsage documents `bench report`.
const reportUsage = `usage: bench report DIR...

Writes the report of each benchmark run in DIR from its raw.txt (the
` + "`go test -bench -v`" + ` output of every round) and meta.txt (written by
bench run): README.md, and each shown family's charts and benchstat
comparisons (the overhead family: overhead.svg, benchstat-vs-baseline.txt,
benchstat-vs-fentry-fexit.txt). ` + "`make bench-report`" + ` runs it on every
report in BENCH_RESULTS.

A family with nothing to draw or compare (e.g. every mechanism skipped on
this kernel) gets a README.md that says so and why, and no chart or
comparison; one left in DIR by an earlier run is removed. That is no error:
bench report says so on stderr.

Bad input writes nothing and exits 1: a value no benchmark measures (NaN,
infinite, negative, 0 ns/op), rounds that disagree on kernel, emulation,
clock or CPUs, or a raw.txt without a round or a result while meta.txt says
rounds were run. A run in which a sub-benchmark dropped events in some round
is no comparison (a dropped event skips work a consumed one does): its
report is written in full and says so first, and bench report exits 3 after
every DIR, naming the sub-benchmarks.
`

// reportMain writes the report in each of dirs: 0, exitDrops after a run
// that dropped events, or 1 on the first report it cannot write.
func reportMain(dirs []string) int {
	status := 0
	for _, dir := range dirs {
		err := writeReport(dir, os.Stderr)
		var drops *dropsError
		switch {
		case errors.As(err, &drops):
			logf("%v", err)
			status = exitDrops
		case err != nil:
			logf("error: %s: %v", dir, err)
			return 1
		default:
			logf("report written to %s", dir)
		}
	}
	return status
}

// exitDrops is the exit status of a report written for a run that dropped
// events, told apart from a failure to write one.
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

// writeReport writes the report in dir; stderr gets why a family has no
// chart or comparison, if so. With drops, the report is written and a
// *dropsError returned.
func writeReport(dir string, stderr io.Writer) error {
	summary, err := write(dir, stderr)
	if err != nil {
		return err
	}
	if len(summary.Drops) > 0 {
		return &dropsError{dir: dir, drops: summary.Drops}
	}
	return nil
}

// write writes the report in dir and returns its summary.
func write(dir string, stderr io.Writer) (*report.Summary, error) {
	loaded, err := report.Load(dir)
	if err != nil {
		return nil, err
	}
	raw, meta, summary := loaded.Raw, loaded.Meta, loaded.Summary
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
	// The shown families' charts and benchstat comparisons, or why not.
	var why, stale []string
	for _, p := range summary.Shown(summary.RunFamily(meta)) {
		charts, comparisons := p.Part.Charts(summary), p.Part.Comparisons()
		if w := p.Part.Without(); w != "" {
			why = append(why, w)
			for _, c := range charts {
				stale = append(stale, c.File)
			}
			for _, c := range comparisons {
				stale = append(stale, c.File)
			}
			continue
		}
		for _, c := range charts {
			outputs = append(outputs, output{path: filepath.Join(dir, c.File), write: func(w io.Writer) error { return c.Draw(w, "svg") }})
		}
		for _, c := range comparisons {
			outputs = append(outputs, output{path: filepath.Join(dir, c.File), write: func(w io.Writer) error { return benchstat(w, c, raw) }})
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
	// What an earlier run left would contradict the README.
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	for _, w := range why {
		fmt.Fprintf(stderr, "bench: %s; see %s\n", w, readme)
	}
	return summary, nil
}

// benchstat writes `go tool benchstat` of c's input from raw to w.
func benchstat(w io.Writer, c report.Comparison, raw []byte) error {
	input, err := os.CreateTemp("", "benchstat-input-*.txt")
	if err != nil {
		return err
	}
	defer os.Remove(input.Name())
	err = c.Input(input, bytes.NewReader(raw))
	if cerr := input.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", append(append([]string{"tool", "benchstat"}, c.Args...), input.Name())...)
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go tool benchstat: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
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

// defaultResults is bench.mk's BENCH_RESULTS.
const defaultResults = "results"

// regenerateCommand is the command that regenerates the report in dir:
// `make bench-report` regenerates every report in BENCH_RESULTS, so with
// BENCH_RESULTS set to dir's parent, left out if that is the default. The
// parent is given relative to the working directory if it lies below it
// (bench works in the module's root, where make runs), else as an absolute
// path.
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

// writeFile writes path through write, replacing it only when complete.
func writeFile(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, errors.Unwrap(err))
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
