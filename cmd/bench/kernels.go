package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"tracebench/bench/report"
	"tracebench/matrix"
)

// kernelsUsage documents `bench kernels`.
const kernelsUsage = `usage: bench kernels DIR OUT.md

Compares the overhead runs below DIR (DIR/<kernel>/, each written by bench
run under icount: make bench-kernels) kernel by kernel: OUT.md, with
DIR/` + report.PerfMatrixJSON + ` (every figure) and DIR's charts. A run of another
family or clock, or two runs of one kernel, is an error naming the
directory. The kernels of matrix/kernels.tsv that bench-kernels cannot boot
are listed as not measured, with why.
`

// kernelsMain writes the perf matrix of the runs below dir into out.
func kernelsMain(dir, out string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var runs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), report.RawFile)); e.IsDir() && err == nil {
			runs = append(runs, filepath.Join(dir, e.Name()))
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s holds no run (no */%s): run make bench-kernels first", dir, report.RawFile)
	}
	unmeasured, err := unbootable()
	if err != nil {
		return err
	}
	pm, err := report.LoadPerfMatrix(runs, unmeasured)
	if err != nil {
		return err
	}
	if err := writeFile(out, func(f *os.File) error { return pm.WriteMarkdown(f, filepath.Dir(out), dir) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, report.PerfMatrixJSON), func(f *os.File) error { return pm.JSON(f) }); err != nil {
		return err
	}
	for _, c := range pm.Charts() {
		if err := writeFile(filepath.Join(dir, c.File), func(f *os.File) error { return c.Draw(f, "svg") }); err != nil {
			return err
		}
	}
	logf("perf matrix of %d kernels written to %s", len(pm.Columns), out)
	return nil
}

// kernelsTSV is the kernel matrix's table, relative to the module root.
const kernelsTSV = "matrix/kernels.tsv"

// unbootable lists the kernels.tsv rows bench run cannot boot: it runs
// its guests through vm/run.sh (virtme-ng), which needs the kernel's
// modules and 9p and the host's architecture.
func unbootable() ([]string, error) {
	f, err := os.Open(kernelsTSV)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kernelsTSV, err)
	}
	var out []string
	for _, k := range exp.Kernels {
		if k.Packages != matrix.Full {
			out = append(out, fmt.Sprintf("%s (%s)", k.Selector, k.Packages))
		}
	}
	return out, nil
}

var errKernelsUsage = errors.New("bench kernels takes DIR and OUT.md")

// kernelsCommand runs `bench kernels args...`.
func kernelsCommand(args []string, stdout io.Writer) int {
	if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
		fmt.Fprint(stdout, kernelsUsage)
		return 0
	}
	if len(args) != 2 {
		logf("%v (see --help)", errKernelsUsage)
		return 2
	}
	paths, err := absolute(args)
	if err == nil {
		err = toModuleRoot()
	}
	if err == nil {
		err = kernelsMain(paths[0], paths[1])
	}
	if err != nil {
		logf("error: %v", err)
		return 1
	}
	return 0
}
