package tracers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func TestRefusedCmpxchgIsUnsupported(t *testing.T) {
	refused := fmt.Errorf("fentry-fexit: load: program vfs_read_exit: load program: %w: %s (1 line(s) omitted)",
		unix.EINVAL, cmpxchgRefusal) // as 5.10.0-32 answered
	err := fentryFexit.classify(refused)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "BPF_CMPXCHG")
	assert.ErrorContains(t, err, cmpxchgRefusal)

	other := fmt.Errorf("load program: %w: R1 invalid mem access", unix.EINVAL)
	assert.False(t, errors.Is(fentryFexit.classify(other), ErrUnsupported), "another EINVAL is a failure")
}
