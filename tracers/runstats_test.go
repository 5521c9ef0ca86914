package tracers

import (
	"fmt"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func TestProgramStatsSub(t *testing.T) {
	later := ProgramStats{Runtime: 5 * time.Microsecond, RunCount: 12, RecursionMisses: 3}
	earlier := ProgramStats{Runtime: 2 * time.Microsecond, RunCount: 2, RecursionMisses: 1}
	assert.Equal(t, ProgramStats{Runtime: 3 * time.Microsecond, RunCount: 10, RecursionMisses: 2}, later.Sub(earlier))
}

// notStarted is a Tracer that did not come from Mechanism.Start.
type notStarted struct{ Tracer }

func TestProgramStatsRejectsForeignTracer(t *testing.T) {
	_, err := fentryFexit.ProgramStats(notStarted{})
	assert.EqualError(t, err, "fentry-fexit: program stats: not a started, open tracer")
	_, err = fentryFexit.ProgramStats(&tracer{})
	assert.EqualError(t, err, "fentry-fexit: program stats: not a started, open tracer")
}

// A kernel without BPF_ENABLE_STATS is unsupported, named; any other
// failure (EPERM, say) is not, so callers fail on it instead of skipping.
func TestRunTimeStatsError(t *testing.T) {
	missing := runTimeStatsError(fmt.Errorf("enable stats: %w", ebpf.ErrNotSupported))
	assert.ErrorIs(t, missing, ErrUnsupported)
	assert.ErrorContains(t, missing, "BPF_ENABLE_STATS")
	denied := runTimeStatsError(unix.EPERM)
	assert.NotErrorIs(t, denied, ErrUnsupported)
	assert.ErrorIs(t, denied, unix.EPERM)
}
