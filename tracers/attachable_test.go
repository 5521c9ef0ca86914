package tracers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/funcset"
	"tracebench/internal/kernelbtf"
	"tracebench/internal/rawbpf"
)

func TestRefusedFunctionsWithoutBulkProbe(t *testing.T) {
	for _, kind := range []funcset.Kind{funcset.Kprobe, funcset.Graph} {
		refused, err := RefusedFunctions(kind, []string{"vfs_read", "do_exit"})
		require.NoError(t, err, kind)
		assert.Empty(t, refused, "%s: nothing to ask beyond the kernel's lists", kind)
	}
	_, err := RefusedFunctions("uprobe", nil)
	assert.EqualError(t, err, `attach kind "uprobe" has no probe`)
}

// Where the kernel has no tracing_multi link (before 7.2, as on this
// project's host), the trampoline kinds cannot be probed in bulk and say so.
func TestRefusedFunctionsNeedsTracingMulti(t *testing.T) {
	spec, err := kernelbtf.Spec()
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	if rawbpf.CheckAttachType(spec, rawbpf.AttachFentryMulti) == nil {
		t.Skipf("kernel %s has tracing_multi links: the guest test probes them", KernelRelease())
	}
	_, err = RefusedFunctions(funcset.Fentry, []string{"vfs_read"})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "probing fentry attaches in bulk needs a tracing_multi link (7.2)")
}
