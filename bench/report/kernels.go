package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"tracebench/bench/suite"
)

// PerfMatrix is the overhead family measured on several kernels (make
// bench-kernels), with the growth family where it ran: one Column per
// kernel's run, in release order.
type PerfMatrix struct {
	Columns []*Column
	// Cases, Mechanisms and Floors are those any column measured, in the
	// single-kernel report's order.
	Cases, Mechanisms, Floors []string
	// Changes are the steps between neighbouring columns (Neighbours).
	Changes []Change
	// Anchors are the kernel changes of knownChanges, each answered from
	// the columns.
	Anchors []AnchorAnswer
	// Unmeasured are the kernels.tsv rows without a run, each
	// "<selector> (<why>)" (the caller's: cmd/bench lists them).
	Unmeasured []string
}

// Column is one kernel's run.
type Column struct {
	Kernel  string // uname -r
	Dir     string // the run's directory, as given
	Meta    Meta
	Summary *Summary
	part    *overheadPart
	// growth is the growth run in Dir/growth/, nil without one, with its
	// meta and summary.
	growth        *multiPart
	GrowthMeta    Meta
	GrowthSummary *Summary
	version       []int
	rc            int    // release candidate number, 0 for a release
	abi           int    // Debian's ABI number ("6.1.0-50"), 0 without one
	flavour       string // "" for the generic amd64 one, else e.g. "rt", "cloud"
}

// LoadPerfMatrix reads the run in each of dirs (an overhead family run
// under icount each; another is an error naming the directory) and
// compares them.
func LoadPerfMatrix(dirs []string, unmeasured []string) (*PerfMatrix, error) {
	pm := &PerfMatrix{Unmeasured: unmeasured}
	for _, dir := range dirs {
		l, err := Load(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		o, ok := l.Summary.Part(Families[0]).(*overheadPart)
		switch f := l.Summary.RunFamily(l.Meta); {
		case f != Families[0] || !ok:
			return nil, fmt.Errorf("%s: a run of the %s family, not of %s", dir, f.Name, Families[0].Name)
		case !l.Summary.Icount():
			return nil, fmt.Errorf("%s: its clock is %q, not icount: kernels compare only by instructions", dir, l.Summary.clock)
		}
		r, err := parseRelease(l.Summary.Kernel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		c := &Column{Kernel: l.Summary.Kernel, Dir: dir, Meta: l.Meta, Summary: l.Summary,
			part: o, version: r.version, rc: r.rc, abi: r.abi, flavour: r.flavour}
		if err := loadGrowth(c); err != nil {
			return nil, err
		}
		pm.Columns = append(pm.Columns, c)
	}
	slices.SortFunc(pm.Columns, func(a, b *Column) int {
		return cmp.Or(slices.Compare(a.version, b.version), compareRC(a.rc, b.rc), cmp.Compare(a.abi, b.abi),
			cmp.Compare(a.flavour, b.flavour), cmp.Compare(a.Kernel, b.Kernel))
	})
	for i := 1; i < len(pm.Columns); i++ {
		a, b := pm.Columns[i-1], pm.Columns[i]
		if a.Kernel == b.Kernel {
			return nil, fmt.Errorf("%s and %s are runs of one kernel, %s", a.Dir, b.Dir, b.Kernel)
		}
		if err := sameCPUs(a.Dir, a.Summary, b.Dir, b.Summary); err != nil {
			return nil, err
		}
	}
	pm.collect()
	pm.Changes = pm.changes()
	pm.Anchors = pm.answerAnchors()
	return pm, nil
}

// sameCPUs is an error naming both runs where they ran on different
// numbers of CPUs: under icount every CPU's instructions count.
func sameCPUs(dirA string, a *Summary, dirB string, b *Summary) error {
	if a.CPUs == b.CPUs {
		return nil
	}
	return fmt.Errorf("%s ran on %s CPUs, %s on %s: compare runs of one configuration", dirA, orUnknown(a.CPUs), dirB, orUnknown(b.CPUs))
}

// PerfMatrixRuns lists the runs below dir: its directories holding a
// raw.txt, an error if there is none.
func PerfMatrixRuns(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), RawFile)); e.IsDir() && err == nil {
			runs = append(runs, filepath.Join(dir, e.Name()))
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s holds no run (no */%s): run make bench-kernels first", dir, RawFile)
	}
	return runs, nil
}

// release is what the comparison reads of uname -r.
type release struct {
	version []int
	rc, abi int
	flavour string
}

// kernelRelease splits uname -r: "7.2.13+deb14-rt-amd64" is 7.2.13,
// flavour rt; "6.1.0-50-amd64" is 6.1.0, ABI 50; "6.12.0-rc3-amd64" is
// 6.12.0, release candidate 3; "6.19.0-custom" has no flavour.
var kernelRelease = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)*)(?:-rc([0-9]+))?(?:\+[a-z0-9.]+)?(?:-([0-9]+))?(?:-rc([0-9]+))?(?:-([a-z][a-z0-9]*))??(?:-[a-z][a-z0-9_]*)?$`)

func parseRelease(s string) (release, error) {
	m := kernelRelease.FindStringSubmatch(s)
	if m == nil {
		return release{}, fmt.Errorf("kernel release %q is not <version>[-rcN][+<build>][-<abi>][-<flavour>][-<arch>]", s)
	}
	r := release{flavour: m[5]}
	for _, f := range strings.Split(m[1], ".") {
		n, _ := strconv.Atoi(f)
		r.version = append(r.version, n)
	}
	r.rc, _ = strconv.Atoi(cmp.Or(m[2], m[4]))
	r.abi, _ = strconv.Atoi(m[3])
	return r, nil
}

// compareRC orders release candidates before the release.
func compareRC(a, b int) int {
	if a == 0 || b == 0 {
		return cmp.Compare(b, a)
	}
	return cmp.Compare(a, b)
}

// Version is the column's kernel version, e.g. "6.12.117", "6.1.0-50",
// "6.12.0-rc3".
func (c *Column) Version() string {
	var s []string
	for _, n := range c.version {
		s = append(s, strconv.Itoa(n))
	}
	v := strings.Join(s, ".")
	if c.rc > 0 {
		v += "-rc" + strconv.Itoa(c.rc)
	}
	if c.abi > 0 {
		v += "-" + strconv.Itoa(c.abi)
	}
	return v
}

// HasKernel reports whether a column is a kernel of version (a prefix of
// its version's numbers, as vm/kernel.sh selects, e.g. "6.12" or "7") and
// flavour ("" for the generic one, e.g. "rt").
func (pm *PerfMatrix) HasKernel(version, flavour string) bool {
	want := strings.Split(version, ".")
	for _, c := range pm.Columns {
		var have []string
		for _, n := range c.version[:min(len(c.version), len(want))] {
			have = append(have, strconv.Itoa(n))
		}
		if c.flavour == flavour && slices.Equal(have, want) {
			return true
		}
	}
	return false
}

// Compiler is the compiler that built the column's kernel, without its
// target prefix (e.g. "gcc-16 (Debian 16.2.0-4) 16.2.0"); "unknown" if
// the run did not say.
func (c *Column) Compiler() string {
	if c.Summary.Compiler == "" {
		return "unknown"
	}
	return compilerPrefix.ReplaceAllString(c.Summary.Compiler, "")
}

// compilerPrefix is a cross compiler's target triplet.
var compilerPrefix = regexp.MustCompile(`^[a-z0-9_]+-linux-gnu[a-z]*-`)

// compilersDiffer names the compilers of two columns built by different
// known ones ("A → B"), "" otherwise.
func compilersDiffer(a, b *Column) string {
	if a.Summary.Compiler == "" || b.Summary.Compiler == "" || a.Summary.Compiler == b.Summary.Compiler {
		return ""
	}
	return a.Compiler() + " → " + b.Compiler()
}

// Name is the column's short name: its version and flavour.
func (c *Column) Name() string {
	if c.flavour != "" {
		return c.Version() + " " + c.flavour
	}
	return c.Version()
}

func (pm *PerfMatrix) collect() {
	cases, mechs, floors := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range pm.Columns {
		for _, r := range c.part.Rows {
			cases[r.Case], mechs[r.Mechanism] = true, true
		}
		for _, f := range c.part.Floors {
			floors[f.Name] = true
		}
	}
	pm.Cases = ordered(cases, knownCases)
	pm.Mechanisms = ordered(mechs, []string{reference})
	pm.Floors = ordered(floors, suite.Floors)
}

// Series is one figure followed across kernels: a mechanism in a case, or
// a floor.
type Series struct {
	Mechanism, Case string // Case is suite.FloorCase for a floor
}

func (s Series) String() string {
	if s.Case == suite.FloorCase {
		return s.Mechanism + " floor"
	}
	return s.Mechanism + " (" + s.Case + ")"
}

// series are every mechanism in every case, then every floor.
func (pm *PerfMatrix) series() []Series {
	var out []Series
	for _, c := range pm.Cases {
		for _, m := range pm.Mechanisms {
			out = append(out, Series{m, c})
		}
	}
	for _, f := range pm.Floors {
		out = append(out, Series{f, suite.FloorCase})
	}
	for _, m := range pm.GrowthMechanisms() {
		out = append(out, Series{m, suite.ReadpathCase})
	}
	return out
}

// Overhead is s's overhead over its kernel's baseline in column c, in
// guest instructions per read(2) with its 95% interval; ok is false
// where c did not measure it.
func (c *Column) Overhead(s Series) (shift, bool) {
	switch s.Case {
	case suite.FloorCase:
		f, ok := c.part.Floor(s.Mechanism)
		return f.Overhead, ok && f.hasOverhead
	case suite.ReadpathCase:
		return c.readpath(s.Mechanism)
	}
	r := c.part.RowOf(s.Mechanism, s.Case)
	if r == nil || !r.hasOverhead {
		return shift{}, false
	}
	return r.Overhead, true
}

// Why says why column c has no figure for s: the run's skip reason, or
// that it did not run it.
func (c *Column) Why(s Series) string {
	if s.Case == suite.ReadpathCase {
		if c.growth == nil {
			return "no growth run"
		}
		return whyNot(c.GrowthSummary, s.Mechanism)
	}
	return whyNot(c.Summary, s.Mechanism)
}

// whyNot says why run s has no figure of mechanism m: its failure or skip
// reason, or that it did not run it.
func whyNot(s *Summary, m string) string {
	for _, list := range []struct {
		what     string
		outcomes []outcome
	}{{"failed: ", s.Failed}, {"", s.Skipped}} {
		for _, o := range list.outcomes {
			if o.Who == m && len(o.Reasons) > 0 {
				return list.what + o.Reasons[0].Msg
			}
		}
	}
	return "not run"
}

// Neighbours are the pairs of columns a change is looked for between:
// consecutive generic kernels by version, and each flavoured kernel after
// the generic kernel of its version.
func (pm *PerfMatrix) Neighbours() [][2]*Column {
	var out [][2]*Column
	var last *Column
	for _, c := range pm.Columns {
		if c.flavour == "" {
			if last != nil {
				out = append(out, [2]*Column{last, c})
			}
			last = c
		}
	}
	for _, c := range pm.Columns {
		if c.flavour == "" {
			continue
		}
		for _, g := range pm.Columns {
			if g.flavour == "" && g.Version() == c.Version() {
				out = append(out, [2]*Column{g, c})
			}
		}
	}
	return out
}

// changeShare is the least relative change between neighbours that is
// listed, besides disjoint intervals.
const changeShare = 0.03

// Change is a step of a series between neighbouring columns whose 95%
// intervals do not overlap and whose estimates differ by more than
// changeShare.
type Change struct {
	Series   Series
	From, To *Column
	Before   shift
	After    shift
	// Explained names the kernel changes of knownChanges that the pair
	// brackets and that act on the series: candidates, not proof (the
	// direction is not checked; other series may have moved alike); "" if
	// none does.
	Explained string
}

// Compilers names the two kernels' compilers where they differ: the step
// then holds the compiler's change too.
func (c Change) Compilers() string { return compilersDiffer(c.From, c.To) }

// Delta is After - Before, guest instructions per read(2).
func (c Change) Delta() float64 { return c.After.Center - c.Before.Center }

// Share is Delta relative to Before.
func (c Change) Share() float64 { return c.Delta() / math.Abs(c.Before.Center) }

func (pm *PerfMatrix) changes() []Change {
	var out []Change
	pairs := pm.Neighbours()
	for _, s := range pm.series() {
		for _, pair := range pairs {
			a, okA := pair[0].Overhead(s)
			b, okB := pair[1].Overhead(s)
			if !okA || !okB || !a.hasCI() || !b.hasCI() || a.Center == 0 || !sameWork(s, pair[0], pair[1]) {
				continue
			}
			ch := Change{Series: s, From: pair[0], To: pair[1], Before: a, After: b}
			if ch.Disjoint() && math.Abs(ch.Share()) > changeShare {
				ch.Explained = explain(ch)
				out = append(out, ch)
			}
		}
	}
	return out
}

// sameWork reports whether s's figures in a and b are of one work: a
// read path overhead is, only between readpath sets of one size (each
// kernel's set holds the functions its reads passed through).
func sameWork(s Series, a, b *Column) bool {
	return s.Case != suite.ReadpathCase || a.ReadpathFunctions() == b.ReadpathFunctions()
}

// explain names the known change the pair brackets that acts on s.
func explain(ch Change) string {
	var names []string
	for _, k := range knownChanges {
		if k.brackets(ch.From, ch.To) && k.actsOn(ch.Series, ch.From) {
			names = append(names, k.Name)
		}
	}
	return strings.Join(names, "; ")
}

// figureJSON is an overhead with its interval, guest instructions per
// read(2).
type figureJSON struct {
	Series          string
	Mechanism, Case string
	Estimate        float64
	Lo, Hi, P       *float64 // absent without an interval or a test
	N               int
}

func newFigureJSON(s Series, o shift) figureJSON {
	f := figureJSON{Series: s.String(), Mechanism: s.Mechanism, Case: s.Case, Estimate: o.Center, N: o.N}
	if o.hasCI() {
		f.Lo, f.Hi = &o.lo, &o.hi
	}
	if !math.IsNaN(o.P) {
		f.P = &o.P
	}
	return f
}

// JSON writes the figures: per column, per series, the overhead with its
// interval (guest instructions per read(2)) over the baseline of the run
// that measured it: the overhead run's Baseline, or for the read path
// the growth run's (Growth.Baseline).
func (pm *PerfMatrix) JSON(w io.Writer) error {
	type column struct {
		Kernel, Dir, Commit, DateStart string
		Rounds                         int
		Baseline                       float64 // guest instructions per read(2)
		Figures                        []figureJSON
		// Growth is the growth run's figures, absent without one.
		Growth *growthJSON `json:",omitempty"`
	}
	var out []column
	for _, c := range pm.Columns {
		col := column{Kernel: c.Kernel, Dir: filepath.Base(c.Dir), Commit: c.Meta.get("commit"),
			DateStart: c.Meta.get("date-start"), Rounds: c.Summary.Rounds, Baseline: c.part.Baseline.Center, Growth: c.growthJSON()}
		for _, s := range pm.series() {
			if o, ok := c.Overhead(s); ok {
				col.Figures = append(col.Figures, newFigureJSON(s, o))
			}
		}
		out = append(out, col)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
