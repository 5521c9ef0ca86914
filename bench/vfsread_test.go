package bench

import (
	"runtime"
	"slices"
	"testing"

	"tracebench/tracers"
)

// BenchmarkVFSRead reports ns/op of a 1-byte read(2) from /dev/zero with
// nothing attached (baseline) and with each mechanism in each case; the
// every-call case also reports events/s consumed and dropped/s.
func BenchmarkVFSRead(b *testing.B) {
	baseline := unit{name: "baseline", run: benchBaseline}
	runUnits(b, slices.Concat([]unit{baseline}, perMechanism(selectedMechanisms(b), benchVFSRead)))
}

func benchBaseline(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd := openZero(b)
	warmUp(fd)
	readLoop(b, fd)
}

func benchVFSRead(m tracers.Mechanism, c benchCase) func(*testing.B) {
	return func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		s := attach(b, m, c)
		warmUp(fd)
		readLoop(b, fd)
		elapsed := b.Elapsed().Seconds()
		o := s.finish(b, c)
		if c.consume {
			b.ReportMetric(float64(o.events)/elapsed, "events/s")
			// An unknown count reads 0: reporting it would claim no drops.
			if !o.stats.Unknown.Has(tracers.FieldDropped) {
				b.ReportMetric(float64(o.stats.Dropped)/elapsed, "dropped/s")
			}
		}
	}
}
