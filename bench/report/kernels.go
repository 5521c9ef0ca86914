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
// bench-kernels): one Column per kernel's run, in release order.
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
	// Unmeasured are the kernels.tsv rows bench run cannot boot, each
	// "<selector> (<packages>)".
	Unmeasured []string
}

// Column is one kernel's run.
type Column struct {
	Kernel  string // uname -r
	Dir     string // the run's directory, as given
	Meta    Meta
	Summary *Summary
	part    *overheadPart
	version []int
	flavour string // "" for the generic amd64 one, else e.g. "rt", "cloud"
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
		switch {
		case l.Summary.RunFamily(l.Meta) != Families[0] || !ok:
			return nil, fmt.Errorf("%s: not a run of the overhead family", dir)
		case !l.Summary.Icount():
			return nil, fmt.Errorf("%s: its clock is %q, not icount: kernels compare only by instructions", dir, l.Summary.clock)
		}
		v, flavour, err := kernelVersion(l.Summary.Kernel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		pm.Columns = append(pm.Columns, &Column{Kernel: l.Summary.Kernel, Dir: dir, Meta: l.Meta, Summary: l.Summary,
			part: o, version: v, flavour: flavour})
	}
	slices.SortFunc(pm.Columns, func(a, b *Column) int {
		return cmp.Or(slices.Compare(a.version, b.version), cmp.Compare(a.flavour, b.flavour), cmp.Compare(a.Kernel, b.Kernel))
	})
	for i := 1; i < len(pm.Columns); i++ {
		if pm.Columns[i].Kernel == pm.Columns[i-1].Kernel {
			return nil, fmt.Errorf("%s and %s are runs of one kernel, %s", pm.Columns[i-1].Dir, pm.Columns[i].Dir, pm.Columns[i].Kernel)
		}
	}
	pm.collect()
	pm.Changes = pm.changes()
	pm.Anchors = pm.answerAnchors()
	return pm, nil
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

// kernelRelease splits uname -r into its version and flavour:
// "7.2.13+deb14-rt-amd64" is [7 2 13] and "rt", "6.1.0-50-amd64" is
// [6 1 0] and "".
var kernelRelease = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)*)[^-]*(?:-[0-9]+)?-(?:([a-z0-9]+)-)?[a-z0-9]+$`)

func kernelVersion(release string) ([]int, string, error) {
	m := kernelRelease.FindStringSubmatch(release)
	if m == nil {
		return nil, "", fmt.Errorf("kernel release %q is not <version>[<abi>]-[<flavour>-]<arch>", release)
	}
	var v []int
	for _, f := range strings.Split(m[1], ".") {
		n, _ := strconv.Atoi(f)
		v = append(v, n)
	}
	return v, m[2], nil
}

// Version is the column's kernel version, e.g. "6.12.117".
func (c *Column) Version() string {
	var s []string
	for _, n := range c.version {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ".")
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

// CompilersDiffer names the compilers of two columns built by different
// known ones ("A → B"), "" otherwise.
func CompilersDiffer(a, b *Column) string {
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
	Mechanism, Case string // Case is "floor" for a floor
}

func (s Series) String() string {
	if s.Case == floorCase {
		return s.Mechanism + " floor"
	}
	return s.Mechanism + " (" + s.Case + ")"
}

const floorCase = "floor"

// series are every mechanism in every case, then every floor.
func (pm *PerfMatrix) series() []Series {
	var out []Series
	for _, c := range pm.Cases {
		for _, m := range pm.Mechanisms {
			out = append(out, Series{m, c})
		}
	}
	for _, f := range pm.Floors {
		out = append(out, Series{f, floorCase})
	}
	return out
}

// Overhead is s's overhead over its kernel's baseline in column c, in
// guest instructions per read(2) with its 95% interval; ok is false
// where c did not measure it.
func (c *Column) Overhead(s Series) (shift, bool) {
	if s.Case == floorCase {
		f, ok := c.part.Floor(s.Mechanism)
		return f.Overhead, ok && f.hasOverhead
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
	for _, o := range c.Summary.Skipped {
		if o.Who == s.Mechanism && len(o.Reasons) > 0 {
			return o.Reasons[0].Msg
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
			if g.flavour == "" && slices.Equal(g.version, c.version) {
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
	// Explained names the kernel change of knownChanges that the pair
	// brackets and that acts on the series; "" if none does.
	Explained string
}

// Compilers names the two kernels' compilers where they differ: the step
// then holds the compiler's change too.
func (c Change) Compilers() string { return CompilersDiffer(c.From, c.To) }

// Delta is After - Before, guest instructions per read(2).
func (c Change) Delta() float64 { return c.After.Center - c.Before.Center }

// Share is Delta relative to Before.
func (c Change) Share() float64 { return c.Delta() / math.Abs(c.Before.Center) }

func (pm *PerfMatrix) changes() []Change {
	var out []Change
	for _, s := range pm.series() {
		for _, pair := range pm.Neighbours() {
			a, okA := pair[0].Overhead(s)
			b, okB := pair[1].Overhead(s)
			if !okA || !okB || !a.hasCI() || !b.hasCI() || a.Center == 0 {
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

// JSON writes the figures: per column, per series, the overhead with its
// interval (guest instructions per read(2)).
func (pm *PerfMatrix) JSON(w io.Writer) error {
	type figure struct {
		Series              string
		Mechanism, Case     string
		Estimate, Lo, Hi, P float64
		N                   int
	}
	type column struct {
		Kernel, Dir, Commit, DateStart string
		Rounds                         int
		Baseline                       float64
		Figures                        []figure
	}
	var out []column
	for _, c := range pm.Columns {
		col := column{Kernel: c.Kernel, Dir: filepath.Base(c.Dir), Commit: c.Meta.get("commit"),
			DateStart: c.Meta.get("date-start"), Rounds: c.Summary.Rounds, Baseline: c.part.Baseline.Center}
		for _, s := range pm.series() {
			if o, ok := c.Overhead(s); ok {
				col.Figures = append(col.Figures, figure{s.String(), s.Mechanism, s.Case, o.Center, o.lo, o.hi, o.P, o.N})
			}
		}
		out = append(out, col)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
