package kernelbtf_test

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/require"

	"tracebench/internal/kernel"
	"tracebench/internal/kernelbtf"
	"tracebench/internal/testenv"
)

// kernelSpec returns the running kernel's BTF, skipping where it has none.
func kernelSpec(t *testing.T) *btf.Spec {
	t.Helper()
	spec, err := kernelbtf.Spec()
	if errors.Is(err, btf.ErrNotSupported) {
		t.Skipf("kernel %s has no BTF (CONFIG_DEBUG_INFO_BTF; btf.LoadKernelSpec: %v)", kernel.Release(), err)
	}
	require.NoError(t, err)
	return spec
}

func TestSpecDecodesOnce(t *testing.T) {
	first := kernelSpec(t)
	second, err := kernelbtf.Spec()
	require.NoError(t, err)
	require.Same(t, first, second, "a second call decoded the BTF again")
}

func TestNewProgram(t *testing.T) {
	testenv.Tracing.Require(t)
	prog, err := kernelbtf.NewProgram(&ebpf.ProgramSpec{
		Name: "returns_zero", Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	require.NoError(t, err)
	require.NoError(t, prog.Close())

	_, err = kernelbtf.NewProgram(&ebpf.ProgramSpec{Name: "empty", Type: ebpf.SocketFilter, License: "GPL"})
	require.ErrorContains(t, err, "program empty")

	// A collection skips an untyped program silently; NewProgram must not.
	prog, err = kernelbtf.NewProgram(&ebpf.ProgramSpec{Name: "untyped", License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	require.ErrorContains(t, err, "program untyped was not loaded")
	require.Nil(t, prog)
}

func TestFunctionFindsEveryName(t *testing.T) {
	spec := kernelSpec(t)
	all, err := kernelbtf.Functions()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	wrong, twice := 0, 0
	for name, fns := range all {
		got, id, err := kernelbtf.Function(name)
		if len(fns) > 1 {
			twice++
			require.ErrorIs(t, err, btf.ErrMultipleMatches, name)
			continue
		}
		require.NoError(t, err, name)
		require.Same(t, fns[0], got, name)
		want, err := spec.TypeID(fns[0])
		require.NoError(t, err)
		require.Equal(t, want, id, name)
		var viaSpec *btf.Func
		if spec.TypeByName(name, &viaSpec) != nil || viaSpec != fns[0] {
			wrong++
		}
	}
	t.Logf("%d names, %d of them on several functions, %d that btf.Spec.TypeByName gets wrong", len(all), twice, wrong)
	require.NotZero(t, wrong, "btf.Spec.TypeByName finds every function (7.2 has 23 names starting with ___): "+
		"delete Function's own index")
	_, _, err = kernelbtf.Function("no_such_function_in_any_kernel")
	require.ErrorContains(t, err, `kernel function "no_such_function_in_any_kernel"`)
}
