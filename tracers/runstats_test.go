package tracers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
