package docs

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/scenarios"
	"tracebench/tracers"
	"tracebench/workload"
)

// The table has a line per row the code declares, each with its workload
// and configuration.
func TestScenarioTable(t *testing.T) {
	lines := strings.Split(scenarioTable(), "\n")
	rows := scenarios.Rows()
	require.Len(t, lines, 2+len(rows))
	for i, r := range rows {
		assert.True(t, strings.HasPrefix(lines[2+i], "| "+r.Name+" | "), lines[2+i])
		assert.Equal(t, 5, strings.Count(lines[2+i], " | ")+2, "cells of %s: %s", r.Name, lines[2+i])
	}
}

func TestStepAndConfigText(t *testing.T) {
	for want, step := range map[string]workload.Step{
		"1000 file-read of 64 B on 4 threads":                      workload.FileReads(1000, 64).OnThreads(4),
		"1 delayed-pipe-read of 1 B, answered 50ms after blocking": workload.DelayedPipeReads(1, 50*time.Millisecond),
		"4 pread64 of 12 KiB":                                      workload.FileReadsBy(workload.PreadRead, 4, 3*4096),
		"2 file-read of 4 KiB on 3 threads created before attach, 1ms apart": workload.FileReads(2, 4096).
			OnEarlyThreads(3).WithGap(time.Millisecond),
	} {
		assert.Equal(t, want, stepText(step))
	}
	assert.Equal(t, "the helper's TGID, threshold 0, ring buffer 16 MiB",
		configText(tracers.Config{TGID: helperMark, RingBufferBytes: 16 << 20}))
	assert.Equal(t, "no TGID filter", configText(tracers.Config{}))
	assert.Equal(t, "the helper's TGID, threshold 10ms, maxactive 1, per-thread map of 4 entries",
		configText(tracers.Config{TGID: helperMark, Threshold: 10 * time.Millisecond, KretprobeMaxActive: 1,
			ThreadMapEntries: 4}))
}

// missed lists the cells of a committed run with runs missed, and says
// which mechanisms observe none.
func TestMissed(t *testing.T) {
	src := &source{root: root}
	table, err := src.missed("results/matrix/sid_7.json")
	require.NoError(t, err)
	for _, m := range mechanisms() {
		assert.Regexp(t, `(?m)^\| `+regexp.QuoteMeta(m.Name)+` \| (none|no count \(not observed, or not run\)|([a-z-]+ [0-9]+(, )?)+) \|$`, table,
			"a row per mechanism: its cells with runs missed, none, or no count")
	}
	assert.Regexp(t, `(?m)^\| \S+ \| [a-z-]+ [1-9][0-9]*`, table, "the committed run missed runs somewhere")
	_, err = src.missed("results/matrix.md")
	assert.Error(t, err)
}
