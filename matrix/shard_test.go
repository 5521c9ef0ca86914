package matrix

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An outcome file keeps everything of a run but the expectations, which
// the merge takes from kernels.tsv.
func TestShardRoundTrip(t *testing.T) {
	r := asExpected()
	r.Origin, r.Duration, r.Crashes = testOrigin, 90*time.Second, []Crash{testCrash}
	var b bytes.Buffer
	require.NoError(t, WriteShard(&b, r))
	back, err := ReadShard(&b)
	require.NoError(t, err)
	assert.Equal(t, Kernel{Selector: "old:1"}, back.Kernel)
	back.Kernel = r.Kernel
	assert.True(t, back.Origin.Started.Equal(r.Origin.Started))
	back.Origin.Started = r.Origin.Started
	assert.Equal(t, r, back)

	_, err = ReadShard(strings.NewReader(`{"selector":"old:1","run":{"Bogus":1}}`))
	assert.ErrorContains(t, err, `unknown field "Bogus"`)
	_, err = ReadShard(strings.NewReader(`{"run":{}}`))
	assert.ErrorContains(t, err, "no selector")
}

func TestShardName(t *testing.T) {
	assert.Equal(t, "sid_7_rt-amd64.json", ShardName("sid:7:rt-amd64"))
	assert.Equal(t, "trixie-backports_7.0.json", ShardName("trixie-backports:7.0"))
}

// Shards from several jobs merge into one report in kernels.tsv's order;
// a kernel whose job left no file is a column that says so, and a
// mismatch.
func TestMergeReportsMissingShards(t *testing.T) {
	second := Kernel{Selector: "new:2", Packages: Full, Supports: testExpect.Kernels[0].Supports}
	exp := Expectations{Mechanisms: testExpect.Mechanisms, Kernels: []Kernel{testExpect.Kernels[0], second}}
	r := asExpected()
	r.Kernel, r.Origin = Kernel{Selector: "old:1"}, testOrigin
	gone := Run{Kernel: Kernel{Selector: "gone:9"}, Origin: testOrigin}

	rep, err := Merge(exp, []Run{gone, r}, []string{"a/gone_9.json", "b/old_1.json"})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 2)
	assert.Equal(t, testExpect.Kernels[0], rep.Runs[0].Kernel, "expectations come from kernels.tsv")
	assert.Equal(t, second, rep.Runs[1].Kernel)
	assert.Equal(t, "missing: no outcome file (new_2.json) was merged", rep.Runs[1].Problem)
	assert.Equal(t, []string{"a/gone_9.json (gone:9)"}, rep.Ignored)
	mismatches := rep.Mismatches()
	require.Len(t, mismatches, 1)
	assert.Equal(t, "new:2: missing: no outcome file (new_2.json) was merged", mismatches[0].String())

	var b bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&b))
	for _, want := range []string{
		"Merged from the outcome files of 1 run:",
		"Columns: 1.0.",
		"- ignored, its kernel is not in `kernels.tsv`: a/gone_9.json (gone:9)",
		"| result | as expected | ✗ missing: no outcome file (new_2.json) was merged |",
		"| run | started 2026-11-28 09:30 UTC, commit ba9876543210-dirty | — |",
	} {
		assert.Contains(t, b.String(), want)
	}
}

func TestMergeRefusesTwoShardsOfOneKernel(t *testing.T) {
	r := asExpected()
	_, err := Merge(testExpect, []Run{r, r}, []string{"job1/old_1.json", "job2/old_1.json"})
	assert.EqualError(t, err, "kernel old:1 has 2 outcome files: job1/old_1.json, job2/old_1.json")
}
