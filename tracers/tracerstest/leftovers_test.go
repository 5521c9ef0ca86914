package tracerstest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
)

func TestLeftoverString(t *testing.T) {
	l := Leftover{Kind: tracers.ResidueTracefsInstance, What: "/sys/kernel/tracing/instances/tracebench-7-1"}
	assert.Equal(t, "tracefs instance /sys/kernel/tracing/instances/tracebench-7-1", l.String())
	l = Leftover{Kind: tracers.ResidueBPFProgram, What: "12 vfs_read_entry"}
	assert.Equal(t, "BPF program 12 vfs_read_entry", l.String())
}
