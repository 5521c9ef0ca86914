package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"tracebench/bench/suite"
	"tracebench/funcset"
	"tracebench/internal/testenv"
	"tracebench/peers"
	"tracebench/tracers"
)

// BenchmarkMultiRead reports ns/op of BenchmarkVFSRead's loop (1-byte
// read(2) of /dev/zero) with nothing attached (baseline), with each
// mechanism that traces many functions (Capabilities.Functions.Many) and
// with each of the peers' wildcard variants (peers.Wildcards: bpftrace, bcc) tracing
// this process on the readpath set: every function a 1-byte read(2)
// passes through, each call timed and counted, no event. A sub-benchmark
// fails when a function that every read calls counted fewer calls than
// that (its mechanism did less work). The mechanisms' sub-benchmarks
// report their cost beyond time (reportCost), bpftrace's its start-ns
// (exec to attached) and close-ns (SIGINT to exit).
func BenchmarkMultiRead(b *testing.B) {
	testenv.Tracing.Require(b)
	mechs := selectedMechanisms(b)
	sets := multiSets(b, multiKinds(mechs))
	root, rootErr := multiPeers(mechs)
	c := readpathCase(sets)
	units := []unit{{name: "baseline", run: benchBaseline}}
	for _, m := range manyFunctions(mechs, true) {
		units = append(units, unit{name: m.Name + "/" + c.name, run: benchVFSRead(m, c)})
	}
	for _, w := range wildcards() {
		units = append(units, unit{name: w.Name + "/" + c.name, run: benchWildcard(w, sets.readpath, sets, root, rootErr, nil)})
	}
	runUnits(b, units)
}

// readpathCase traces the readpath set in this process under a threshold
// no read reaches, as below-threshold does vfs_read.
func readpathCase(sets *functionSets) benchCase {
	return benchCase{
		name: suite.ReadpathCase,
		config: func(self uint32) tracers.Config {
			return tracers.Config{TGID: self, Threshold: highThreshold, Functions: sets.readpath.Functions()}
		},
		cost:  true,
		check: func(s tracers.Stats, reads, _ uint64) error { return everyCallIn(s, sets.perRead, reads, true) },
	}
}

// benchWildcard times the loop with bpftrace's variant w tracing this
// process on set, started before the timer (exec to attached: start-ns)
// and stopped after it (SIGINT to exit: close-ns). With a growth, it is
// one size of BenchmarkMultiStart: it also reports what the kernel shows
// of bpftrace's probes, and where bpftrace stops.
func benchWildcard(w peers.Wildcard, set *funcset.Set, sets *functionSets, root *peers.Root, rootErr error, g *growth) func(*testing.B) {
	return func(b *testing.B) {
		if rootErr != nil {
			b.Skip(rootErr.Error())
		}
		g.before(b, set)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		peer := w.On(set.Functions())
		if err := peer.Preload(root); err != nil {
			b.Fatal(err) // before any Start is timed
		}
		if g != nil {
			warmStart(b, w.Name, func() (io.Closer, error) {
				return w.On(set.Functions()[:1]).StartWithin(root, os.Getpid(), g.startLimit())
			})
		}
		before := g.view(b, 0)
		begin := time.Now()
		run, err := peer.StartWithin(root, os.Getpid(), g.startLimit())
		start := time.Since(begin)
		switch {
		case errors.Is(err, peers.ErrUnavailable):
			b.Skip(err.Error())
		case errors.Is(err, peers.ErrNotAttached) && g != nil:
			g.stopAt(set, suite.StopKilled, fmt.Sprintf("Start did not end within %v (%d times the budget): the tool "+
				"was killed", g.startLimit(), startLimitFactor))
			b.Skipf("not attached: %s", g.stop)
		case err != nil && g != nil:
			g.refused(b, set, err)
		case err != nil:
			b.Fatal(err)
		}
		b.Cleanup(func() { run.Close() })
		if g == nil {
			timeReads(b, fd)
		} else {
			g.timeReads(b, fd, set, start)
		}
		attached := g.view(b, run.Pid()) // after the loop: see viewOrFail
		begin = time.Now()
		res, err := run.Stop()
		closed := time.Since(begin)
		if err != nil {
			b.Fatal(err)
		}
		if res.Lost > 0 && g == nil {
			b.Skipf("%s lost %d of the %d calls it timed (in none of its histograms: %s): its reads did less work "+
				"than the others', not compared", w.Name, res.Lost, res.Calls+res.Lost, w.Loses)
		}
		if err := everyCall(set.Functions(), func(fn string) (uint64, bool) { return res.Functions[fn], true },
			sets.perRead, uint64(b.N)); err != nil {
			b.Fatalf("%s: %v", w.Name, err)
		}
		b.ReportMetric(float64(start.Nanoseconds()), "start-ns")
		b.ReportMetric(float64(closed.Nanoseconds()), "close-ns")
		b.ReportMetric(float64(res.Probes), "probes")
		if w.Loses != "" {
			b.ReportMetric(float64(res.Lost), "lost-calls")
		}
		g.after(b, set, start, closed, before, attached)
	}
}
