// Package matrix runs tracebench's scenarios on several Debian kernels and
// judges the outcomes against what each kernel is stated to support
// (kernels.tsv): a mechanism that skips where it should run, or runs where
// it should skip, fails the matrix. cmd/matrix drives the guests; this
// package parses, compares and renders, and has no I/O of its own.
package matrix

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"tracebench/internal/arches"
)

// Packages says which Debian packages a suite carries for a kernel, which
// decides how it is fetched and booted.
type Packages string

const (
	// Full kernels have image, modules and config: vm/kernel.sh, vm/run.sh.
	Full Packages = "full"
	// BinaryOnly kernels have only linux-binary-<abi>:
	// vm/kernel-binary.sh, vm/run-initramfs.sh.
	BinaryOnly Packages = "binary-only"
	// Initramfs kernels have every package but virtme-ng cannot boot
	// them: no 9p to share the host's files (Debian's cloud flavour), or
	// another architecture than the host's (arm64): vm/kernel.sh,
	// vm/run-initramfs.sh.
	Initramfs Packages = "initramfs"
)

// PackageKinds are the kinds a row of kernels.tsv may give.
var PackageKinds = []Packages{Full, BinaryOnly, Initramfs}

// initramfsBoot: the kernels vm/run-initramfs.sh boots.
func (p Packages) initramfsBoot() bool { return p == BinaryOnly || p == Initramfs }

// HostArch is the Debian architecture of the machine that runs the guests
// (x86-64, as the README requires); vm/run.sh boots only kernels of it.
const HostArch = "amd64"

// Arch is an architecture whose kernels the matrix boots.
type Arch = arches.Arch

// Arches are the architectures tracebench runs on (internal/arches'
// table, which vm/lib.sh reads too).
var Arches = arches.All

// Running is the Arch the running binary was built for (Arches' amd64
// where its GOARCH is none of theirs).
func Running() Arch {
	if i := slices.IndexFunc(Arches, func(a Arch) bool { return a.GOARCH == runtime.GOARCH }); i >= 0 {
		return Arches[i]
	}
	return Arches[0]
}

// FlavourArch returns the architecture of a Debian kernel flavour
// ([VARIANT-]ARCH[-PAGES]: rt-amd64, powerpc64le-64k): the one of Arches
// that exactly one of its dash-separated parts names (vm/lib.sh's rule).
func FlavourArch(flavour string) (Arch, error) {
	var found []Arch
	for _, part := range strings.Split(flavour, "-") {
		if i := slices.IndexFunc(Arches, func(a Arch) bool { return a.Flavour == part }); i >= 0 {
			found = append(found, Arches[i])
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var known []string
		for _, a := range Arches {
			known = append(known, a.Flavour)
		}
		return Arch{}, fmt.Errorf("kernel flavour %q names no architecture tracebench runs on (known: %s)",
			flavour, strings.Join(known, ", "))
	}
	return Arch{}, fmt.Errorf("kernel flavour %q names more than one architecture", flavour)
}

// Kernel is one row of kernels.tsv.
type Kernel struct {
	// Selector is SUITE:VERSION, e.g. trixie:6.12.
	Selector string
	Packages Packages
	// Supports says, per mechanism, whether it must run (true) or must
	// skip as unsupported (false).
	Supports map[string]bool
	// Crashes are the mechanisms the kernel has but crashes with
	// (kernels.tsv's "crashes"): a kernel bug reproduced without
	// tracebench, which the table's comments name. The matrix boots the
	// kernel without them (tracers.DisableEnv), so they skip as
	// unsupported there (Supports is false).
	Crashes map[string]bool
	// Warns are the mechanisms the kernel runs but prints a WARNING with
	// (kernels.tsv's "warns"): a kernel bug reproduced without tracebench,
	// which the table's comments name. They must run every scenario
	// (Supports is true); a WARNING report while one of their tests ran
	// is expected (KernelError.Excused), any other kernel error is not.
	Warns map[string]bool
}

// Arch is the kernel's architecture: its selector's flavour's
// (SUITE:VERSION:FLAVOUR, e.g. ppc64el of sid:7:powerpc64le-64k), the
// host's without one. ParseExpectations refuses a flavour naming none.
func (k Kernel) Arch() Arch {
	parts := strings.Split(k.Selector, ":")
	if len(parts) < 3 {
		a, _ := FlavourArch(HostArch)
		return a
	}
	a, _ := FlavourArch(parts[2])
	return a
}

// Expectations is kernels.tsv: the mechanisms in column order and the
// kernels in row order.
type Expectations struct {
	Mechanisms []string
	Kernels    []Kernel
}

// fixedColumns precede the mechanism columns in the header.
var fixedColumns = []string{"kernel", "packages"}

// Cell values of a mechanism column: must run, must skip, crashes the
// kernel (Kernel.Crashes), or must run and makes it warn (Kernel.Warns).
const (
	cellYes     = "yes"
	cellNo      = "no"
	cellCrashes = "crashes"
	cellWarns   = "warns"
)

// ParseExpectations reads kernels.tsv: '#' comments, a header naming
// fixedColumns then mechanisms, then one tab-separated row per kernel with
// yes, no, crashes or warns per mechanism.
func ParseExpectations(r io.Reader) (Expectations, error) {
	var exp Expectations
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		var err error
		if exp.Mechanisms == nil {
			exp.Mechanisms, err = parseHeader(fields)
		} else {
			err = exp.addKernel(fields)
		}
		if err != nil {
			return Expectations{}, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Expectations{}, err
	}
	if len(exp.Kernels) == 0 {
		return Expectations{}, fmt.Errorf("no kernel rows")
	}
	return exp, nil
}

func parseHeader(fields []string) ([]string, error) {
	if len(fields) <= len(fixedColumns) || !slices.Equal(fields[:len(fixedColumns)], fixedColumns) {
		return nil, fmt.Errorf("header must be %s then one column per mechanism, got %q",
			strings.Join(fixedColumns, ", "), fields)
	}
	mechanisms := fields[len(fixedColumns):]
	for i, m := range mechanisms {
		if m == "" || slices.Contains(mechanisms[:i], m) {
			return nil, fmt.Errorf("mechanism column %d is empty or repeated: %q", i+1, m)
		}
	}
	return mechanisms, nil
}

func (exp *Expectations) addKernel(fields []string) error {
	if want := len(fixedColumns) + len(exp.Mechanisms); len(fields) != want {
		return fmt.Errorf("%d tab-separated fields, want %d", len(fields), want)
	}
	k := Kernel{Selector: fields[0], Packages: Packages(fields[1]), Supports: map[string]bool{}}
	if suite, version, ok := strings.Cut(k.Selector, ":"); !ok || suite == "" || version == "" {
		return fmt.Errorf("kernel %q is not SUITE:VERSION", k.Selector)
	}
	if !slices.Contains(PackageKinds, k.Packages) {
		return fmt.Errorf("packages %q is none of %s, %s, %s", k.Packages, Full, BinaryOnly, Initramfs)
	}
	if parts := strings.Split(k.Selector, ":"); len(parts) > 2 {
		if _, err := FlavourArch(parts[2]); err != nil {
			return fmt.Errorf("%s: %w", k.Selector, err)
		}
	}
	if k.Arch().Debian != HostArch && !k.Packages.initramfsBoot() {
		return fmt.Errorf("%s is an %s kernel, which vm/run.sh cannot boot: packages %s, not %s", k.Selector,
			k.Arch().Debian, Initramfs, k.Packages)
	}
	if slices.ContainsFunc(exp.Kernels, func(o Kernel) bool { return o.Selector == k.Selector }) {
		return fmt.Errorf("kernel %s listed twice", k.Selector)
	}
	for i, m := range exp.Mechanisms {
		switch v := fields[len(fixedColumns)+i]; v {
		case cellYes, cellNo:
			k.Supports[m] = v == cellYes
		case cellCrashes:
			if k.Crashes == nil {
				k.Crashes = map[string]bool{}
			}
			k.Supports[m], k.Crashes[m] = false, true
		case cellWarns:
			if k.Warns == nil {
				k.Warns = map[string]bool{}
			}
			k.Supports[m], k.Warns[m] = true, true
		default:
			return fmt.Errorf("%s for %s is %q, want %s, %s, %s or %s", k.Selector, m, v, cellYes, cellNo, cellCrashes, cellWarns)
		}
	}
	exp.Kernels = append(exp.Kernels, k)
	return nil
}

// Select returns the kernels whose selector is in selectors, in the
// table's order; all of them when selectors is empty.
func (exp Expectations) Select(selectors []string) ([]Kernel, error) {
	if len(selectors) == 0 {
		return exp.Kernels, nil
	}
	var out []Kernel
	for _, s := range selectors {
		i := slices.IndexFunc(exp.Kernels, func(k Kernel) bool { return k.Selector == s })
		if i < 0 {
			return nil, fmt.Errorf("kernel %q is not in the table", s)
		}
		out = append(out, exp.Kernels[i])
	}
	slices.SortStableFunc(out, func(a, b Kernel) int { return exp.index(a) - exp.index(b) })
	return out, nil
}

// Only returns the table with the mechanisms columns alone, in the
// table's order; a name that is no column is an error naming it.
func (exp Expectations) Only(mechanisms []string) (Expectations, error) {
	if len(mechanisms) == 0 {
		return Expectations{}, fmt.Errorf("no mechanism named")
	}
	for _, m := range mechanisms {
		if !slices.Contains(exp.Mechanisms, m) {
			return Expectations{}, fmt.Errorf("mechanism %q is no column of the table (%s)", m, strings.Join(exp.Mechanisms, ", "))
		}
	}
	only := exp
	only.Mechanisms = slices.DeleteFunc(slices.Clone(exp.Mechanisms), func(m string) bool { return !slices.Contains(mechanisms, m) })
	return only, nil
}

func (exp Expectations) index(k Kernel) int {
	return slices.IndexFunc(exp.Kernels, func(o Kernel) bool { return o.Selector == k.Selector })
}
