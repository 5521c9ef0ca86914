package tracefs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBufferCounts(t *testing.T) {
	dir := t.TempDir()
	for cpu, stats := range []string{
		"entries: 3\noverrun: 0\ncommit overrun: 0\nbytes: 1443640\noldest event ts:    28.389254\n" +
			"now ts:    32.561894\ndropped events: 2\nread events: 10\n",
		"entries: 1\noverrun: 4\ndropped events: 0\nread events: 5\n",
	} {
		path := filepath.Join(dir, "per_cpu", "cpu"+string(rune('0'+cpu)), "stats")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(stats), 0o644))
	}
	counts, err := Instance{Dir: dir}.BufferCounts()
	require.NoError(t, err)
	assert.Equal(t, uint64(4), counts["entries"])
	assert.Equal(t, uint64(4), counts["overrun"])
	assert.Equal(t, uint64(2), counts["dropped events"])
	assert.Equal(t, uint64(15), counts["read events"])
	_, err = Instance{Dir: t.TempDir()}.BufferCounts()
	assert.ErrorContains(t, err, "no per-CPU ring buffer stats")
}

func TestInstanceName(t *testing.T) {
	in := Instance{Dir: "/sys/kernel/tracing/instances/tracebench-4242-3-thresh10000"}
	assert.Equal(t, 4242, in.owner())
	assert.Equal(t, "10000", in.thresholdUS())
	in = Instance{Dir: "/sys/kernel/tracing/instances/tracebench-77-1"}
	assert.Equal(t, 77, in.owner())
	assert.Equal(t, "", in.thresholdUS())
}

func TestOnlyOwnInstanceNames(t *testing.T) {
	for name, ours := range map[string]bool{
		"tracebench-4242-3-thresh10000": true,
		"tracebench-77-1":               true,
		"tracebench-77-2-forks":         true,
		"tracebench-debug":              false,
		"tracebench-0-1":                false,
		"tracebench-77-1-mine":          false,
		"other":                         false,
	} {
		assert.Equal(t, ours, instanceName.MatchString(name), name)
	}
}

func TestSwapRestores(t *testing.T) {
	dir := t.TempDir()
	in := Instance{Dir: dir}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "options"), 0o755))
	for file, value := range map[string]string{"options/a": "1", "options/b": "0"} {
		require.NoError(t, os.WriteFile(in.Path(file), []byte(value+"\n"), 0o644))
	}
	old, err := in.Swap([]Setting{{File: "options/a", Value: "0"}, {File: "options/b", Value: "1"}}, false)
	require.NoError(t, err)
	assert.Equal(t, []Setting{{File: "options/a", Value: "1"}, {File: "options/b", Value: "0"}}, old)
	now, _ := in.Read("options/b")
	assert.Equal(t, "1", now)

	optional, err := in.Swap([]Setting{{File: "options/missing", Value: "0"}}, true)
	require.NoError(t, err)
	assert.Empty(t, optional, "an option the kernel lacks is skipped")
	_, err = in.Swap([]Setting{{File: "options/a", Value: "1"}, {File: "options/missing", Value: "0"}}, false)
	assert.ErrorIs(t, err, os.ErrNotExist, "a required one is not")
	now, _ = in.Read("options/a")
	assert.Equal(t, "0", now, "what the failed swap wrote is restored")

	require.NoError(t, in.Restore(old))
	for file, want := range map[string]string{"options/a": "1", "options/b": "0"} {
		got, _ := in.Read(file)
		assert.Equal(t, want, got, file)
	}
}

func TestWriteEachWritesLines(t *testing.T) {
	dir := t.TempDir()
	in := Instance{Dir: dir}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "set_ftrace_filter"), []byte("old\n"), 0o644))
	refused, err := in.WriteEach("set_ftrace_filter", []string{"vfs_read", "anon_pipe_read"})
	require.NoError(t, err)
	assert.Empty(t, refused)
	got, err := os.ReadFile(filepath.Join(dir, "set_ftrace_filter"))
	require.NoError(t, err)
	assert.Equal(t, "vfs_read\nanon_pipe_read\n", string(got), "one line each, the old content gone")
	_, err = in.WriteEach("missing", nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
