package tracers

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The probe program must be valid: a kernel with BPF_CMPXCHG (5.12+)
// loads it, one without refuses it with EINVAL, nothing else.
func TestCmpxchgProbeLoads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading a socket filter needs root (CAP_BPF)")
	}
	err := cmpxchgRefused()
	var u *UnsupportedError
	if errors.As(err, &u) {
		t.Skipf("this kernel lacks BPF_CMPXCHG: %v", err)
	}
	require.NoError(t, err)
}
