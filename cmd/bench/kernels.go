package main

import (
	"cmp"
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
run under icount: make bench-kernels) kernel by kernel, with the growth
run of each that has one (DIR/<kernel>/growth/: its read path, Start and
Close): OUT.md, with DIR/` + report.PerfMatrixJSON + ` (every figure) and DIR's
charts. A run of another family, clock, kernel or CPU count than its
place says, or two runs of one kernel, is an error naming the directory. The kernels of matrix/kernels.tsv that bench-kernels cannot boot
are listed as not measured, with why.

--list prints the selectors of the kernels.tsv rows it can boot, comma-
separated: make bench-kernels' default BENCH_KERNELS.
`

// kernelsMain writes the perf matrix of the runs below dir into out: every
// file rendered first, then written, so that an error leaves the last
// matrix whole.
func kernelsMain(dir, out string) error {
	runs, err := report.PerfMatrixRuns(dir)
	if err != nil {
		return err
	}
	pm, err := report.LoadPerfMatrix(runs, nil)
	if err != nil {
		return err
	}
	if pm.Unmeasured, err = unmeasured(pm); err != nil {
		return err
	}
	files := []output{
		{path: out, write: func(w io.Writer) error { return pm.WriteMarkdown(w, filepath.Dir(out), dir) }},
		{path: filepath.Join(dir, report.PerfMatrixJSON), write: pm.JSON},
	}
	for _, c := range pm.Charts() {
		files = append(files, output{path: filepath.Join(dir, c.File), write: func(w io.Writer) error { return c.Draw(w, "svg") }})
	}
	for i := range files {
		if err := files[i].render(); err != nil {
			return err
		}
	}
	for i := range files {
		if err := writeFile(files[i].path, func(f *os.File) error { _, err := f.Write(files[i].text.Bytes()); return err }); err != nil {
			return err
		}
	}
	logf("perf matrix of %d kernels written to %s", len(pm.Columns), out)
	return nil
}

// unmeasured lists the kernels.tsv rows pm has no run of, each with why:
// bench run cannot boot it, or DIR holds no run of it (e.g. its CI job
// failed).
func unmeasured(pm *report.PerfMatrix) ([]string, error) {
	bootable, unbootable, err := kernelRows()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range append(bootable, unbootable...) {
		if !pm.HasKernel(row.version, row.flavour) {
			out = append(out, row.selector+" ("+cmp.Or(row.why, "no run of it in the directory")+")")
		}
	}
	return out, nil
}

// kernelsTSV is the kernel matrix's table, relative to the module root.
const kernelsTSV = "matrix/kernels.tsv"

// icountHangs are the full kernels.tsv rows whose guest does not boot
// under icount with the overhead family's 2 vCPUs, with what was seen.
var icountHangs = map[string]string{
	"bookworm:6.1": "under icount its boot stops after \"x86: Booting SMP configuration:\" with 2 vCPUs " +
		"(6.1.0-50, no output for 180 s, also with tsc=reliable or icount shift=1 or 3, sleep=on or off; " +
		"it boots with 1 vCPU in 30 s, 6.12 with 2 in 36 s; with shift=auto, no instruction clock, " +
		"the second CPU came up 132 s of guest time later)",
	"bullseye:5.10": "under icount its boot stops after \"x86: Booting SMP configuration:\" with 2 vCPUs " +
		"(5.10.0-32, no output for 240 s)",
}

// kernelRow is a row of kernels.tsv as bench kernels reads it.
type kernelRow struct {
	selector         string
	version, flavour string // the selector's; flavour "" for the generic one
	why              string // why bench run cannot boot it, "" if it can
}

// kernelRows splits kernels.tsv's rows into those bench run can boot
// under icount and those it cannot, with why. bench run starts its guests
// through vm/run.sh (virtme-ng), which boots full kernels only (kernels.tsv
// marks a kernel of another architecture initramfs).
func kernelRows() (bootable, unbootable []kernelRow, err error) {
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
		parts := append(strings.Split(k.Selector, ":"), "", "")
		row := kernelRow{selector: k.Selector, version: parts[1], flavour: strings.TrimSuffix(strings.TrimSuffix(parts[2], "amd64"), "-")}
		switch hang, ok := icountHangs[k.Selector]; {
		case k.Packages != matrix.Full:
			row.why = "packages " + string(k.Packages) + ": vm/run.sh cannot boot it"
		case ok:
			row.why = hang
		}
		if row.why == "" {
			bootable = append(bootable, row)
		} else {
			unbootable = append(unbootable, row)
		}
	}
	return bootable, unbootable, nil
}

var errKernelsUsage = errors.New("bench kernels takes DIR and OUT.md")

// kernelsCommand runs `bench kernels args...`.
func kernelsCommand(args []string, stdout io.Writer) int {
	if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
		fmt.Fprint(stdout, kernelsUsage)
		return 0
	}
	if len(args) > 0 && args[0] == "--list" {
		if len(args) > 1 {
			logf("unexpected argument %q (bench kernels --list takes none)", args[1])
			return 2
		}
		err := toModuleRoot()
		var bootable []kernelRow
		if err == nil {
			bootable, _, err = kernelRows()
		}
		if err != nil {
			logf("error: %v", err)
			return 1
		}
		var selectors []string
		for _, row := range bootable {
			selectors = append(selectors, row.selector)
		}
		fmt.Fprintln(stdout, strings.Join(selectors, ","))
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
