package peers

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateConformance = flag.Bool("peers.conformance.update", false,
	"rewrite each committed CONFORMANCE.md from the conformance.json beside it")

// TestCommittedConformance renders every committed conformance.json
// (results/<kernel>/peers/) and checks that the CONFORMANCE.md beside it
// is exactly that: a format change regenerates the tables with
// -peers.conformance.update, without a guest run.
func TestCommittedConformance(t *testing.T) {
	files, err := filepath.Glob("../results/*/peers/conformance.json")
	require.NoError(t, err)
	require.NotEmpty(t, files, "no results/<kernel>/peers/conformance.json: make peers-conformance writes one")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		var r Report
		require.NoError(t, json.Unmarshal(raw, &r), file)
		require.NotEmpty(t, r.Rows, file)
		md := filepath.Join(filepath.Dir(file), "CONFORMANCE.md")
		if *updateConformance {
			require.NoError(t, os.WriteFile(md, []byte(r.Markdown()), 0o644))
			continue
		}
		committed, err := os.ReadFile(md)
		require.NoError(t, err)
		assert.Equal(t, r.Markdown(), string(committed),
			"%s is not what %s renders to: go test ./peers -run TestCommittedConformance -peers.conformance.update", md, file)
		assert.Empty(t, r.Unmeasured(), "%s has cells not measured", file)
	}
}
