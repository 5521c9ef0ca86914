// Command matrix runs the scenario test binary in a guest for each
// selected kernel of matrix/kernels.tsv, one after the other, writes each
// kernel's outcomes to its own outcome file (results/matrix/<kernel>.json)
// and merges every outcome file there into results/matrix.md, so that a
// subset run replaces only its own columns. With -merge it runs nothing
// and merges outcome files that separate jobs wrote (CI shards); with
// -check it runs nothing and holds one guest output (`make test`'s) to the
// -only kernel's column. It exits 1 when a kernel it ran (with -merge: any
// kernel, or a missing outcome file) differs from the table; see
// matrix/README.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"tracebench/internal/hostload"
	"tracebench/matrix"
)

type options struct {
	kernels    string
	only       string
	bin        string
	cli        string // the CLI's test binary, also run ("": not)
	mechanisms string // the only ones run, their TableTest rows alone ("": all)
	guests     int
	weights    string // directory of committed outcome files, for Split's weights
	out        string
	outcomes   string
	merge      bool
	logs       string
	vmDir      string
	timeout    time.Duration
	quietWait  time.Duration
	arches     bool // print the selected kernels' other architectures instead of running
	table      bool // print each kernel's outcome table after its run
}

func main() {
	var opt options
	flag.StringVar(&opt.kernels, "kernels", "matrix/kernels.tsv", "the kernels and their expected support")
	flag.StringVar(&opt.only, "only", "", "comma-separated selectors of kernels.tsv to run (default: all)")
	flag.StringVar(&opt.bin, "bin", ".cache/bin/scenarios.test", "the static scenario test binary")
	flag.StringVar(&opt.cli, "cli", "", "the static CLI test binary, also run in each kernel (make test)")
	flag.StringVar(&opt.mechanisms, "mechanisms", "",
		"comma-separated mechanisms to run alone: their scenario rows, checked against their columns, "+
			"without the CLI's tests or the other scenario tests (needs -out '' and no -cli)")
	flag.IntVar(&opt.guests, "guests", 1, "guests to divide each kernel's run over, side by side")
	flag.StringVar(&opt.weights, "weights", "results/matrix",
		"committed outcome files whose durations divide a kernel's run when -outcomes has none for it")
	flag.BoolVar(&opt.table, "table", false, "print each kernel's outcome table after its run")
	flag.StringVar(&opt.out, "out", "results/matrix.md", "the report to write (empty: none, only outcome files)")
	flag.StringVar(&opt.outcomes, "outcomes", "results/matrix",
		"directory of outcome files: a run writes one per kernel there; the report merges every *.json below it")
	flag.BoolVar(&opt.merge, "merge", false, "run no kernel: merge the outcome files into the report")
	flag.StringVar(&opt.logs, "logs", ".cache/matrix", "directory for each kernel's full guest output")
	flag.StringVar(&opt.vmDir, "vm", "vm", "directory of the guest scripts")
	flag.DurationVar(&opt.timeout, "timeout", 20*time.Minute, "limit for one amd64 kernel's guest run (another architecture's: matrix.Arch.Slowdown times it)")
	flag.DurationVar(&opt.quietWait, "quiet-wait", 0,
		"first wait up to this long for other QEMU guests on the host to end")
	flag.BoolVar(&opt.arches, "arches", false,
		"run nothing: print the architectures (Debian's names) of the -only kernels other than the host's, "+
			"one per line (make builds their scenario binaries)")
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

// run runs every selected kernel, writing its outcome file and the merged
// report after each one, so that an interrupted matrix still leaves what
// it has. It returns the exit code: 0 as expected, 1 with mismatches.
func run(opt options) (int, error) {
	exp, err := matrix.LoadExpectations(opt.kernels)
	if err != nil {
		return 0, err
	}
	if opt.merge && opt.only != "" {
		return 0, fmt.Errorf("-merge merges every kernel's outcome file: it takes no -only")
	}
	if opt.merge {
		return mergeOnly(opt, exp)
	}
	all := exp.Mechanisms
	if exp, err = onlyMechanisms(opt, exp); err != nil {
		return 0, err
	}
	if opt.guests < 1 || opt.guests > runtime.NumCPU() {
		return 0, fmt.Errorf("-guests %d: want 1 to the host's %d CPUs (each guest is a single-threaded emulator)",
			opt.guests, runtime.NumCPU())
	}
	var only []string
	if opt.only != "" {
		only = strings.Split(opt.only, ",")
	}
	kernels, err := exp.Select(only)
	if err != nil {
		return 0, err
	}
	if opt.arches {
		printArches(os.Stdout, kernels)
		return 0, nil
	}
	for _, k := range kernels {
		if _, err := os.Stat(archBinary(opt.bin, k.Arch().Debian)); err != nil {
			return 0, fmt.Errorf("scenario test binary for %s (%s): %w (make builds it)", k.Arch().Debian, k.Selector, err)
		}
		if _, err := os.Stat(archBinary(opt.cli, k.Arch().Debian)); opt.cli != "" && err != nil {
			return 0, fmt.Errorf("CLI test binary for %s (%s): %w (make builds it)", k.Arch().Debian, k.Selector, err)
		}
	}
	origin := matrix.Origin{Started: time.Now(), Commit: gitCommit(), Host: hostDescription()}
	origin.QuietWait, origin.OthersAtStart = waitQuiet(opt.quietWait)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := guest{opt: opt, all: all, mechanisms: exp.Mechanisms, ctx: ctx}
	var mismatches []matrix.Mismatch
	for i, k := range kernels {
		progressf("== [%d/%d] %s", i+1, len(kernels), k.Selector)
		r := g.run(k)
		if ctx.Err() != nil {
			return 0, fmt.Errorf("interrupted during %s: its guests were sent SIGTERM and have ended; its outcome file was not written", k.Selector)
		}
		r.Origin = origin
		if err := writeShard(opt.outcomes, r); err != nil {
			return 0, err
		}
		if opt.out != "" {
			if _, err := writeMerged(opt, exp); err != nil {
				return 0, err
			}
		}
		if opt.table && r.Outcomes != nil {
			if err := r.Outcomes.WriteTable(os.Stdout); err != nil {
				return 0, err
			}
		}
		mismatches = append(mismatches, matrix.Check(exp, r)...)
		for _, e := range r.KernelErrors {
			if r.Expected(e) {
				progressf("%s: the kernel reported %q during %s, as kernels.tsv's warns says", k.Selector, e.Line, e.Test)
			}
		}
		progressf("%s: %s", k.Selector, summary(exp, r))
	}
	for _, m := range mismatches {
		progressf("mismatch: %s", m)
	}
	progressf("%d kernels in %s, mismatches: %d; outcome files in %s, report %s",
		len(kernels), time.Since(origin.Started).Round(time.Second), len(mismatches), opt.outcomes, orNone(opt.out))
	return exitFor(mismatches), nil
}

// onlyMechanisms returns exp with -mechanisms' columns alone (all of
// them without it); a subset run is refused a report or the CLI's tests.
func onlyMechanisms(opt options, exp matrix.Expectations) (matrix.Expectations, error) {
	switch {
	case opt.mechanisms == "":
		return exp, nil
	case opt.out != "":
		return exp, fmt.Errorf("-mechanisms %s runs part of each column: it writes no report (give -out '')", opt.mechanisms)
	case opt.cli != "":
		return exp, fmt.Errorf("-mechanisms %s runs the mechanisms' scenario rows alone: it takes no -cli", opt.mechanisms)
	}
	only, err := exp.Only(strings.Split(opt.mechanisms, ","))
	if err != nil {
		return exp, fmt.Errorf("-mechanisms: %w", err)
	}
	return only, nil
}

// mergeOnly writes the report of the outcome files; every kernel of the
// table counts, a missing outcome file as a mismatch.
func mergeOnly(opt options, exp matrix.Expectations) (int, error) {
	if opt.out == "" {
		return 0, fmt.Errorf("-merge needs -out")
	}
	// A wrong -outcomes would otherwise write a report of missing kernels.
	if _, err := os.Stat(opt.outcomes); err != nil {
		return 0, fmt.Errorf("-merge: outcomes directory: %w", err)
	}
	rep, err := writeMerged(opt, exp)
	if err != nil {
		return 0, err
	}
	mismatches := rep.Mismatches()
	for _, m := range mismatches {
		progressf("mismatch: %s", m)
	}
	progressf("merged %d outcome files of %d kernels, mismatches: %d; wrote %s",
		len(rep.Runs)-countMissing(rep), len(exp.Kernels), len(mismatches), opt.out)
	return exitFor(mismatches), nil
}

func exitFor(mismatches []matrix.Mismatch) int {
	if len(mismatches) > 0 {
		return 1
	}
	return 0
}

func countMissing(rep matrix.Report) int {
	n := 0
	for _, r := range rep.Runs {
		if r.Origin.Started.IsZero() {
			n++
		}
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "not written (-out is empty)"
	}
	return s
}

func summary(exp matrix.Expectations, r matrix.Run) string {
	if n := len(matrix.Check(exp, r)); n > 0 {
		return fmt.Sprintf("not as expected, mismatches: %d (%s, exit %d, %s)",
			n, orUnknown(r.ABI), r.Exit, r.Duration.Round(time.Second))
	}
	return fmt.Sprintf("as expected (%s, %s)", r.ABI, r.Duration.Round(time.Second))
}

func orUnknown(s string) string {
	if s == "" {
		return "kernel unknown"
	}
	return s
}

// writeMerged merges every outcome file below opt.outcomes into the
// report at opt.out.
func writeMerged(opt options, exp matrix.Expectations) (matrix.Report, error) {
	runs, sources, err := matrix.ReadShards(opt.outcomes)
	if err != nil {
		return matrix.Report{}, err
	}
	rep, err := matrix.Merge(exp, runs, sources)
	if err != nil {
		return matrix.Report{}, err
	}
	return rep, replaceFile(opt.out, rep.WriteMarkdown)
}

func writeShard(dir string, r matrix.Run) error {
	return replaceFile(filepath.Join(dir, matrix.ShardName(r.Kernel.Selector)), func(w io.Writer) error {
		return matrix.WriteShard(w, r)
	})
}

// replaceFile replaces path with what write writes, through a temporary
// file, so that readers never see half a file.
func replaceFile(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// gitCommit names the tree's commit, "-dirty" when files other than the
// results differ from it.
func gitCommit() string {
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(head))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!results").Output()
	if err != nil || len(bytes.TrimSpace(status)) > 0 {
		commit += "-dirty"
	}
	return commit
}

func hostDescription() string {
	return fmt.Sprintf("a %d-CPU host (%s, Linux %s, %s)", runtime.NumCPU(), hostload.CPUModel(), hostload.Release(), qemuVersion())
}

// printArches writes the Debian names of the kernels' architectures other
// than the host's, each once, in the kernels' order.
func printArches(w io.Writer, kernels []matrix.Kernel) {
	var seen []string
	for _, k := range kernels {
		if a := k.Arch().Debian; a != matrix.HostArch && !slices.Contains(seen, a) {
			seen = append(seen, a)
			fmt.Fprintln(w, a)
		}
	}
}
