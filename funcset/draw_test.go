package funcset

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedInventory is the inventory of the recorded excerpts, with what
// the 7.2 kernel refused and a quiet window that called kfree.
func recordedInventory(t *testing.T) *Inventory {
	t.Helper()
	inv := &Inventory{Kernel: "7.2.13+deb14-amd64", Refused: map[Kind]map[string]string{
		Fexit: {"do_exit": "the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.",
			"__x64_sys_exit": "the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn function '__x64_sys_exit' is rejected."},
		Fentry: {"__rcu_read_lock": "the kernel refuses it: Attaching tracing programs to function '__rcu_read_lock' is rejected."},
	}}
	var err error
	inv.BTF, err = ParseBTFList(openTestdata(t, "btf_functions.txt"))
	require.NoError(t, err)
	inv.Ftrace, err = ParseFilterFunctions(openTestdata(t, "available_filter_functions.txt"))
	require.NoError(t, err)
	inv.KprobeBlacklist, err = ParseKprobeBlacklist(openTestdata(t, "kprobes_blacklist.txt"))
	require.NoError(t, err)
	inv.Quiet = &Quiet{Window: time.Second, Calls: map[string]uint64{"kfree": 953}}
	return inv
}

func recordedReadpath(t *testing.T, inv *Inventory) *Set {
	t.Helper()
	rp, err := readpathOf(recordedRounds(t, 2, ""), 2)
	require.NoError(t, err)
	s, err := inv.Readpath(rp, Kinds)
	require.NoError(t, err)
	return s
}

func reasons(entries []Entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		m[e.Name] = e.Reason
	}
	return m
}

func TestReadpathSet(t *testing.T) {
	inv := recordedInventory(t)
	s := recordedReadpath(t, inv)
	assert.Equal(t, "readpath", s.Name)
	assert.Equal(t, Kinds, s.Kinds)
	assert.Equal(t, []string{"__x64_sys_read", "ksys_read", "fdget_pos", "vfs_read", "rw_verify_area",
		"security_file_permission", "read_zero", "fput", "fpregs_assert_state_consistent", "anon_pipe_read"}, s.Functions())
	in := reasons(s.Members)
	assert.Equal(t, "pipe: 1 call(s) per read, in 2 of 2 rounds; via __x64_sys_read/ksys_read/vfs_read", in["anon_pipe_read"])
	out := reasons(s.Excluded)
	assert.Equal(t, "fentry: the kernel refuses it: Attaching tracing programs to function '__rcu_read_lock' is rejected.; "+
		"/dev/zero: 2 call(s) per read, in 2 of 2 rounds; pipe: 2 call(s) per read, in 2 of 2 rounds; "+
		"via __x64_sys_read/ksys_read/fdget_pos", out["__rcu_read_lock"])
	// The excerpts list only some of the path's functions.
	assert.True(t, strings.HasPrefix(out["mutex_lock"], "in neither BTF nor available_filter_functions"), out["mutex_lock"])
	assert.Len(t, s.Excluded, 9)
}

// CallsPerRead reads back what Readpath wrote of each member, per source.
func TestCallsPerRead(t *testing.T) {
	s := recordedReadpath(t, recordedInventory(t))
	perRead := map[string]int{}
	for _, e := range s.Members {
		if n, ok := CallsPerRead(e, SourceZero); ok {
			perRead[e.Name] = n
		}
	}
	assert.Equal(t, map[string]int{"__x64_sys_read": 1, "ksys_read": 1, "fdget_pos": 1, "vfs_read": 1, "rw_verify_area": 1,
		"security_file_permission": 1, "read_zero": 1, "fput": 1, "fpregs_assert_state_consistent": 1}, perRead)
	pipe, ok := CallsPerRead(Entry{Name: "anon_pipe_read", Reason: reasons(s.Members)["anon_pipe_read"]}, SourcePipe)
	assert.True(t, ok)
	assert.Equal(t, 1, pipe)
	for _, reason := range []string{
		"/dev/zero: 2 call(s) per read, in 1 of 2 rounds; via x",   // not on every read
		"pipe: 1 call(s) per read, in 2 of 2 rounds; via x",        // another source
		"/dev/zero: two call(s) per read, in 2 of 2 rounds; via x", // not a count
		"",
	} {
		_, ok := CallsPerRead(Entry{Name: "f", Reason: reason}, SourceZero)
		assert.False(t, ok, reason)
	}
}

// The functions a kprobe_multi or perf-event kprobe program runs itself
// leave readpath for that kind alone, named with why; Select, for the
// tracer's own path, keeps them.
func TestReadpathSetLeavesOutOwnRuns(t *testing.T) {
	inv := recordedInventory(t)
	rp, err := readpathOf(recordedRounds(t, 2, ""), 2)
	require.NoError(t, err)
	for _, kind := range []Kind{KprobeMulti, Kprobe} {
		s, err := inv.Readpath(rp, []Kind{kind})
		require.NoError(t, err)
		assert.False(t, s.Has("__rcu_read_lock"), kind)
		assert.True(t, strings.HasPrefix(reasons(s.Excluded)["__rcu_read_lock"], string(kind)+": run by the tracer itself"),
			kind)
		own, err := inv.Select("ownpath", "test", []Entry{{Name: "__rcu_read_lock"}}, []Kind{kind})
		require.NoError(t, err)
		assert.True(t, own.Has("__rcu_read_lock"), kind)
	}
	fentry, err := inv.Readpath(rp, []Kind{Fentry})
	require.NoError(t, err)
	assert.NotContains(t, reasons(fentry.Excluded)["__rcu_read_lock"], "run by the tracer itself")
}

// inventoryWithDuplicate adds a second show_ip to the recorded
// available_filter_functions, as two static functions of one name would
// be, and a second show_iret_regs to the BTF.
func inventoryWithDuplicate(t *testing.T) *Inventory {
	inv := recordedInventory(t)
	inv.Ftrace = append(inv.Ftrace, FtraceEntry{Name: "show_ip"})
	inv.BTF = append(inv.BTF, BTFFunc{Name: "show_iret_regs"})
	return inv
}

func TestDrawExcludesWithReasons(t *testing.T) {
	inv := inventoryWithDuplicate(t)
	readpath := recordedReadpath(t, inv)
	all, err := inv.Draw(All, Kinds, readpath)
	require.NoError(t, err)
	hot := 0
	for _, name := range all.Functions() {
		if readpath.Has(name) || reasons(readpath.Excluded)[name] != "" || inv.Quiet.Calls[name] > 0 {
			hot++
		}
	}
	require.Equal(t, 11, hot, "all holds readpath's 10 members and kfree")
	n, err := inv.Draw(len(all.Members)-hot, Kinds, readpath)
	require.NoError(t, err)
	_, err = inv.Draw(len(all.Members)-hot+1, Kinds, readpath)
	assert.ErrorContains(t, err, fmt.Sprintf("only %d candidates", len(all.Members)-hot))

	out := reasons(n.Excluded)
	assert.Equal(t, "fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is rejected.",
		out["do_exit"])
	assert.Equal(t, "fentry: variadic: the verifier refuses trampolines on functions with variable arguments; "+
		"fexit: variadic: the verifier refuses trampolines on functions with variable arguments", out["panic"])
	assert.Equal(t, "kprobe: in the kprobes blacklist (debugfs kprobes/blacklist): register_kprobe refuses it (EINVAL)",
		out["get_kprobe"])
	assert.Contains(t, out["show_ip"], "fentry: 2 functions share this name in available_filter_functions")
	assert.Equal(t, "fentry: 2 vmlinux BTF functions share this name: a trampoline by name cannot tell them apart; "+
		"fexit: 2 vmlinux BTF functions share this name: a trampoline by name cannot tell them apart", out["show_iret_regs"])
	assert.Equal(t, "hot path: a quiet system called it 953 times in 1s", out["kfree"])
	assert.Equal(t, "hot path: in readpath", out["vfs_read"])
	assert.True(t, strings.HasPrefix(out["__rcu_read_lock"], "fentry: the kernel refuses it"),
		"what a kind refuses is said before the hot path: %s", out["__rcu_read_lock"])
	assert.NotContains(t, out, "__stack_chk_fail", "in BTF only: not a candidate, listed nowhere")
	assert.NotContains(t, out, "netfs_file_read_iter", "a module's: not a candidate")

	assert.NotContains(t, reasons(all.Excluded), "kfree", "all keeps the hot path")
	assert.Contains(t, all.Functions(), "kfree")
	assert.Contains(t, all.Functions(), "vfs_read")
	assert.Equal(t, fmt.Sprintf("rank 1 of %d candidates", len(all.Members)), all.Members[0].Reason)
}

func TestDrawIsAPrefixOfLargerSets(t *testing.T) {
	inv := recordedInventory(t)
	readpath := recordedReadpath(t, inv)
	previous := []string{}
	for n := 1; n <= 6; n++ {
		s, err := inv.Draw(n, Kinds, readpath)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("n%d", n), s.Name)
		require.Len(t, s.Members, n)
		assert.Equal(t, previous, s.Functions()[:n-1])
		previous = s.Functions()
		again, err := inv.Draw(n, Kinds, readpath)
		require.NoError(t, err)
		assert.Equal(t, s, again)
	}
	// Another order of the lists draws the same set.
	shuffled := recordedInventory(t)
	slices.Reverse(shuffled.BTF)
	slices.Reverse(shuffled.Ftrace)
	s, err := shuffled.Draw(6, Kinds, readpath)
	require.NoError(t, err)
	assert.Equal(t, previous, s.Functions())
	assert.False(t, slices.IsSorted(previous), "drawn in rank order, not by name: %v", previous)
}

func TestDrawForOneKind(t *testing.T) {
	inv := inventoryWithDuplicate(t)
	inv.BTF = append(inv.BTF, BTFFunc{Name: "rcu_read_unlock_special"})
	inv.Ftrace = append(inv.Ftrace, FtraceEntry{Name: "rcu_read_unlock_special"})
	all, err := inv.Draw(All, Kinds, nil)
	require.NoError(t, err)
	hang := "hangs the kernel: a trampoline's own rcu_read_unlock calls it; links holding it never returned (7.2.13)"
	assert.Equal(t, "fentry: "+hang+"; fexit: "+hang, reasons(all.Excluded)["rcu_read_unlock_special"])
	assert.NotContains(t, inv.Attachable(Fexit), "rcu_read_unlock_special", "never probed by attaching it")
	multi, err := inv.Draw(All, []Kind{KprobeMulti}, nil)
	require.NoError(t, err)
	for _, name := range []string{"do_exit", "panic", "get_kprobe", "__rcu_read_lock", "rcu_read_unlock_special"} {
		assert.Contains(t, multi.Functions(), name, "kprobe.multi attaches it")
	}
	assert.NotContains(t, multi.Functions(), "show_ip", "ambiguous for every kind")
	assert.Equal(t, []Kind{KprobeMulti}, multi.Kinds)
}

func TestDrawRefusals(t *testing.T) {
	inv := recordedInventory(t)
	readpath := recordedReadpath(t, inv)
	for _, c := range []struct {
		n     int
		kinds []Kind
		inv   *Inventory
		rp    *Set
		want  string
	}{
		{0, Kinds, inv, readpath, "function set of 0 functions: want at least 1, or All"},
		{-2, Kinds, inv, readpath, "function set of -2 functions: want at least 1, or All"},
		{1000, Kinds, inv, readpath, "function set n1000: only 21 candidates"},
		{1, nil, inv, readpath, "function set n1: no attach kind"},
		{1, Kinds, inv, nil, "function set n1: the hot path is unknown (want a quiet measurement and readpath)"},
		{1, Kinds, &Inventory{}, readpath, "function set n1: the hot path is unknown (want a quiet measurement and readpath)"},
	} {
		_, err := c.inv.Draw(c.n, c.kinds, c.rp)
		assert.EqualError(t, err, c.want)
	}
}
