package matrix

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.md")

// testReport has a run as expected, one that did not boot and one where
// fsession ran although the table says it must skip.
func testReport() Report {
	newer := Kernel{Selector: "new:2", Packages: BinaryOnly, Supports: map[string]bool{"fsession": false, "fentry-fexit": true}}
	exp := Expectations{Mechanisms: testExpect.Mechanisms, Kernels: []Kernel{testExpect.Kernels[0], {Selector: "gone:9", Packages: Full}, newer}}
	ran := asExpected()
	ran.Kernel, ran.ABI, ran.Outcomes.Kernel = newer, "2.0-amd64", "2.0-amd64"
	ran.Outcomes.Status["fsession"]["zero-threshold"] = Pass
	delete(ran.Outcomes.Reasons, "fsession")
	ran.Outcomes.Reasons["coverage-io_uring"] = "io_uring | off" // a '|' must not split the cell
	ran.Outcomes.Missed = map[string]map[string]uint64{"fsession": {"bad-config": 0, "zero-threshold": 12}}
	ran.Duration, ran.Host = 95*time.Second, HostLoad{OtherGuestsMax: 1, LoadMean: 2.25, Samples: 9}
	expected := asExpected()
	expected.Duration = 61 * time.Second
	subset := Origin{Started: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC), Commit: "0123456789ab", Host: "a 2-CPU host"}
	ran.Origin, expected.Origin = subset, testOrigin
	return Report{
		Expect: exp,
		Runs: []Run{
			expected,
			{Kernel: exp.Kernels[1], Problem: "fetch failed: exit status 1: vm: error: no complete amd64 kernel", Exit: 0, Origin: subset},
			ran,
		},
	}
}

// testOrigin: a whole-matrix run before testReport's subset run.
var testOrigin = Origin{Started: time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC), Commit: "ba9876543210-dirty",
	Host: "a 4-CPU host", QuietWait: 20 * time.Second, OthersAtStart: 1}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, testReport().WriteMarkdown(&b))
	if *update {
		require.NoError(t, os.WriteFile("testdata/report.golden.md", b.Bytes(), 0o644))
	}
	golden, err := os.ReadFile("testdata/report.golden.md")
	require.NoError(t, err)
	assert.Equal(t, string(golden), b.String(), "go test ./matrix -update rewrites the golden file; review its diff")
}

// The golden file could be rewritten wrongly; these hold whatever it says.
func TestWriteMarkdownMarksMismatches(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, testReport().WriteMarkdown(&b))
	md := b.String()
	assert.Contains(t, md, "**Verdict: 3 mismatches**")
	assert.Contains(t, md, "| `fsession` | zero-threshold | skip [1] | — | ✗ pass |")
	assert.Contains(t, md, "| `fsession` | skips ✓ | — | ✗ runs |")
	// misses: none recorded by the first run's file, fentry-fexit does not observe them in the last
	assert.Contains(t, md, "| `fsession` | — | — | 12 (zero-threshold 12) |")
	assert.Contains(t, md, "| `fentry-fexit` | — | — | n/a |")
	assert.Contains(t, md, "| result | as expected | ✗ fetch failed: exit status 1: vm: error: no complete amd64 kernel | ✗ 2 mismatches |")
	for i, table := range tables(md) {
		for _, row := range table {
			assert.Equal(t, cells(table[0]), cells(row), "table %d: row %q has another number of cells than its header", i, row)
		}
	}
}

// A crashed mechanism's cells say so and point to a note with the crash;
// the other mechanisms' cells of that kernel are rendered as usual.
// A row's misses count whatever scenarios they name, and a total too large
// for uint64 saturates instead of wrapping.
func TestMissedLabel(t *testing.T) {
	o := asExpected().Outcomes
	o.Missed = map[string]map[string]uint64{"fentry-fexit": {"zero-threshold": math.MaxUint64, "renamed-row": 5}}
	assert.Equal(t, fmt.Sprintf("%d (zero-threshold %d)", uint64(math.MaxUint64), uint64(math.MaxUint64)), missedLabel(o, "fentry-fexit"))
	o.Missed["fentry-fexit"] = map[string]uint64{"renamed-row": 5}
	assert.Equal(t, "5 (renamed-row 5)", missedLabel(o, "fentry-fexit"))
	o.Missed = map[string]map[string]uint64{}
	assert.Equal(t, "n/a", missedLabel(o, "fentry-fexit"), "recorded, but the mechanism does not observe misses")
	o.Missed = nil
	assert.Equal(t, "—", missedLabel(o, "fentry-fexit"), "an outcome file from before misses were recorded")
}

func TestWriteMarkdownShowsCrashes(t *testing.T) {
	crashed := asExpected()
	crashed.Crashes, crashed.Duration = []Crash{testCrash}, 3*time.Minute
	crashed.Outcomes.Status["fentry-fexit"]["zero-threshold"] = Skip
	crashed.Outcomes.Reasons["fentry-fexit"] = "fentry-fexit disabled by TRACEBENCH_DISABLE: crashed this kernel"
	var b bytes.Buffer
	require.NoError(t, Report{Expect: testExpect, Runs: []Run{crashed}}.WriteMarkdown(&b))
	md := b.String()
	for _, want := range []string{
		"| guest run | TCG, 3m0s, exit 0 (2 boots, 1 crash) |",
		"| result | ✗ 1 mismatch |",
		"| `fentry-fexit` | ✗ crashed the kernel |",
		"| `fsession` | skips ✓ |",
		"| `fsession` | zero-threshold | skip [1] |",
		"| `fentry-fexit` | bad-config | ✗ crash [3] |",
		"| `fentry-fexit` | zero-threshold | ✗ crash [3] |",
		"3. fentry-fexit crashed the kernel during TestScenarios/fentry-fexit/drops: Oops: int3: 0000 [#1] SMP NOPTI; " +
			"Kernel panic - not syncing: Fatal exception in interrupt. Its scenarios were not run again on this kernel, which was booted again without it.",
		"- old:1 fentry-fexit: crashed the kernel during TestScenarios/fentry-fexit/drops: ",
	} {
		assert.Contains(t, md, want)
	}
}

// tables splits Markdown into its tables' rows.
func tables(md string) [][]string {
	var out [][]string
	var cur []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") {
			cur = append(cur, line)
			continue
		}
		if cur != nil {
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

// cells counts a row's cells: its unescaped '|' less one.
func cells(row string) int {
	return strings.Count(strings.ReplaceAll(row, `\|`, ""), "|") - 1
}
