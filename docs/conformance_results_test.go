package docs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
	"tracebench/peers"
)

// writeFile writes data to name below dir, creating its directories.
func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestPeerCell(t *testing.T) {
	run := peers.Report{Rows: []peers.RowReport{{
		Name:  "kretprobe-maxactive",
		Calls: 12,
		Peers: []peers.PeerCell{
			{Peer: "funclatency-kprobe", Cell: peers.Cell{Class: peers.SilentLoss, Calls: 12, Counted: 10, Lost: 2, Silent: 2}},
			{Peer: "mech-a", Own: true, Cell: peers.Cell{Class: peers.Exact, Calls: 12, Counted: 12}},
		},
	}}}
	raw, err := json.Marshal(run)
	require.NoError(t, err)
	dir := t.TempDir()
	writeFile(t, dir, "peers/conformance.json", raw)
	src := &source{root: dir}

	tool, err := src.peerCell("peers/conformance.json", "kretprobe-maxactive", "funclatency-kprobe")
	require.NoError(t, err)
	assert.Equal(t, "silent loss: 2 of 12", tool.Cell.String())
	own, err := src.peerCell("peers/conformance.json", "kretprobe-maxactive", "tracebench mech-a")
	require.NoError(t, err)
	assert.True(t, own.Own)
	assert.Equal(t, uint64(12), own.Cell.Counted)

	_, err = src.peerCell("peers/conformance.json", "kretprobe-maxactive", "mech-a")
	assert.ErrorContains(t, err, `no cell of "mech-a"`, "a tool's name does not find tracebench's column")
	_, err = src.peerRow("peers/conformance.json", "no-such-row")
	assert.ErrorContains(t, err, `no row "no-such-row"`)
}

func TestReason(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, matrix.WriteShard(&b, matrix.Run{
		Kernel:   matrix.Kernel{Selector: "sid:7:powerpc64le"},
		Outcomes: &matrix.Outcomes{Reasons: map[string]string{"mech-b": "cookie 0"}},
	}))
	dir := t.TempDir()
	writeFile(t, dir, "shard.json", b.Bytes())
	src := &source{root: dir}

	why, err := src.reason("shard.json", "mech-b")
	require.NoError(t, err)
	assert.Equal(t, "cookie 0", why)
	_, err = src.reason("shard.json", "mech-a")
	assert.ErrorContains(t, err, `no skip reason for "mech-a"`)
}
