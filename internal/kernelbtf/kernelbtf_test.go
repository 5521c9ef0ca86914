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

func TestSpecDecodesOnce(t *testing.T) {
	first, err := kernelbtf.Spec()
	if errors.Is(err, btf.ErrNotSupported) {
		t.Skipf("kernel %s has no BTF (CONFIG_DEBUG_INFO_BTF; btf.LoadKernelSpec: %v)", kernel.Release(), err)
	}
	require.NoError(t, err)
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
