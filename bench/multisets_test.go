package bench

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tracebench/bench/suite"
	"tracebench/funcset"
	"tracebench/tracers"
)

// sizes selects BenchmarkMultiStart's function sets, e.g. for a short trial.
var sizes = flag.String("tracebench.sizes", "",
	"comma-separated function sets of BenchmarkMultiStart by name, e.g. n1,n10,all (default: n<N> for N of funcset.Sizes, then all)")

// setsDir, below -tracebench.out, holds the function sets of a run.
const setsDir = "sets"

// functionSets are the multi family's function sets: readpath, and the
// sizes of BenchmarkMultiStart in size order. They are built once per run
// for the union of the attach kinds of everything the run measures, so
// that each mechanism and peer traces the same functions at each size.
type functionSets struct {
	dir      string // where each set's file is, <name>.txt
	kinds    []funcset.Kind
	readpath *funcset.Set
	sized    []*funcset.Set
	// perRead is how many times one 1-byte read(2) of /dev/zero calls
	// each member of readpath that every such read calls.
	perRead map[string]uint64
}

// multiKinds are the attach kinds of mechs that trace many functions
// and of the peers' wildcard variants, in funcset.Kinds' order.
func multiKinds(mechs []tracers.Mechanism) []funcset.Kind {
	var kinds []funcset.Kind
	for _, m := range mechs {
		if m.Can.Functions.Many {
			kinds = append(kinds, m.Can.Functions.Kinds...)
		}
	}
	for _, w := range wildcards() {
		kinds = append(kinds, w.Kinds...)
	}
	return slices.DeleteFunc(slices.Clone(funcset.Kinds), func(k funcset.Kind) bool { return !slices.Contains(kinds, k) })
}

// size is one of BenchmarkMultiStart's sets: its name and its size for
// funcset's Draw.
type size struct {
	name string
	n    int
}

// selectedSizes are the sets -tracebench.sizes selects; an error names a
// name that is neither n<N> nor all.
func selectedSizes() ([]size, error) {
	if *sizes == "" {
		var out []size
		for _, n := range funcset.Sizes {
			out = append(out, size{fmt.Sprintf("n%d", n), n})
		}
		return append(out, size{"all", funcset.All}), nil
	}
	var out []size
	for _, name := range strings.Split(*sizes, ",") {
		n := funcset.All
		if name != "all" {
			if _, err := fmt.Sscanf(name, "n%d", &n); err != nil || n < 1 || fmt.Sprintf("n%d", n) != name {
				return nil, fmt.Errorf("-tracebench.sizes: %q is neither n<N> (N > 0) nor all", name)
			}
		}
		out = append(out, size{name, n})
	}
	return out, nil
}

var (
	setsOnce  sync.Once
	setsBuilt *functionSets
	setsErr   error
)

// multiSets returns the run's function sets for kinds: those an earlier
// round wrote to the sets directory, or built on the running kernel and
// written there (the first benchmark of the first round that needs them
// builds them). It skips b naming what the kernel lacks to build them.
func multiSets(b *testing.B, kinds []funcset.Kind) *functionSets {
	setsOnce.Do(func() {
		dir := *outDir
		if dir == "" {
			dir, setsErr = os.MkdirTemp("", "tracebench-sets-")
		}
		var sized []size
		if setsErr == nil {
			sized, setsErr = selectedSizes()
		}
		if setsErr == nil {
			setsBuilt, setsErr = loadOrBuildSets(filepath.Join(dir, setsDir), kinds, sized)
		}
		if setsErr == nil {
			printSets(setsBuilt)
		}
	})
	if errors.Is(setsErr, os.ErrNotExist) || errors.Is(setsErr, tracers.ErrUnsupported) {
		b.Skipf("function sets: %v", setsErr)
	}
	if setsErr != nil {
		b.Fatalf("function sets: %v", setsErr)
	}
	return setsBuilt
}

// file returns the path of the sized set named name; it fails b when the
// run has no such set (-tracebench.sizes left it out).
func (s *functionSets) file(b *testing.B, name string) string {
	if !slices.ContainsFunc(s.sized, func(set *funcset.Set) bool { return set.Name == name }) {
		b.Fatalf("the run has no function set %s (-tracebench.sizes)", name)
	}
	return filepath.Join(s.dir, name+".txt")
}

// printSets labels the results with the sets' kinds and sizes.
func printSets(s *functionSets) {
	var kinds []string
	for _, k := range s.kinds {
		kinds = append(kinds, string(k))
	}
	fmt.Printf("%s: %s\n", suite.MultiKinds, strings.Join(kinds, " "))
	for _, set := range append([]*funcset.Set{s.readpath}, s.sized...) {
		fmt.Printf("%s%s: %d\n", suite.MultiSetPrefix, set.Name, len(set.Members))
	}
}

// loadOrBuildSets reads the sets in dir, or builds and writes them where
// dir has none yet.
func loadOrBuildSets(dir string, kinds []funcset.Kind, sized []size) (*functionSets, error) {
	names := []string{"readpath"}
	for _, s := range sized {
		names = append(names, s.name)
	}
	sets, err := readSets(dir, names, kinds)
	if errors.Is(err, os.ErrNotExist) {
		if sets, err = buildSets(kinds, sized); err == nil {
			err = writeSets(dir, sets)
		}
	}
	if err != nil {
		return nil, err
	}
	s := &functionSets{dir: dir, kinds: kinds, readpath: sets[0], sized: sets[1:], perRead: map[string]uint64{}}
	for _, e := range s.readpath.Members {
		if n, ok := funcset.CallsPerRead(e, funcset.SourceZero); ok && n > 0 {
			s.perRead[e.Name] = uint64(n)
		}
	}
	return s, nil
}

// readSets reads the named sets from dir; an error wraps os.ErrNotExist
// when dir lacks one, and names a set built on another kernel or for
// other kinds.
func readSets(dir string, names []string, kinds []funcset.Kind) ([]*funcset.Set, error) {
	var sets []*funcset.Set
	for _, name := range names {
		s, err := funcset.ReadFile(filepath.Join(dir, name+".txt"))
		if err != nil {
			return nil, err
		}
		if s.Kernel != tracers.KernelRelease() || !slices.Equal(s.Kinds, kinds) {
			return nil, fmt.Errorf("%s was built on %s for kinds %v, this run is on %s for %v", filepath.Join(dir, name+".txt"),
				s.Kernel, s.Kinds, tracers.KernelRelease(), kinds)
		}
		sets = append(sets, s)
	}
	return sets, nil
}

func writeSets(dir string, sets []*funcset.Set) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range sets {
		if err := funcset.WriteFile(filepath.Join(dir, s.Name+".txt"), s); err != nil {
			return err
		}
	}
	return nil
}

// buildSets builds readpath and the named sizes on the running kernel for
// kinds, as funcset's guest test does: the kernel's lists, a quiet window,
// the read path traced with function_graph, what the kernel refuses to
// attach with each kind; it prints each step's guest time to stderr, the
// whole one as suite.MultiSetsBuilt.
func buildSets(kinds []funcset.Kind, sized []size) ([]*funcset.Set, error) {
	begin, last := time.Now(), time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "bench: sets: %.1f s: %s\n", time.Since(last).Seconds(), fmt.Sprintf(format, args...))
		last = time.Now()
	}
	inv, err := funcset.ReadKernel()
	if err != nil {
		return nil, err
	}
	step("read the kernel's lists")
	if inv.Quiet, err = measureQuiet(step); err != nil {
		return nil, err
	}
	step("quiet window: %d functions called", len(inv.Quiet.Calls))
	rp, err := funcset.FindReadpath(3)
	if err != nil {
		return nil, err
	}
	step("readpath: %d functions seen", len(rp.Functions))
	for _, kind := range kinds {
		if inv.Refused[kind], err = tracers.RefusedFunctions(kind, inv.Attachable(kind)); err != nil {
			return nil, fmt.Errorf("asking the kernel what it refuses to attach with %s: %w", kind, err)
		}
		step("%s: the kernel refuses %d functions", kind, len(inv.Refused[kind]))
	}
	readpath, err := inv.Readpath(rp, kinds)
	if err != nil {
		return nil, err
	}
	sets := []*funcset.Set{readpath}
	for _, size := range sized {
		s, err := inv.Draw(size.n, kinds, readpath)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	step("drew %d sets", len(sets)-1)
	fmt.Printf("%s: %.1f\n", suite.MultiSetsBuilt, time.Since(begin).Seconds())
	return sets, nil
}

// everyCall checks what a tracer of the functions traced counted after
// reads timed 1-byte read(2)s of /dev/zero and the warm-up's before them:
// each function that such a read calls k times (perRead) counted at
// least k·(warmupReads+reads) calls, where count knows its count. One that
// counted fewer did less work than the others: no comparison.
func everyCall(traced []string, count func(fn string) (calls uint64, known bool), perRead map[string]uint64, reads uint64) error {
	var errs []error
	reads += warmupReads
	for _, fn := range traced {
		k := perRead[fn]
		if n, known := count(fn); k > 0 && known && n < k*reads {
			errs = append(errs, fmt.Errorf("%s: %d calls counted for %d reads that call it %d times each: no comparison", fn, n, reads, k))
		}
	}
	return errors.Join(errs...)
}

// everyCallIn is everyCall of a tracer's counters, which must also show no
// slow call under a threshold no read reaches; strict, it also fails on a
// call lost or a program run missed (each a call traced less than the
// others: BenchmarkMultiRead compares the work of its rows).
func everyCallIn(s tracers.Stats, perRead map[string]uint64, reads uint64, strict bool) error {
	byName := map[string]tracers.FunctionStats{}
	var traced []string
	for _, f := range s.PerFunction {
		byName[f.Function] = f
		traced = append(traced, f.Function)
	}
	errs := []error{
		expectKnown(s, tracers.FieldSlow, s.Slow == 0, "calls above a %v threshold: %+v", highThreshold, s),
		everyCall(traced, func(fn string) (uint64, bool) {
			return byName[fn].Calls, !byName[fn].Unknown.Has(tracers.FieldCalls)
		}, perRead, reads),
	}
	if strict {
		errs = append(errs, expectKnown(s, tracers.FieldLost, s.Lost == 0, "%d calls lost: no comparison", s.Lost),
			expectKnown(s, tracers.FieldMissed, s.Missed == 0, "%d program runs missed (%d recursion misses of its programs, "+
				"%d its links' missed counts, e.g. a kprobe's nmissed or a kretprobe's maxactive): no comparison",
				s.Missed, s.RecursionMisses, s.Missed-s.RecursionMisses))
	}
	return errors.Join(errs...)
}

// measureQuiet measures a quiet second of the system, in a larger buffer
// each time the tracer lost events (a system just booted is not quiet:
// 275881 calls in a second filled 4 MiB per CPU in the 7.2 guest).
func measureQuiet(step func(string, ...any)) (*funcset.Quiet, error) {
	var err error
	for _, kib := range []int{4096, 16384, 65536} {
		var q *funcset.Quiet
		if q, err = funcset.MeasureQuiet(time.Second, kib); err == nil {
			return q, nil
		}
		step("quiet window with %d KiB per CPU: %v", kib, err)
	}
	return nil, err
}
