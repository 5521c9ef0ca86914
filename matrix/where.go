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

// Where says where kernels.tsv has mechanism run, by architecture (in
// Arches' order) and kernel release (of the run's ABI): "amd64 ≥ 7.0"
// where every row of the architecture from release 7.0 on says yes and
// none before it, "arm64 7.2" where its rows are all of one release and
// say yes, the rows' selectors where its yes rows follow no such rule,
// and after "not" the architectures none of whose rows says yes, e.g.
// "amd64 ≥ 7.2; not arm64, s390x". It is an error if a row's run has no
// ABI (no outcome file merged).
func (rep Report) Where(mechanism string) (string, error) {
	var runs, not []string
	for _, a := range Arches {
		var rows []Run
		for _, r := range rep.Runs {
			if r.Kernel.Arch() == a {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		where, err := whereOnArch(rows, mechanism)
		if err != nil {
			return "", err
		}
		if where == "" {
			not = append(not, a.Debian)
			continue
		}
		runs = append(runs, a.Debian+" "+where)
	}
	out := strings.Join(runs, ", ")
	if len(not) > 0 {
		out = strings.TrimPrefix(out+"; not "+strings.Join(not, ", "), "; ")
	}
	return out, nil
}

// whereOnArch is Where's text for one architecture's rows, "" where none
// says yes.
func whereOnArch(rows []Run, mechanism string) (string, error) {
	releases := make(map[string]release, len(rows))
	for _, r := range rows {
		rel, ok := releaseOf(r.ABI)
		if !ok {
			return "", fmt.Errorf("%s: no kernel release in its run's ABI %q (no outcome file?)", r.Kernel.Selector, r.ABI)
		}
		releases[r.Kernel.Selector] = rel
	}
	slices.SortStableFunc(rows, func(a, b Run) int {
		return releases[a.Kernel.Selector].compare(releases[b.Kernel.Selector])
	})
	first := slices.IndexFunc(rows, func(r Run) bool { return r.Kernel.Supports[mechanism] })
	if first < 0 {
		return "", nil
	}
	from := releases[rows[first].Kernel.Selector]
	regular := true
	for _, r := range rows {
		regular = regular && r.Kernel.Supports[mechanism] == (releases[r.Kernel.Selector].compare(from) >= 0)
	}
	switch {
	case regular && releases[rows[0].Kernel.Selector] == releases[rows[len(rows)-1].Kernel.Selector]:
		return from.String(), nil
	case regular:
		return "≥ " + from.String(), nil
	}
	var yes []string
	for _, r := range rows {
		if r.Kernel.Supports[mechanism] {
			yes = append(yes, "`"+r.Kernel.Selector+"`")
		}
	}
	return "(" + strings.Join(yes, ", ") + ")", nil
}
