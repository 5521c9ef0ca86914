package tracers

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ProgramStats are the kernel's run-time statistics of one BPF program
// (bpf_prog_info's run_time_ns, run_cnt and recursion_misses). Run time and
// run count advance only while run-time statistics are enabled (see
// EnableRunTimeStats), so they measure the program body, not the
// trampoline or kprobe that dispatches to it.
type ProgramStats struct {
	// Runtime is the total time spent in the program, as the kernel
	// measures it around each run.
	Runtime time.Duration
	// RunCount counts runs; an fsession program runs twice per traced
	// call (entry and return).
	RunCount uint64
	// RecursionMisses counts runs skipped because a BPF program was
	// already running on the CPU.
	RecursionMisses uint64
}

// Sub returns s - earlier, field by field.
func (s ProgramStats) Sub(earlier ProgramStats) ProgramStats {
	return ProgramStats{
		Runtime:         s.Runtime - earlier.Runtime,
		RunCount:        s.RunCount - earlier.RunCount,
		RecursionMisses: s.RecursionMisses - earlier.RecursionMisses,
	}
}

// EnableRunTimeStats turns on the kernel's BPF run-time statistics
// (sysctl kernel.bpf_stats_enabled, reference-counted by the kernel) until
// the returned Closer is closed, which restores the previous setting. While
// on, every BPF program run on the machine costs two extra clock reads. Its
// error wraps ErrUnsupported when the kernel has no BPF_ENABLE_STATS.
func EnableRunTimeStats() (io.Closer, error) {
	closer, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return nil, runTimeStatsError(err)
	}
	return closer, nil
}

// runTimeStatsError is EnableRunTimeStats' error for ebpf.EnableStats' err:
// wrapping ErrUnsupported, naming the command, where cilium/ebpf found the
// kernel without it (ebpf.ErrNotSupported).
func runTimeStatsError(err error) error {
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("enable BPF run-time stats: %w: BPF_ENABLE_STATS (Linux 5.8): %w", ErrUnsupported, err)
	}
	return fmt.Errorf("enable BPF run-time stats: %w", err)
}

// ProgramStats reads the run-time statistics of every program of t, keyed
// by program name in m's BPF object (e.g. "vfs_read_entry"), summed over
// its copies where m loads one per traced function. t must have
// been returned by m.Start. It reads them with BPF_OBJ_GET_INFO_BY_FD (no
// read(2), so it does not trace itself).
func (m Mechanism) ProgramStats(t Tracer) (map[string]ProgramStats, error) {
	tr, ok := t.(*tracer)
	if !m.Can.ProgramStats() || !ok || tr.programs == nil {
		return nil, fmt.Errorf("%s: program stats: not a started, open tracer", m.Name)
	}
	spec, err := m.object()
	if err != nil {
		return nil, err
	}
	progs := tr.byName(spec)
	if len(progs) != len(spec.Programs) || len(tr.programs)%len(spec.Programs) != 0 {
		return nil, fmt.Errorf("%s: program stats: tracer has %d programs, the object %d: "+
			"was it started by another mechanism?", m.Name, len(tr.programs), len(spec.Programs))
	}
	stats := make(map[string]ProgramStats, len(progs))
	for name, each := range progs {
		var sum ProgramStats
		for _, prog := range each {
			// A shim loader (fsession-multi) sets the type cilium/ebpf could
			// not parse from the section: only a known type is compared.
			if want := spec.Programs[name].Type; want != ebpf.UnspecifiedProgram && prog.Type() != want {
				return nil, fmt.Errorf("%s: program stats: program %s is %v, the object says %v: "+
					"was the tracer started by another mechanism?", m.Name, name, prog.Type(), want)
			}
			s, err := prog.Stats()
			if err != nil {
				return nil, fmt.Errorf("%s: program %s stats: %w", m.Name, name, err)
			}
			sum.Runtime += s.Runtime
			sum.RunCount += s.RunCount
			sum.RecursionMisses += s.RecursionMisses
		}
		stats[name] = sum
	}
	return stats, nil
}

// Programs returns the names of m's BPF programs; none for a mechanism
// without BPF.
func (m Mechanism) Programs() ([]string, error) {
	spec, err := m.object()
	if spec == nil {
		return nil, err
	}
	return sortedKeys(spec.Programs), nil
}
