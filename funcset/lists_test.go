package funcset

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The testdata files are excerpts of what the 7.2.13 guest's kernel
// listed (available_filter_functions, kprobes/blacklist, BTF), and its
// function_graph and function tracer output.

func openTestdata(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseFilterFunctions(t *testing.T) {
	entries, err := ParseFilterFunctions(openTestdata(t, "available_filter_functions.txt"))
	require.NoError(t, err)
	assert.Contains(t, entries, FtraceEntry{Name: "vfs_read"})
	assert.Contains(t, entries, FtraceEntry{Name: "netfs_file_read_iter", Module: "netfs"})
	assert.Contains(t, entries, FtraceEntry{Name: "v9fs_unregister_trans", Module: "9pnet"}, "a module name may start with a digit")
	dups := 0
	for _, e := range entries {
		if e.Name == "type_show" {
			dups++
		}
	}
	assert.Equal(t, 19, dups, "type_show is 19 static functions in 7.2")

	for in, want := range map[string]string{
		"vfs_read extra":  `available_filter_functions line 2: "vfs_read extra" is not "function" or "function [module]"`,
		"vfs_read [kvm":   `line 2: "vfs_read [kvm" is not`,
		"vfs_read []":     `line 2: "vfs_read []" is not`,
		"9lives":          `line 2: "9lives" is not`,
		"ffffffff81 foo":  `line 2: "ffffffff81 foo" is not`,
		"vfs-read":        `line 2: "vfs-read" is not`,
		"vfs_read [k v]":  `line 2: "vfs_read [k v]" is not`,
		"read_zero\x00":   `line 2: "read_zero\x00" is not`,
		"__x64 sys_read":  `line 2: "__x64 sys_read" is not`,
		".isra.0":         `line 2: ".isra.0" is not`,
		"[kvm] vfs_read":  `line 2: "[kvm] vfs_read" is not`,
		"a [kvm] [other]": `line 2: "a [kvm] [other]" is not`,
	} {
		_, err := ParseFilterFunctions(strings.NewReader("ksys_read\n" + in + "\n"))
		assert.ErrorContains(t, err, want, in)
	}
}

func TestParseKprobeBlacklist(t *testing.T) {
	entries, err := ParseKprobeBlacklist(openTestdata(t, "kprobes_blacklist.txt"))
	require.NoError(t, err)
	assert.Contains(t, entries, FtraceEntry{Name: "get_kprobe"})
	assert.Contains(t, entries, FtraceEntry{Name: "kvm_spurious_fault", Module: "kvm"})

	for in, want := range map[string]string{
		"get_kprobe":                         `kprobes blacklist line 1: "get_kprobe" is not "0xSTART-0xEND<tab>function"`,
		"0xffff-0xfff0 get_kprobe":           `line 1: "0xffff-0xfff0 get_kprobe" is not`,
		"0xffff\tget_kprobe":                 `line 1: "0xffff\tget_kprobe" is not`,
		"0xzz-0x10\tget_kprobe":              `line 1: "0xzz-0x10\tget_kprobe" is not`,
		"0x-0x10\tget_kprobe":                `line 1: "0x-0x10\tget_kprobe" is not`,
		"0x0-0x10\tget kprobe":               `kprobes blacklist line 1: "get kprobe" is not "function" or "function [module]"`,
		"0x0000000000000000-0x0000000000000": `line 1: "0x0000000000000000-0x0000000000000" is not`,
	} {
		_, err := ParseKprobeBlacklist(strings.NewReader(in))
		assert.ErrorContains(t, err, want, in)
	}
}

// ParseKallsyms counts every symbol of a name, whatever its type or
// module, and keeps the names listed more than once.
func TestParseKallsyms(t *testing.T) {
	shared, err := ParseKallsyms(strings.NewReader("ffffffffad687080 t event_function\n" +
		"ffffffffaf38b100 T event_function\n0000000000000000 d pt_regs_offset\n" +
		"ffffffffc0a01000 t pt_regs_offset\t[kvm]\nffffffffae1d2f40 T vfs_read\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"event_function": 2, "pt_regs_offset": 2}, shared)

	for in, want := range map[string]string{
		"ffffffffae1d2f40 vfs_read":           `kallsyms line 2: "ffffffffae1d2f40 vfs_read" is not "ADDRESS TYPE symbol"`,
		"ffffffffae1d2f40 Tt vfs_read":        `line 2: "ffffffffae1d2f40 Tt vfs_read" is not`,
		"0xffffae1d2f40 T vfs_read":           `line 2: "0xffffae1d2f40 T vfs_read" is not`,
		"ffffffffae1d2f40 T vfs_read kvm":     `line 2: "ffffffffae1d2f40 T vfs_read kvm" is not`,
		"ffffffffae1d2f40 T vfs_read [a] [b]": `line 2: "ffffffffae1d2f40 T vfs_read [a] [b]" is not`,
	} {
		_, err := ParseKallsyms(strings.NewReader("ffffffffad687080 t event_function\n" + in + "\n"))
		assert.ErrorContains(t, err, want, in)
	}
}

func TestBTFListRoundTrip(t *testing.T) {
	fns, err := ParseBTFList(openTestdata(t, "btf_functions.txt"))
	require.NoError(t, err)
	assert.Contains(t, fns, BTFFunc{Name: "panic", Variadic: true})
	assert.Contains(t, fns, BTFFunc{Name: "___slab_alloc"})
	var b strings.Builder
	require.NoError(t, WriteBTFList(&b, fns))
	again, err := ParseBTFList(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, fns, again)

	for in, want := range map[string]string{
		"panic\tvarargs": `BTF list line 1: "panic\tvarargs" is not "function" or "function<tab>variadic"`,
		"panic variadic": `line 1: "panic variadic" is not`,
		"panic\t":        `line 1: "panic\t" is not`,
		"1panic":         `line 1: "1panic" is not`,
	} {
		_, err := ParseBTFList(strings.NewReader(in))
		assert.ErrorContains(t, err, want, in)
	}
}

func TestKindOfSection(t *testing.T) {
	for prefix, want := range map[string]Kind{"fentry.multi": Fentry, "fsession.multi": Fexit, "kretprobe": Kprobe,
		"kprobe.session": KprobeMulti} {
		k, ok := KindOfSection(prefix)
		assert.True(t, ok, prefix)
		assert.Equal(t, want, k, prefix)
	}
	_, ok := KindOfSection("uprobe")
	assert.False(t, ok)
}
