package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tracebench/bench/report"
	"tracebench/matrix"
)

// kernelsUsage documents `bench kernels`.
const kernelsUsage = `usage: bench kernels DIR OUT.md | bench kernels --list

Compares the overhead runs below DIR (DIR/<kernel>/, each written by bench
run under icount: make bench-kernels) kernel by kernel: OUT.md, with
DIR/` + report.PerfMatrixJSON + ` (every figure) and DIR's charts. A run of another
family or clock, or two runs of one kernel, is an error naming the
directory. The kernels of matrix/kernels.tsv that bench-kernels cannot boot
are listed as not measured, with why.

--list prints the selectors of the kernels.tsv rows it can boot, comma-
separated: make bench-kernels' default BENCH_KERNELS.
`

// kernelsMain writes the perf matrix of the runs below dir into out.
func kernelsMain(dir, out string) error {
	runs, err := report.PerfMatrixRuns(dir)
	if err != nil {
		return err
	}
	_, unmeasured, err := kernelRows()
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

// icountHangs are the full kernels.tsv rows whose guest does not boot
// under icount with the overhead family's 2 vCPUs, with what was seen.
var icountHangs = map[string]string{
	"bookworm:6.1": "under icount its boot stops after \"x86: Booting SMP configuration:\" with 2 vCPUs " +
		"(6.1.0-50, no output for 180 s; it boots with 1 vCPU in 30 s, 6.12 with 2 in 36 s)",
	"bullseye:5.10": "under icount its boot stops after \"x86: Booting SMP configuration:\" with 2 vCPUs " +
		"(5.10.0-32, no output for 240 s)",
}

// kernelRows splits kernels.tsv's rows into those bench run can boot
// under icount and, for the others, "<selector> (<why not>)". bench run
// starts its guests through vm/run.sh (virtme-ng), which needs a full
// kernel of the host's architecture.
func kernelRows() (bootable, unmeasured []string, err error) {
	f, err := os.Open(kernelsTSV)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	exp, err := matrix.ParseExpectations(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kernelsTSV, err)
	}
	for _, k := range exp.Kernels {
		switch hang, ok := icountHangs[k.Selector]; {
		case k.Packages != matrix.Full:
			unmeasured = append(unmeasured, fmt.Sprintf("%s (packages %s: vm/run.sh cannot boot it)", k.Selector, k.Packages))
		case ok:
			unmeasured = append(unmeasured, fmt.Sprintf("%s (%s)", k.Selector, hang))
		default:
			bootable = append(bootable, k.Selector)
		}
	}
	return bootable, unmeasured, nil
}

var errKernelsUsage = errors.New("bench kernels takes DIR and OUT.md")

// kernelsCommand runs `bench kernels args...`.
func kernelsCommand(args []string, stdout io.Writer) int {
	if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
		fmt.Fprint(stdout, kernelsUsage)
		return 0
	}
	if len(args) == 1 && args[0] == "--list" {
		err := toModuleRoot()
		var bootable []string
		if err == nil {
			bootable, _, err = kernelRows()
		}
		if err != nil {
			logf("error: %v", err)
			return 1
		}
		fmt.Fprintln(stdout, strings.Join(bootable, ","))
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
