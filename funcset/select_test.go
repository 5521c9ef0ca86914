package funcset

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Select keeps the candidates' order and judges each as every set is
// judged: the lists, the kernel's refusals, the inventory's names.
func TestSelect(t *testing.T) {
	inv := recordedInventory(t)
	s, err := inv.Select("exitpath", "a thread's exit", []Entry{{"__x64_sys_exit", "seen 1 time"}, {"do_exit", "seen"},
		{"kfree", "seen 3 times"}, {"not_a_function", "seen"}}, []Kind{Fentry, Fexit})
	require.NoError(t, err)
	assert.Equal(t, []string{"kfree"}, s.Functions())
	assert.Equal(t, []Entry{{"kfree", "seen 3 times"}}, s.Members)
	assert.Equal(t, []Entry{
		{"__x64_sys_exit", "fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn function " +
			"'__x64_sys_exit' is rejected.; seen 1 time"},
		{"do_exit", "fexit: the kernel refuses it: Attaching fexit/fsession/fmod_ret to __noreturn function 'do_exit' is " +
			"rejected.; seen"},
		{"not_a_function", "in neither BTF nor available_filter_functions of the inventory; seen"},
	}, s.Excluded)
	assert.Equal(t, "exitpath", s.Name)
	assert.Equal(t, "a thread's exit", s.Method)

	s, err = inv.Select("exitpath", "", []Entry{{"do_exit", ""}}, []Kind{KprobeMulti})
	require.NoError(t, err)
	assert.Equal(t, []string{"do_exit"}, s.Functions(), "kprobe.multi takes a function that never returns")

	_, err = inv.Select("twice", "", []Entry{{"kfree", ""}, {"kfree", ""}}, Kinds)
	assert.EqualError(t, err, "function set twice: kfree given twice")
	_, err = inv.Select("none", "", nil, nil)
	assert.EqualError(t, err, "function set none: no attach kind")
}

// Glob matches the functions of both lists by name, module and BTF-only
// functions left out; what a kind cannot attach is excluded, not dropped.
func TestGlob(t *testing.T) {
	inv := recordedInventory(t)
	s, err := inv.Glob("*_read", []Kind{Fentry, Fexit})
	require.NoError(t, err)
	assert.Equal(t, []string{"__x64_sys_read", "anon_pipe_read", "ksys_read", "vfs_read"}, s.Functions())
	assert.Empty(t, s.Excluded)
	assert.Equal(t, "matches *_read", s.Members[0].Reason)

	s, err = inv.Glob("*_exit", []Kind{Fexit})
	require.NoError(t, err)
	assert.Empty(t, s.Members)
	require.Len(t, s.Excluded, 2)
	assert.Equal(t, []string{"__x64_sys_exit", "do_exit"}, names(s.Excluded))

	s, err = inv.Glob("__stack_chk_fail", Kinds)
	require.NoError(t, err)
	assert.Empty(t, s.Members, "in BTF, not in available_filter_functions: no candidate")
	assert.Empty(t, s.Excluded)

	_, err = inv.Glob("vfs_[read", Kinds)
	assert.EqualError(t, err, `function pattern "vfs_[read": syntax error in pattern`)
}

// A name kallsyms lists twice, once in available_filter_functions, is
// refused to kind kprobe alone: trace_kprobe wants a unique symbol.
func TestSharedSymbolRefusesKprobe(t *testing.T) {
	inv := recordedInventory(t)
	inv.SharedSymbols = map[string]int{"kfree": 2}
	s, err := inv.Select("shared", "", []Entry{{"kfree", ""}, {"vfs_read", ""}}, []Kind{Fentry, Fexit, KprobeMulti, Graph})
	require.NoError(t, err)
	assert.Equal(t, []string{"kfree", "vfs_read"}, s.Functions())
	s, err = inv.Select("shared", "", []Entry{{"kfree", ""}, {"vfs_read", ""}}, []Kind{Kprobe})
	require.NoError(t, err)
	assert.Equal(t, []string{"vfs_read"}, s.Functions())
	require.Len(t, s.Excluded, 1)
	assert.Contains(t, s.Excluded[0].Reason, "kprobe: 2 symbols share this name in /proc/kallsyms")
	assert.NotContains(t, inv.Attachable(Kprobe), "kfree")
	assert.Contains(t, inv.Attachable(KprobeMulti), "kfree")
	assert.Contains(t, inv.OwnRefusals(Kprobe), "kfree")
	assert.NotContains(t, inv.OwnRefusals(KprobeMulti), "kfree")
	assert.NotContains(t, inv.OwnRefusals(Kprobe), "__stack_chk_fail", "refused to every kind")
}

func names(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// OutsideFtrace lists what BTF has and ftrace cannot patch, in rank
// order, which no kind attaches.
func TestOutsideFtrace(t *testing.T) {
	inv := recordedInventory(t)
	inv.BTF = append(inv.BTF, BTFFunc{Name: "netlbl_init"}, BTFFunc{Name: "start_kernel"})
	got := inv.OutsideFtrace()
	want := []string{"__stack_chk_fail", "netlbl_init", "start_kernel"}
	sortByRank(want)
	assert.Equal(t, want, got)
	fns := inv.functions()
	for _, name := range got {
		for _, k := range Kinds {
			assert.NotEmpty(t, refusal(k, fns[name]), "%s: %s", k, name)
		}
	}
}

// Attachable is computed once per kind and each caller gets its own copy.
func TestAttachableIsTheCallers(t *testing.T) {
	inv := recordedInventory(t)
	first := inv.Attachable(Fentry)
	require.NotEmpty(t, first)
	want := slices.Clone(first)
	first[0] = "changed by the caller"
	assert.Equal(t, want, inv.Attachable(Fentry))
	assert.True(t, slices.IsSorted(want))
}
