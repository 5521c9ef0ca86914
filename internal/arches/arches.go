// Package arches is the list of architectures tracebench runs on, read
// from arches.tsv, the one list: vm/lib.sh and the Makefile read the same
// file.
package arches

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed arches.tsv
var table string

// Arch is an architecture tracebench builds for and boots guests of.
type Arch struct {
	// Debian is Debian's name for it: kernels.tsv's, vm/'s, and the
	// directory of its scenario binary (.cache/bin/<Debian>/).
	Debian string
	// Flavour is the part of Debian's kernel flavours that names it
	// (powerpc64le of powerpc64le-64k).
	Flavour string
	// GOARCH is Go's name for it, and a bpf2go target.
	GOARCH string
	// QEMUPackage is the Debian package of its QEMU (vm/deps.sh --arch).
	QEMUPackage string
	// Slowdown is how many times an amd64 guest's time limit a guest of it
	// gets: its scenario run under TCG takes about that many times as long.
	Slowdown int
}

// Limit is the time limit of one of its guest runs, for amd64's amd64.
func (a Arch) Limit(amd64 time.Duration) time.Duration {
	return amd64 * time.Duration(a.Slowdown)
}

// All are arches.tsv's architectures, in its order.
var All = mustParse(table)

// GOARCHes are All's GOARCH names, in order.
func GOARCHes() []string {
	names := make([]string, len(All))
	for i, a := range All {
		names[i] = a.GOARCH
	}
	return names
}

func mustParse(text string) []Arch {
	all, err := parse(text)
	if err != nil {
		panic("internal/arches/arches.tsv: " + err.Error())
	}
	return all
}

// parse reads the table's lines: blank and #-comment lines skipped, the
// others five non-empty tab-separated fields, each name once. Errors name
// the line and the bad value.
func parse(text string) ([]Arch, error) {
	var all []Arch
	for i, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 || slices.Contains(f, "") {
			return nil, fmt.Errorf("line %d: %q is not five non-empty tab-separated fields", i+1, line)
		}
		slowdown, err := strconv.Atoi(f[4])
		if err != nil || slowdown < 1 {
			return nil, fmt.Errorf("line %d: slowdown %q is not a whole number of at least 1", i+1, f[4])
		}
		a := Arch{Debian: f[0], Flavour: f[1], GOARCH: f[2], QEMUPackage: f[3], Slowdown: slowdown}
		if slices.ContainsFunc(all, func(b Arch) bool {
			return b.Debian == a.Debian || b.Flavour == a.Flavour || b.GOARCH == a.GOARCH
		}) {
			return nil, fmt.Errorf("line %d: %s, %s or %s is named twice", i+1, a.Debian, a.Flavour, a.GOARCH)
		}
		all = append(all, a)
	}
	if len(all) == 0 {
		return nil, errors.New("no architecture listed")
	}
	return all, nil
}
