package funcset

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindReadInRecordedGraph(t *testing.T) {
	calls, err := parseGraph(openTestdata(t, "graph_pipe.txt"))
	require.NoError(t, err)
	rs, err := findRead(calls)
	require.NoError(t, err)
	names := map[string]string{}
	for i, c := range rs.tree {
		names[c.name] = rs.paths[i]
	}
	assert.Equal(t, "__x64_sys_read", rs.tree[0].name)
	assert.Equal(t, "__x64_sys_read/ksys_read/vfs_read", names["anon_pipe_read"])
	assert.Equal(t, "__x64_sys_read/ksys_read/vfs_read/rw_verify_area/security_file_permission/apparmor_file_permission/aa_file_perm",
		names["__rcu_read_lock"], "the first call's path")
	assert.NotContains(t, names, "__x64_sys_close", "the syscall before the read")
	assert.NotContains(t, names, "do_sys_openat2", "the syscall after the read")
	require.Len(t, rs.exitWork, 1)
	assert.Equal(t, "fpregs_assert_state_consistent", rs.exitWork[0].name)
}

func TestParseGraphRefusesOtherLines(t *testing.T) {
	for in, want := range map[string]string{
		" 0)   0.694 us    |  vfs_read(file=0x0);":   `function_graph line 2: " 0)   0.694 us    |  vfs_read(file=0x0);" is not a call, a leaf or a return`,
		" 0)   0.694 us    | vfs_read();":            `line 2: " 0)   0.694 us    | vfs_read();" is not`,
		" 0)   0.694 us    |   vfs_read();":          `line 2: " 0)   0.694 us    |   vfs_read();" is not`,
		" 0)   0.694 us    vfs_read();":              `function_graph line 2: " 0)   0.694 us    vfs_read();" has no "|" column`,
		" 0)               |  vfs read() {":          `function_graph line 2: "vfs read" is not "function" or "function [module]"`,
		" 0)               |  /* marker text */":     `line 2: " 0)               |  /* marker text */" is not`,
		" 0)   0.694 us    |  vfs_read(); /* = 0 */": `line 2: " 0)   0.694 us    |  vfs_read(); /* = 0 */" is not`,
	} {
		_, err := parseGraph(strings.NewReader(" 0)               |  __x64_sys_read() {\n" + in + "\n"))
		assert.ErrorContains(t, err, want, in)
	}
	// The lines function_graph prints between calls are not calls.
	calls, err := parseGraph(strings.NewReader("# tracer: function_graph\n" +
		" ------------------------------------------\n 1)  sh-285   =>  proto-310\n" +
		" ------------------------------------------\n\n 1)   0.7 us    |  fput();\n"))
	require.NoError(t, err)
	assert.Equal(t, []graphCall{{name: "fput"}}, calls)
	// With funcgraph-proc, a comm holding "|" or "=>" does not change what
	// a line is.
	calls, err = parseGraph(strings.NewReader(" 1)  a|b-309    |               |  vfs_read() {\n" +
		" 1)  x=>y-310    |   0.7 us      |    fput();\n 1)  a|b-309    |   2.1 us      |  } /* vfs_read */\n" +
		" 1)  a|b-309    =>  x=>y-310\n"))
	require.NoError(t, err)
	assert.Equal(t, []graphCall{{name: "vfs_read"}, {name: "fput", depth: 1}}, calls)
}

func TestFindReadNeedsAHandler(t *testing.T) {
	calls, err := parseGraph(strings.NewReader(" 0)               |  __x64_sys_write() {\n 0)   0.7 us    |    ksys_read();\n" +
		" 0)   0.7 us    |  } /* __x64_sys_write */\n"))
	require.NoError(t, err)
	_, err = findRead(calls)
	assert.EqualError(t, err, "no read(2) handler (a call sys_read or __ARCH_sys_read) among 2 function_graph calls")
}

// recordedRounds returns the recorded trace of each source, rounds times;
// extra, if set, is added to the last round of the pipe read, as a
// preemption would.
func recordedRounds(t *testing.T, rounds int, extra string) map[string][][]byte {
	t.Helper()
	traces := map[string][][]byte{}
	for source, file := range map[string]string{SourceZero: "graph_zero.txt", SourcePipe: "graph_pipe.txt"} {
		raw, err := os.ReadFile("testdata/" + file)
		require.NoError(t, err)
		for range rounds {
			traces[source] = append(traces[source], raw)
		}
	}
	last := string(traces[SourcePipe][rounds-1])
	traces[SourcePipe][rounds-1] = []byte(strings.Replace(last, " 1)   0.694 us    |          kill_fasync();\n",
		" 1)   0.694 us    |          kill_fasync();\n"+extra, 1))
	return traces
}

func TestReadpathOfRecordedRounds(t *testing.T) {
	preempted := " 1)               |          preempt_schedule() {\n 1)   0.7 us    |            __schedule();\n" +
		" 1)   1.2 us    |          }\n"
	rp, err := readpathOf(recordedRounds(t, 3, preempted), 3)
	require.NoError(t, err)
	found := map[string]Found{}
	for _, f := range rp.Functions {
		found[f.Name] = f
	}
	assert.Equal(t, map[string]int{SourceZero: 1, SourcePipe: 1}, found["vfs_read"].Calls)
	assert.Equal(t, map[string]int{SourcePipe: 1}, found["anon_pipe_read"].Calls)
	assert.Equal(t, map[string]int{SourceZero: 1}, found["read_zero"].Calls)
	assert.Equal(t, map[string]int{SourceZero: 2, SourcePipe: 2}, found["__rcu_read_lock"].Calls, "fdget_pos and aa_file_perm")
	assert.True(t, rp.OnEveryRead(found["anon_pipe_read"]))
	assert.False(t, rp.OnEveryRead(found["__schedule"]), "seen in 1 of 3 rounds")
	assert.Equal(t, "pipe: 1 call(s) per read, in 3 of 3 rounds; via __x64_sys_read/ksys_read/vfs_read",
		rp.describe(found["anon_pipe_read"]))
	assert.Equal(t, "exit work after __x64_sys_read", found["fpregs_assert_state_consistent"].Path)
	names := func(fs []Found) (out []string) {
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	assert.Equal(t, []string{"anon_pipe_read"}, names(rp.CalledOnlyBy("vfs_read", SourcePipe)), "the pipe's f_op->read")
	assert.Equal(t, []string{"read_zero"}, names(rp.CalledOnlyBy("vfs_read", SourceZero)))
	assert.Empty(t, rp.CalledOnlyBy("ksys_read", SourcePipe), "ksys_read calls vfs_read for both")

	_, err = readpathOf(recordedRounds(t, 2, ""), 3)
	assert.EqualError(t, err, "readpath: 2 traces of /dev/zero, want 3")
	traces := recordedRounds(t, 1, "")
	traces[SourcePipe][0] = []byte(" 0)   0.7 us    |  fput();\n")
	_, err = readpathOf(traces, 1)
	assert.EqualError(t, err, "readpath: pipe round 1: no read(2) handler (a call sys_read or __ARCH_sys_read) among 1 function_graph calls")
}

func TestFindReadUnderADispatcher(t *testing.T) {
	// A kernel that traces its syscall table's dispatcher puts the handler
	// at depth 1; ksys_read is not the handler.
	calls, err := parseGraph(strings.NewReader(
		" 0)               |  x64_sys_call() {\n" +
			" 0)               |    __x64_sys_read() {\n" +
			" 0)               |      ksys_read() {\n" +
			" 0)   0.7 us    |        vfs_read();\n" +
			" 0)   2.1 us    |      } /* ksys_read */\n" +
			" 0)   2.8 us    |    } /* __x64_sys_read */\n" +
			" 0)   3.5 us    |  } /* x64_sys_call */\n" +
			" 0)   0.7 us    |  fpregs_assert_state_consistent();\n" +
			" 0)               |  x64_sys_call() {\n" +
			" 0)   0.7 us    |    __x64_sys_close();\n" +
			" 0)   1.4 us    |  } /* x64_sys_call */\n"))
	require.NoError(t, err)
	rs, err := findRead(calls)
	require.NoError(t, err)
	var names []string
	for _, c := range rs.tree {
		names = append(names, c.name)
	}
	assert.Equal(t, []string{"__x64_sys_read", "ksys_read", "vfs_read"}, names)
	assert.Equal(t, []string{"", "__x64_sys_read", "__x64_sys_read/ksys_read"}, rs.paths)
	require.Len(t, rs.exitWork, 1, "the next syscall's dispatcher is not exit work")
	assert.Equal(t, "fpregs_assert_state_consistent", rs.exitWork[0].name)
}

func TestReadHandlerByName(t *testing.T) {
	for name, want := range map[string]bool{
		"__x64_sys_read": true, "__arm64_sys_read": true, "__ia32_sys_read": true, "sys_read": true,
		"ksys_read": false, "proc_sys_read": false, "fb_sys_read": false, "cpuusage_sys_read": false,
		"__x64_sys_readv": false, "__x64_sys_pread64": false, "___sys_read": false, "__do_sys_read": true, "__se_sys_read": true,
	} {
		assert.Equal(t, want, readHandler(graphCall{name: name}), name)
	}
	assert.False(t, readHandler(graphCall{name: "__x64_sys_read", module: "m"}), "a module's function")
}

// TestReadpathOf612 reads the function_graph output of one round of each
// source recorded in the Debian 6.12.117 amd64 guest, where x64_sys_call
// is traced: every handler is at depth 1 under it.
func TestReadpathOf612(t *testing.T) {
	traces := map[string][][]byte{}
	for source, file := range map[string]string{SourceZero: "graph_zero_6.12.txt", SourcePipe: "graph_pipe_6.12.txt"} {
		raw, err := os.ReadFile("testdata/" + file)
		require.NoError(t, err)
		traces[source] = [][]byte{raw}
	}
	calls, err := parseGraph(bytes.NewReader(traces[SourceZero][0]))
	require.NoError(t, err)
	rs, err := findRead(calls)
	require.NoError(t, err)
	assert.Equal(t, graphCall{name: "__x64_sys_read", depth: 1}, rs.tree[0])
	var exitWork []string
	for _, c := range rs.exitWork {
		exitWork = append(exitWork, c.name)
	}
	assert.Equal(t, []string{"syscall_exit_to_user_mode_prepare", "fpregs_assert_state_consistent"}, exitWork)

	rp, err := readpathOf(traces, 1)
	require.NoError(t, err)
	var pipeReads []string
	for _, f := range rp.CalledOnlyBy("vfs_read", SourcePipe) {
		pipeReads = append(pipeReads, f.Name)
	}
	assert.Equal(t, []string{"pipe_read"}, pipeReads)
	names := map[string]string{}
	for _, f := range rp.Functions {
		names[f.Name] = f.Path
	}
	assert.Equal(t, "__x64_sys_read/ksys_read/vfs_read", names["read_zero"])
	assert.NotContains(t, names, "x64_sys_call", "the dispatcher is no part of the read")
	assert.NotContains(t, names, "__x64_sys_openat", "the syscall after the read")
}

// The calls of every traced thread are counted by vmlinux function, in
// the order first seen, whatever their depth.
func TestCalledInRecordedGraph(t *testing.T) {
	calls, err := parseGraph(strings.NewReader(" 0)               |  __x64_sys_read() {\n" +
		" 1)   0.7 us    |  ep_poll();\n 0)   0.7 us    |    fput();\n 0)   0.7 us    |    v9fs_read [9p]();\n" +
		" 1)   0.7 us    |  fput();\n 0)   0.7 us    |  } /* __x64_sys_read */\n"))
	require.NoError(t, err)
	assert.Equal(t, []Called{{"__x64_sys_read", 1}, {"ep_poll", 1}, {"fput", 2}}, called(calls))
}
