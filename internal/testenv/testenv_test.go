package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrivilegeMissing(t *testing.T) {
	assert.Equal(t, "loading BPF tracing programs needs root (CAP_BPF, CAP_PERFMON); running as euid 1000",
		Tracing.missing(1000))
	assert.Equal(t, "creating a network namespace needs root (CAP_SYS_ADMIN); running as euid 65534",
		NetNS.missing(65534))
	assert.Empty(t, PIDNS.missing(0), "root lacks nothing")
}
