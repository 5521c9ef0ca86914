package hostload

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOtherGuestsTellsOursApart(t *testing.T) {
	assert.True(t, descendsFrom(os.Getpid(), os.Getpid()))
	child := exec.Command("sleep", "30")
	require.NoError(t, child.Start())
	defer child.Process.Kill()
	assert.True(t, descendsFrom(child.Process.Pid, os.Getpid()), "our child")
	assert.False(t, descendsFrom(os.Getppid(), os.Getpid()), "our parent")
	assert.False(t, descendsFrom(1, os.Getpid()))
	assert.Equal(t, os.Getpid(), parentOf(child.Process.Pid))
}

func TestSampler(t *testing.T) {
	assert.Regexp(t, regexp.MustCompile(`^\d+\.\d+ \d+\.\d+ \d+\.\d+$`), Averages())
	sum := Start(time.Hour).Stop()
	assert.Equal(t, 1, sum.Samples, "one at start, the next an interval later")
	assert.Equal(t, sum.LoadMax, sum.LoadMean)
	assert.GreaterOrEqual(t, sum.LoadMean, 0.0)
}

func TestCPUModelNamesOne(t *testing.T) {
	model := CPUModel()
	assert.NotEmpty(t, model)
	assert.NotEqual(t, "unknown", model, "neither /proc/cpuinfo nor /proc/sys/kernel/arch read")
}
