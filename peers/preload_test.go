package peers

import (
	"debug/elf"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree makes files (content "x") and symlinks ("->target") under dir.
func tree(t *testing.T, dir string, entries map[string]string) {
	t.Helper()
	for name, v := range entries {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if target, ok := strings.CutPrefix(v, "->"); ok {
			require.NoError(t, os.Symlink(target, p))
		} else {
			require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
		}
	}
}

func TestRealStaysInTheRoot(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"usr/lib/arch/libx.so.1.2": "x",
		"usr/lib/arch/libx.so.1":   "->libx.so.1.2",
		"lib":                      "->usr/lib",
		"usr/lib/abs":              "->/usr/lib/arch/libx.so.1",
		"usr/lib/up":               "->../lib/arch/./libx.so.1",
		"loop/a":                   "->b",
		"loop/b":                   "->a",
		// On this system /etc/passwd exists; in the root it does not.
		"usr/lib/out": "->/etc/passwd",
	})
	r := &Root{Dir: dir}
	for _, p := range []string{"/lib/arch/libx.so.1", "/usr/lib/abs", "/usr/lib/up", "//lib/./arch/libx.so.1.2"} {
		got, err := r.real(p)
		if assert.NoError(t, err, p) {
			assert.Equal(t, "/usr/lib/arch/libx.so.1.2", got, p)
		}
	}
	_, err := r.real("/loop/a")
	assert.ErrorIs(t, err, syscall.ELOOP)
	_, err = r.real("/usr/lib/out")
	assert.ErrorIs(t, err, os.ErrNotExist, "an absolute link is followed in the root, not on this system")
}

// fakeRoot copies this system's /bin/true and what the loader maps for
// it into a root laid out otherwise: the libraries in a directory of
// ld.so.conf.d, the interpreter reached through an absolute link, /bin a
// link to usr/bin. It returns the root and the paths loads should give.
func fakeRoot(t *testing.T) (*Root, []string) {
	t.Helper()
	host, err := (&Root{Dir: "/"}).loads("/usr/bin/true")
	require.NoError(t, err, "this test copies the system's /usr/bin/true, a dynamically linked ELF")
	require.Greater(t, len(host), 2, "/usr/bin/true: no interpreter or no library: %v", host)
	dir := t.TempDir()
	const libDir = "/usr/lib/tracebench-test"
	want := []string{"/usr/bin/true"}
	for _, f := range host[1:] {
		want = append(want, path.Join(libDir, path.Base(f)))
	}
	for i, f := range host {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, path.Dir(want[i])), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, want[i]), b, 0o755))
	}
	e, err := elf.Open("/usr/bin/true")
	require.NoError(t, err)
	defer e.Close()
	links := map[string]string{"bin": "->usr/bin", "etc/ld.so.conf.d/test.conf": "# a comment\n" + libDir + "\n"}
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			require.NoError(t, err)
			interp := strings.TrimRight(string(b), "\x00")
			links[strings.TrimPrefix(interp, "/")] = "->" + path.Join(libDir, path.Base(interp))
		}
	}
	tree(t, dir, links)
	return &Root{Dir: dir}, want
}

func TestLoads(t *testing.T) {
	r, want := fakeRoot(t)
	prog, ok := r.program("true")
	require.True(t, ok, "true on the root's PATH")
	got, err := r.loads(prog)
	require.NoError(t, err)
	assert.Equal(t, want[0], got[0], "the program first")
	assert.ElementsMatch(t, want, got)

	_, ok = r.program("-oL")
	assert.False(t, ok, "an option is no program")
	_, ok = r.program("vfs_read")
	assert.False(t, ok, "a word not on the PATH is no program")

	missing := want[len(want)-1]
	require.NoError(t, os.Remove(filepath.Join(r.Dir, missing)))
	_, err = r.loads(prog)
	assert.ErrorContains(t, err, path.Base(missing), "the library not found is named")
}

// TestPreloadOffNinePee: on a filesystem that is not 9p nothing is copied.
func TestPreloadOffNinePee(t *testing.T) {
	r, _ := fakeRoot(t)
	dir, err := r.preload([]string{"true"}, nil)
	require.NoError(t, err)
	assert.Empty(t, dir, "the test's root is on %s, not 9p", os.TempDir())
}

func TestFilesystem(t *testing.T) {
	for dir, want := range map[string]string{"/proc/self/fd": "proc", "/sys/kernel": "sysfs"} {
		got, err := filesystem(dir)
		if assert.NoError(t, err, dir) {
			assert.Equal(t, want, got, dir)
		}
	}
	assert.Equal(t, "/a b\\x", unescapeMount(`/a\040b\x`))
	_, err := filesystem("/no/such/dir")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
