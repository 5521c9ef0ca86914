package docs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		29 * time.Second:                "0 min",
		1142 * time.Second:              "19 min",
		59*time.Minute + 31*time.Second: "1 h 0 min",
		62*time.Minute + 9*time.Second:  "1 h 2 min",
	} {
		assert.Equal(t, want, inMinutes(d), "%v", d)
	}
}

func TestMinutes(t *testing.T) {
	root := t.TempDir()
	write := func(dir, meta string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "meta.txt"), []byte(meta), 0o644))
	}
	write("good", "rounds: 6\nduration-s: 247\n")
	write("bad", "duration-s: soon\n")
	write("none", "rounds: 6\n")
	s := &source{root: root}

	got, err := s.minutes("good")
	require.NoError(t, err)
	assert.Equal(t, "4 min", got)

	_, err = s.minutes("bad")
	assert.ErrorContains(t, err, `duration-s "soon" is no number of seconds`)
	_, err = s.minutes("none")
	assert.ErrorContains(t, err, "duration-s")
	_, err = s.minutes("absent")
	assert.Error(t, err)
}

// The committed matrix has a kernel that took longest, and their sum is
// at least that.
func TestKernelTimes(t *testing.T) {
	s := &source{root: root}
	k, err := s.kernelTimes()
	require.NoError(t, err)
	assert.NotEmpty(t, k.Slowest)
	for _, v := range []string{k.Shortest, k.Longest, k.Sum} {
		assert.Regexp(t, `^(\d+ h )?\d+ min$`, v)
	}
	assert.NotEqual(t, k.Shortest, k.Sum)
}

func TestAnchor(t *testing.T) {
	got, err := anchor("134.076")
	require.NoError(t, err)
	assert.Equal(t, "134.076 (7.5)", got)
	got, err = anchor("10.478")
	require.NoError(t, err)
	assert.Equal(t, "10.478 (95.4)", got)
	for _, bad := range []string{"fast", "0", "-3"} {
		_, err := anchor(bad)
		assert.ErrorContains(t, err, bad)
	}
}

func TestBenchReport(t *testing.T) {
	for name, want := range map[string]string{
		"confidence":     "95%",
		"ci":             "±3%",
		"rounds":         "6 rounds",
		"duration":       "10 min",
		"multi-duration": "30 min",
	} {
		got, err := benchReport(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
	_, err := benchReport("speed")
	assert.ErrorContains(t, err, `"speed"`)
}
