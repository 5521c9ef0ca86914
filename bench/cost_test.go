package bench

import (
	"errors"
	"testing"

	"tracebench/tracers"
)

// reportCost reports s's start-up and, for a BPF mechanism, its kernel
// objects, read while it ran (s.finish has closed it: see footprint):
// start-ns (Start: load, verify, attach; guest instructions under icount),
// map-bytes (the maps' memlock charge as the kernel reports it),
// xlated-bytes and jited-bytes (all programs, after the verifier and JIT),
// verified-insns (instructions the verifier processed).
func reportCost(b *testing.B, s *session) {
	b.ReportMetric(float64(s.start.Nanoseconds()), "start-ns")
	f := s.footprint
	if f == nil {
		return
	}
	b.ReportMetric(float64(f.MemlockBytes()), "map-bytes")
	var xlated, jited, verified float64
	for _, p := range f.Programs {
		xlated += float64(p.XlatedBytes)
		jited += float64(p.JitedBytes)
		verified += float64(p.VerifiedInsns)
	}
	b.ReportMetric(xlated, "xlated-bytes")
	if jited > 0 {
		b.ReportMetric(jited, "jited-bytes")
	}
	if verified > 0 {
		b.ReportMetric(verified, "verified-insns")
	}
}

// footprint reads s's kernel objects, nil for a mechanism without BPF ones.
func footprint(b *testing.B, tr tracers.Tracer) *tracers.Footprint {
	f, err := tracers.FootprintOf(tr)
	if errors.Is(err, tracers.ErrNoFootprint) {
		return nil
	}
	if err != nil {
		b.Fatalf("footprint: %v", err)
	}
	return &f
}
