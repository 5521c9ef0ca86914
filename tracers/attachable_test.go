package tracers

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

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
// project's host, or arm64 and ppc64el 7.2), the trampoline kinds are asked
// one function at a time, by loading a program for each alone: the
// verifier's refusal names the function that cannot be attached.
func TestRefusedFunctionsOneByOneWithoutTracingMulti(t *testing.T) {
	spec, err := kernelbtf.Spec()
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	if rawbpf.CheckAttachType(spec, rawbpf.AttachFentryMulti) == nil {
		t.Skipf("kernel %s has tracing_multi links: the guest test probes them", KernelRelease())
	}
	refused, err := RefusedFunctions(funcset.Fexit, []string{"vfs_read", "do_exit"})
	if errors.Is(err, unix.EPERM) {
		t.Skipf("loading a tracing program needs CAP_BPF and CAP_PERFMON: %v", err)
	}
	require.NoError(t, err)
	assert.Equal(t, []string{"do_exit"}, slices.Collect(maps.Keys(refused)), "fexit refuses the noreturn function alone")
	assert.Contains(t, refused["do_exit"], "do_exit", "the verifier's reason names it")
}
