package tracers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeJITEnable points bpfJITEnable at a file holding content, or at no
// file when content is "-".
func fakeJITEnable(t *testing.T, content string) {
	path := filepath.Join(t.TempDir(), "bpf_jit_enable")
	if content != "-" {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	saved := bpfJITEnable
	bpfJITEnable = path
	t.Cleanup(func() { bpfJITEnable = saved })
}

// The verifier's refusals of a program without a JIT, as the 7.2.13
// riscv64 guest printed them, are unsupported, naming the JIT's state;
// other load errors are left alone.
func TestRefusedWithoutJIT(t *testing.T) {
	kfunc := errors.New("fsession: load: program vfs_read_session: BPF_PROG_LOAD: errno 524\n" +
		"JIT is required for calling kernel function\nprocessed 0 insns (limit 1000000)")
	storage := errors.New("fentry-fexit-taskstorage: load: program vfs_read_entry: load program: invalid argument: " +
		"program requires BPF JIT compiler but it is not available (1 line(s) omitted)")
	for _, tc := range []struct {
		sysctl string
		err    error
		says   func() string
	}{
		{"0\n", kfunc, func() string { return "net.core.bpf_jit_enable is 0: fsession: load: " }},
		{"-", storage, func() string {
			return "no " + bpfJITEnable + " (a kernel without CONFIG_BPF_JIT): fentry-fexit-taskstorage: load: "
		}},
	} {
		fakeJITEnable(t, tc.sysctl)
		err := fsession.refusedWithoutJIT(tc.err)
		require.ErrorIs(t, err, ErrUnsupported)
		assert.Contains(t, err.Error(), "fsession needs the BPF JIT compiler (CONFIG_BPF_JIT, sysctl "+
			"net.core.bpf_jit_enable=1); this kernel is ")
		assert.Contains(t, err.Error(), tc.says())
	}
	fakeJITEnable(t, "1\n")
	assert.NoError(t, fsession.refusedWithoutJIT(errors.New("load program: invalid argument: R1 invalid mem access")))
}

// Without CONFIG_BPF_JIT there are no trampolines: a refusal of a
// mechanism of tracing programs (ENOMEM at an fentry load, EINVAL for
// fentry.multi's helper) is unsupported, and only where the sysctl is
// absent; a kprobe mechanism's ENOMEM stays an error.
func TestNoTrampolinesWithoutJIT(t *testing.T) {
	enomem := fmt.Errorf("fentry-fexit: load: program vfs_read_entry: load program: %w", unix.ENOMEM)
	helper := fmt.Errorf("fentry-fexit-multi: load: program entry_multi: BPF_PROG_LOAD: %w\n"+
		"program of this type cannot use helper bpf_get_func_arg#183", unix.EINVAL)
	fakeJITEnable(t, "-")
	err := fentryFexit.refusedWithoutJIT(enomem)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "a kernel without CONFIG_BPF_JIT): fentry-fexit: load: ")
	require.ErrorIs(t, fentryFexitMulti.refusedWithoutJIT(helper), ErrUnsupported)
	assert.NoError(t, kprobeKretprobe.refusedWithoutJIT(enomem), "kprobes need no trampoline")
	fakeJITEnable(t, "1\n")
	assert.NoError(t, fentryFexit.refusedWithoutJIT(enomem), "a kernel with a JIT ran out of memory")
}
