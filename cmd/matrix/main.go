// Command matrix runs the scenario test binary in a guest for each kernel
// of matrix/kernels.tsv, one after the other, and writes the outcomes and
// their comparison with the table to results/matrix.md. It exits 1 when a
// kernel differs from the table (or could not be fetched or booted), after
// running all the others. `make matrix` builds the binary and runs it; see
// matrix/README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"tracebench/matrix"
)

type options struct {
	kernels   string
	only      string
	bin       string
	out       string
	logs      string
	vmDir     string
	timeout   time.Duration
	quietWait time.Duration
}

func main() {
	var opt options
	flag.StringVar(&opt.kernels, "kernels", "matrix/kernels.tsv", "the kernels and their expected support")
	flag.StringVar(&opt.only, "only", "", "comma-separated selectors of kernels.tsv to run (default: all)")
	flag.StringVar(&opt.bin, "bin", ".cache/bin/scenarios.test", "the static scenario test binary")
	flag.StringVar(&opt.out, "out", "results/matrix.md", "the report to write")
	flag.StringVar(&opt.logs, "logs", ".cache/matrix", "directory for each kernel's full guest output")
	flag.StringVar(&opt.vmDir, "vm", "vm", "directory of the guest scripts")
	flag.DurationVar(&opt.timeout, "timeout", 20*time.Minute, "limit for one kernel's guest run")
	flag.DurationVar(&opt.quietWait, "quiet-wait", 0, "first wait up to this long for other QEMU guests on the host to end")
	flag.Parse()
	if flag.NArg() > 0 {
		fatalf("unexpected arguments %q", flag.Args())
	}
	code, err := run(opt)
	if err != nil {
		fatalf("%v", err)
	}
	os.Exit(code)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "matrix: "+format+"\n", args...)
	os.Exit(2)
}

func progressf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "matrix: "+format+"\n", args...)
}

// run runs every selected kernel and writes the report after each one, so
// that an interrupted matrix still leaves what it has. It returns the exit
// code: 0 as expected, 1 with mismatches.
func run(opt options) (int, error) {
	exp, err := loadExpectations(opt.kernels)
	if err != nil {
		return 0, err
	}
	var only []string
	if opt.only != "" {
		only = strings.Split(opt.only, ",")
	}
	kernels, err := exp.Select(only)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(opt.bin); err != nil {
		return 0, fmt.Errorf("scenario test binary: %w (make builds it)", err)
	}
	rep := matrix.Report{Expect: exp, Started: time.Now(), Host: hostDescription()}
	rep.QuietWait, rep.OthersAtStart = waitQuiet(opt.quietWait)
	g := guest{opt: opt, mechanisms: exp.Mechanisms}
	for i, k := range kernels {
		progressf("== [%d/%d] %s", i+1, len(kernels), k.Selector)
		r := g.run(k)
		rep.Runs = append(rep.Runs, r)
		rep.Elapsed = time.Since(rep.Started)
		if err := writeReport(opt.out, rep); err != nil {
			return 0, err
		}
		progressf("%s: %s", k.Selector, summary(exp, r))
	}
	mismatches := rep.Mismatches()
	for _, m := range mismatches {
		progressf("mismatch: %s", m)
	}
	progressf("%d kernels in %s, mismatches: %d; wrote %s", len(kernels), rep.Elapsed.Round(time.Second), len(mismatches), opt.out)
	if len(mismatches) > 0 {
		return 1, nil
	}
	return 0, nil
}

func loadExpectations(path string) (matrix.Expectations, error) {
	f, err := os.Open(path)
	if err != nil {
		return matrix.Expectations{}, err
	}
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	if err != nil {
		return matrix.Expectations{}, fmt.Errorf("%s: %w", path, err)
	}
	return exp, nil
}

func summary(exp matrix.Expectations, r matrix.Run) string {
	if n := len(matrix.Check(exp, r)); n > 0 {
		return fmt.Sprintf("not as expected, mismatches: %d (%s, exit %d, %s)", n, orUnknown(r.ABI), r.Exit, r.Duration.Round(time.Second))
	}
	return fmt.Sprintf("as expected (%s, %s)", r.ABI, r.Duration.Round(time.Second))
}

func orUnknown(s string) string {
	if s == "" {
		return "kernel unknown"
	}
	return s
}

// writeReport replaces path with the rendered report.
func writeReport(path string, rep matrix.Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := rep.WriteMarkdown(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func hostDescription() string {
	return fmt.Sprintf("a %d-CPU host (Linux %s, %s)", runtime.NumCPU(), hostRelease(), qemuVersion())
}
