package rawbpf

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
	"tracebench/internal/testenv"
)

func TestTracingMultiAttrEncoding(t *testing.T) {
	ids := []uint32{101, 202, 303}
	cookies := []uint64{7, 8, 9}
	attr := tracingMultiAttr(42, AttachFexitMulti, ids, cookies)
	assert.Equal(t, uint32(42), attr.progFD)
	assert.Equal(t, uint32(0), attr.targetFD)
	assert.Equal(t, uint32(AttachFexitMulti), attr.attachType)
	assert.Equal(t, uint32(0), attr.flags)
	assert.Equal(t, uint32(3), attr.cnt)
	assert.Equal(t, unsafe.Pointer(&ids[0]), attr.ids)
	assert.Equal(t, unsafe.Pointer(&cookies[0]), attr.cookies)

	attr = tracingMultiAttr(42, AttachFentryMulti, ids[:1], nil)
	assert.Nil(t, attr.cookies, "no cookies: a NULL pointer")
	assert.Equal(t, uint32(1), attr.cnt)
	// The whole of link_create up to tracing_multi.cnt, padded to 8 bytes.
	assert.Equal(t, uintptr(40), unsafe.Sizeof(attr))
}

// requireKernelBTF skips where the running kernel has no BTF to resolve
// function names against.
func requireKernelBTF(t *testing.T) {
	t.Helper()
	if _, err := kernelbtf.Spec(); errors.Is(err, btf.ErrNotSupported) {
		t.Skipf("the running kernel has no BTF (CONFIG_DEBUG_INFO_BTF): %v", err)
	}
}

func TestFunctionIDsRefusesBadSets(t *testing.T) {
	requireKernelBTF(t)
	for _, c := range []struct {
		opts TracingMultiOptions
		want string
	}{
		{TracingMultiOptions{}, "tracing_multi link: no function to attach"},
		{TracingMultiOptions{Functions: []string{"vfs_read"}, Cookies: []uint64{1, 2}},
			"tracing_multi link: 2 cookies for 1 functions"},
		{TracingMultiOptions{Functions: []string{"vfs_read", "ksys_read", "vfs_read"}},
			`tracing_multi link: function "vfs_read" given twice`},
		{TracingMultiOptions{Functions: []string{"vfs_read", "no_such_function"}},
			`tracing_multi link: kernel function "no_such_function": not found`},
	} {
		_, err := functionIDs(c.opts)
		assert.EqualError(t, err, c.want)
	}
	ids, err := functionIDs(TracingMultiOptions{Functions: []string{"vfs_read", "ksys_read"}})
	require.NoError(t, err)
	_, want, err := kernelbtf.Function("ksys_read")
	require.NoError(t, err)
	assert.Equal(t, uint32(want), ids[1])
}

// countingMulti is a tracing_multi program of the given section counting
// the runs of the calls of process tgid in hits[cookie].
func countingMulti(t *testing.T, section string, tgid int, hits *ebpf.Map) *ebpf.Program {
	t.Helper()
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(tgid), "out"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference("hits"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	require.NoError(t, insns[7].AssociateMap(hits))
	prog, err := LoadTracingMulti(&ebpf.ProgramSpec{Name: "count_multi", SectionName: section, License: "GPL",
		Instructions: insns})
	require.NoError(t, err)
	t.Cleanup(func() { prog.Close() })
	return prog
}

// requireTracingMulti skips unless this is root on a kernel with
// tracing_multi links (7.2), saying what is missing.
func requireTracingMulti(t *testing.T) {
	t.Helper()
	testenv.Tracing.Require(t)
	requireKernelBTF(t)
	kernel, err := kernelbtf.Spec()
	require.NoError(t, err)
	for _, err := range []error{CheckAttachType(kernel, AttachFentryMulti), CheckTracingMultiLink(kernel)} {
		if errors.Is(err, ebpf.ErrNotSupported) {
			t.Skipf("tracing_multi links need BPF_TRACE_FENTRY_MULTI and link_create.tracing_multi (7.2 BTF): %v", err)
		}
	}
}

// A tracing_multi link attaches every function of the set, and each run
// gets the cookie given for its function.
func TestLinkTracingMultiFunctionsCookies(t *testing.T) {
	requireTracingMulti(t)
	hits, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 8})
	require.NoError(t, err)
	defer hits.Close()
	const reads = 10
	functions := []string{"read_zero", "vfs_read", "ksys_read"} // /dev/zero's f_op->read, its callers
	for section, attachType := range MultiAttachTypes {
		t.Run(section, func(t *testing.T) {
			for k := range uint32(8) {
				require.NoError(t, hits.Put(k, uint64(0)))
			}
			prog := countingMulti(t, section+"/x", os.Getpid(), hits)
			l, err := LinkTracingMultiFunctions(prog, attachType,
				TracingMultiOptions{Functions: functions, Cookies: []uint64{1, 2, 3}})
			if errors.Is(err, unix.EOPNOTSUPP) {
				t.Skipf("the kernel makes no tracing_multi link on this architecture: %v", err)
			}
			require.NoError(t, err)
			readZero(t, reads)
			require.NoError(t, l.Close())
			runs := uint64(1)
			if section == "fsession.multi" {
				runs = 2 // entry and return
			}
			var n uint64
			require.NoError(t, hits.Lookup(uint32(1), &n))
			assert.Equal(t, reads*runs, n, "read_zero: only this test's reads of /dev/zero")
			for cookie, fn := range map[uint32]string{2: "vfs_read", 3: "ksys_read"} {
				require.NoError(t, hits.Lookup(cookie, &n))
				assert.GreaterOrEqual(t, n, reads*runs, fn)
			}
			for _, unused := range []uint32{0, 4} {
				require.NoError(t, hits.Lookup(unused, &n))
				assert.Zero(t, n, "cookie %d was given to no function", unused)
			}
		})
	}
}

func readZero(t *testing.T, n int) {
	t.Helper()
	f, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 1)
	for range n {
		_, err := unix.Read(int(f.Fd()), buf)
		require.NoError(t, err)
	}
}

// What the 7.2 kernel answers a tracing_multi link it refuses: one errno
// for the whole set, whichever function it refused.
func TestLinkTracingMultiFunctionsRefusals(t *testing.T) {
	requireTracingMulti(t)
	hits, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 8})
	require.NoError(t, err)
	defer hits.Close()
	for _, c := range []struct {
		section   string
		functions []string
		want      unix.Errno
	}{
		{"fexit.multi", []string{"vfs_read", "do_exit"}, unix.EINVAL},           // never returns
		{"fsession.multi", []string{"do_exit", "vfs_read"}, unix.EINVAL},        // never returns
		{"fentry.multi", []string{"vfs_read", "migrate_disable"}, unix.EINVAL},  // the verifier's deny list
		{"fentry.multi", []string{"panic"}, unix.EINVAL},                        // variadic
		{"fentry.multi", []string{"vfs_read", "__stack_chk_fail"}, unix.ENOENT}, // not in available_filter_functions
	} {
		prog := countingMulti(t, c.section+"/x", os.Getpid(), hits)
		_, err := LinkTracingMultiFunctions(prog, MultiAttachTypes[c.section], TracingMultiOptions{Functions: c.functions})
		assert.ErrorIs(t, err, c.want, "%s %v", c.section, c.functions)
	}
	prog := countingMulti(t, "fentry.multi/x", os.Getpid(), hits)
	l, err := LinkTracingMultiFunctions(prog, AttachFentryMulti, TracingMultiOptions{Functions: []string{"do_exit"}})
	require.NoError(t, err, "fentry attaches where fexit cannot")
	require.NoError(t, l.Close())
}

func TestLoadErrorReason(t *testing.T) {
	err := &LoadError{Errno: unix.EINVAL, Log: []string{"func#0 @0",
		"Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.",
		"processed 0 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0"}}
	assert.Equal(t, "Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.", err.Reason())
	assert.ErrorIs(t, err, unix.EINVAL)
	assert.Equal(t, "invalid argument", (&LoadError{Errno: unix.EINVAL}).Reason())
	assert.Equal(t, "BPF_PROG_LOAD: invalid argument", (&LoadError{Errno: unix.EINVAL}).Error())
}

// LoadTracing loads where cilium/ebpf v0.22 cannot find the target
// (____fput), and returns the verifier's reason where the kernel refuses.
func TestLoadTracing(t *testing.T) {
	requireTracingMulti(t)
	load := func(attachType ebpf.AttachType, function string) error {
		prog, err := LoadTracing(&ebpf.ProgramSpec{Name: "empty", Type: ebpf.Tracing, AttachType: attachType,
			AttachTo: function, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
		if err == nil {
			prog.Close()
		}
		return err
	}
	assert.NoError(t, load(ebpf.AttachTraceFEntry, "vfs_read"))
	assert.NoError(t, load(ebpf.AttachTraceFExit, "____fput"), "a name cilium/ebpf's lookup misses")
	var refused *LoadError
	require.ErrorAs(t, load(ebpf.AttachTraceFExit, "do_exit"), &refused)
	assert.Equal(t, "Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.", refused.Reason())
	assert.ErrorContains(t, load(ebpf.AttachTraceFEntry, "no_such_function"), `kernel function "no_such_function"`)
}
