package matrix

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// release is a kernel's major.minor, from its ABI (7.2 of
// 7.2.13+deb14-amd64, 7.3 of 7.3~rc4-amd64, 6.1 of 6.1.0-47-amd64).
type release struct{ major, minor int }

var abiRelease = regexp.MustCompile(`^(\d+)\.(\d+)`)

func releaseOf(abi string) (release, bool) {
	m := abiRelease.FindStringSubmatch(abi)
	if m == nil {
		return release{}, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return release{major, minor}, true
}

func (r release) String() string { return fmt.Sprintf("%d.%d", r.major, r.minor) }

func (r release) compare(o release) int {
	return cmp.Or(cmp.Compare(r.major, o.major), cmp.Compare(r.minor, o.minor))
}

// Where says where the committed runs measured mechanism run, by
// architecture (in Arches' order) and kernel release (of the run's ABI):
// "amd64 ≥ 7.0" where every measured row of the architecture from release
// 7.0 on ran it and none before it, "arm64 7.2" where its measured rows
// are all of one release and ran it, the rows' selectors where its
// running rows follow no such rule; after "not" the architectures whose
// measured rows all skipped it as unsupported, and after "not yet run
// on" those none of whose runs measured it (an outcome file from before
// the mechanism existed, every scenario skipped for its workload), e.g.
// "amd64 ≥ 7.2; not arm64, s390x; not yet run on riscv64"; last, after
// "crashes", the architectures and releases whose kernel it crashed
// (Run.Crashed) or, by kernels.tsv, crashes with it (Kernel.Crashes: a
// kernel bug shown without tracebench, so not booted with it), which
// count as neither running nor skipping it; after "warns", those where
// kernels.tsv says it runs but makes the kernel print a WARNING
// (Kernel.Warns: a kernel bug shown without tracebench). A row ran it where its tracer
// started in some scenario; kernels.tsv's yes and no are not read, the
// matrix's check holds the two together. It is an error if a row's run
// has no ABI (no outcome file merged).
func (rep Report) Where(mechanism string) (string, error) {
	var runs, not, notRun, crashes, warns []string
	for _, a := range Arches {
		var rows []Run
		crashed := false
		for _, r := range rep.Runs {
			if r.Kernel.Arch() != a {
				continue
			}
			if _, c := r.Crashed(mechanism); c || r.Kernel.Crashes[mechanism] {
				rel, err := runRelease(r)
				if err != nil {
					return "", err
				}
				crashes = append(crashes, a.Debian+" "+rel.String())
				crashed = true
				continue
			}
			if r.Kernel.Warns[mechanism] {
				rel, err := runRelease(r)
				if err != nil {
					return "", err
				}
				warns = append(warns, a.Debian+" "+rel.String())
			}
			rows = append(rows, r)
		}
		if len(rows) == 0 {
			continue
		}
		where, measured, err := whereOnArch(rows, mechanism)
		switch {
		case err != nil:
			return "", err
		case !measured && crashed:
		case !measured:
			notRun = append(notRun, a.Debian)
		case where == "":
			not = append(not, a.Debian)
		default:
			runs = append(runs, a.Debian+" "+where)
		}
	}
	parts := []string{strings.Join(runs, ", ")}
	if len(not) > 0 {
		parts = append(parts, "not "+strings.Join(not, ", "))
	}
	if len(notRun) > 0 {
		parts = append(parts, "not yet run on "+strings.Join(notRun, ", "))
	}
	if len(crashes) > 0 {
		parts = append(parts, "crashes "+strings.Join(slices.Compact(crashes), ", "))
	}
	if len(warns) > 0 {
		parts = append(parts, "warns "+strings.Join(slices.Compact(warns), ", "))
	}
	return strings.TrimPrefix(strings.Join(parts, "; "), "; "), nil
}

// ranOn says whether r's run measured mechanism (its tracer started or
// it skipped as unsupported) and whether it ran it.
func ranOn(r Run, mechanism string) (ran, measured bool) {
	o := r.Outcomes
	if o == nil || !slices.Contains(o.Mechanisms, mechanism) {
		return false, false
	}
	ran = o.ranTracer(mechanism)
	return ran, ran || o.skippedAsUnsupported(mechanism)
}

// runRelease is the kernel release of r's run; an error where it has no
// ABI (no outcome file merged).
func runRelease(r Run) (release, error) {
	rel, ok := releaseOf(r.ABI)
	if !ok {
		return release{}, fmt.Errorf("%s: no kernel release in its run's ABI %q (no outcome file?)", r.Kernel.Selector, r.ABI)
	}
	return rel, nil
}

// whereOnArch is Where's text for one architecture's rows, "" where none
// of those that measured mechanism ran it; measured is false where none
// did.
func whereOnArch(all []Run, mechanism string) (where string, measured bool, err error) {
	releases := make(map[string]release, len(all))
	ran := make(map[string]bool, len(all))
	var rows []Run
	for _, r := range all {
		rel, err := runRelease(r)
		if err != nil {
			return "", false, err
		}
		if yes, ok := ranOn(r, mechanism); ok {
			releases[r.Kernel.Selector], ran[r.Kernel.Selector] = rel, yes
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return "", false, nil
	}
	slices.SortStableFunc(rows, func(a, b Run) int {
		return releases[a.Kernel.Selector].compare(releases[b.Kernel.Selector])
	})
	first := slices.IndexFunc(rows, func(r Run) bool { return ran[r.Kernel.Selector] })
	if first < 0 {
		return "", true, nil
	}
	from := releases[rows[first].Kernel.Selector]
	regular := true
	for _, r := range rows {
		regular = regular && ran[r.Kernel.Selector] == (releases[r.Kernel.Selector].compare(from) >= 0)
	}
	switch {
	case regular && releases[rows[0].Kernel.Selector] == releases[rows[len(rows)-1].Kernel.Selector]:
		return from.String(), true, nil
	case regular:
		return "≥ " + from.String(), true, nil
	}
	var yes []string
	for _, r := range rows {
		if ran[r.Kernel.Selector] {
			yes = append(yes, "`"+r.Kernel.Selector+"`")
		}
	}
	return "(" + strings.Join(yes, ", ") + ")", true, nil
}
