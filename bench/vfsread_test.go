package bench

import (
	"errors"
	"flag"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"tracebench/bench/floors"
	"tracebench/bench/suite"
	"tracebench/internal/testenv"
	"tracebench/tracers"
)

// BenchmarkVFSRead reports ns/op of a 1-byte read(2) from /dev/zero with
// nothing attached (baseline), with each floor (<floor>/floor: empty
// programs of some attach kinds) and with each mechanism in each case.
// The every-call case also reports events/s (events of the timed reads per
// second of the loop), dropped/s (0, or the sub-benchmark fails) and
// consumer-ns/event (reading them after the loop); below-threshold
// reports the mechanism's cost beyond time (see reportCost).
func BenchmarkVFSRead(b *testing.B) {
	baseline := unit{name: "baseline", run: benchBaseline}
	mechs := selectedMechanisms(b)
	runUnits(b, slices.Concat([]unit{baseline}, floorUnits(mechs), perMechanism(mechs, cases, benchVFSRead)))
}

func benchBaseline(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	timeReads(b, openZero(b))
}

func benchVFSRead(m tracers.Mechanism, c benchCase) func(*testing.B) {
	return func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		s := attach(b, m, c)
		s.timeReads(b, fd, c.drain)
		elapsed := b.Elapsed().Seconds()
		o := s.finish(b, c)
		if c.cost {
			reportCost(b, s)
		}
		if !c.drain {
			return
		}
		b.ReportMetric(float64(o.events)/elapsed, "events/s")
		if o.events > 0 {
			b.ReportMetric(float64(o.drain.Nanoseconds())/float64(o.events), "consumer-ns/event")
		}
		// An unknown count reads 0: reporting it would claim no drops.
		if !o.stats.Unknown.Has(tracers.FieldDropped) {
			b.ReportMetric(float64(o.stats.Dropped)/elapsed, "dropped/s")
			if o.stats.Dropped > 0 {
				b.Fatalf("%s/%s: %d events dropped with a %d-byte ring for %d reads: no comparison",
					m.Name, c.name, o.stats.Dropped, ringFor(b.N+warmupReads), b.N)
			}
		}
	}
}

// settleFor is how long settle idles: a pause lets work started before
// the loop (freeing the previous sub-benchmark's programs, RCU callbacks)
// finish first, and under icount an idle guest executes no instructions;
// but leaving idle may itself queue work (tick, RCU) into the loop.
var settleFor = flag.Duration("tracebench.settle", 0,
	"idle this long before each timed loop, after sync(2) and a garbage collection (0: no pause)")

// settle writes dirty pages back (sync(2)), collects garbage, then idles
// for settleFor; called right before each timed loop. The sync keeps
// writeback of the output so far out of the loop: it runs in kernel
// threads, whose instructions icount counts, through functions the multi
// rows trace (mutex_lock, fput).
func settle() {
	unix.Sync()
	runtime.GC()
	if *settleFor > 0 {
		time.Sleep(*settleFor)
	}
}

// floorUnits are the floors of mechs' attach kinds, and of each single
// kind in a pair (fentry and fexit alone), in suite.Floors' order.
func floorUnits(mechs []tracers.Mechanism) []unit {
	var units []unit
	for _, name := range suite.Floors {
		if probe := floorProbe(mechs, name); probe != nil {
			units = append(units, unit{name: name + "/" + suite.FloorCase, run: benchFloor(name, probe)})
		}
	}
	return units
}

// floorProbe returns the Probe of a mechanism among mechs whose attach
// kinds include all of floor's: the floor runs where that mechanism can.
// Nil if no selected mechanism uses those kinds.
func floorProbe(mechs []tracers.Mechanism, floor string) func() error {
	for _, m := range mechs {
		kinds, err := m.AttachKinds()
		if err == nil && len(kinds) > 0 && !slices.ContainsFunc(suite.FloorKinds(floor), func(k string) bool {
			return !slices.Contains(kinds, k)
		}) {
			return m.Probe
		}
	}
	return nil
}

func benchFloor(name string, probe func() error) func(*testing.B) {
	return func(b *testing.B) {
		testenv.Tracing.Require(b)
		if err := probe(); errors.Is(err, tracers.ErrUnsupported) {
			b.Skip(err.Error())
		} else if err != nil {
			b.Fatal(err)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		f, err := floors.Attach(name)
		if kernelRefused(err) {
			b.Skipf("this kernel refused it: %v", err)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		timeReads(b, fd)
		if err := f.Close(); err != nil {
			b.Fatalf("close: %v", err)
		}
	}
}

// kernelRefused reports whether err says the kernel lacks or forbids what a
// floor needs, as tracers classifies a mechanism's refusals (ErrNotSupported,
// EPERM as root, no kprobe_events).
func kernelRefused(err error) bool {
	return errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrNotExist) ||
		(errors.Is(err, unix.EPERM) && os.Geteuid() == 0)
}
