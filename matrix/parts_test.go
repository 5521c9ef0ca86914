package matrix

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var partMechanisms = []string{"a", "b", "c", "d"}

// Every unit is in exactly one part, the longest first to the part
// expected to end first.
func TestSplitBalancesByTheLastRun(t *testing.T) {
	weights := Durations{UnitCLI: 170, UnitOther: 60, UnitOf("a"): 68, UnitOf("b"): 66, UnitOf("c"): 10, UnitOf("d"): 8}
	parts, err := Split(Plan{Mechanisms: partMechanisms, CLI: true, Other: true}, 2, weights)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, Part{CLI: true, Mechanisms: []string{"c", "d"}, Seconds: 188, cliRest: true}, parts[0])
	assert.Equal(t, Part{Other: true, Mechanisms: []string{"a", "b"}, Seconds: 194}, parts[1])
	assert.Equal(t, "scenarios-other, TestScenarios/{a,b}", parts[1].String())
}

func TestSplitCoversEveryUnitOnce(t *testing.T) {
	for guests := 1; guests <= 8; guests++ {
		withCLI := guests%2 == 0
		parts, err := Split(Plan{Mechanisms: partMechanisms, CLI: withCLI, Other: true}, guests, nil)
		require.NoError(t, err)
		units := len(partMechanisms) + 1 + boolInt(withCLI)
		assert.Len(t, parts, min(guests, units))
		var mechanisms []string
		cli, other := 0, 0
		for _, p := range parts {
			assert.True(t, p.CLI || p.Other || len(p.Mechanisms) > 0, "no part is empty: %+v", parts)
			mechanisms = append(mechanisms, p.Mechanisms...)
			cli, other = cli+boolInt(p.CLI), other+boolInt(p.Other)
		}
		slices.Sort(mechanisms)
		assert.Equal(t, partMechanisms, mechanisms, "guests %d", guests)
		assert.Equal(t, boolInt(withCLI), cli)
		assert.Equal(t, 1, other)
	}
	_, err := Split(Plan{Mechanisms: partMechanisms, Other: true}, 0, nil)
	assert.EqualError(t, err, "guests 0: want at least 1")
	_, err = Split(Plan{}, 1, nil)
	assert.ErrorContains(t, err, "nothing to run")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A unit without a figure counts as the median of those with one.
func TestSplitWeighsTheUnmeasuredAsTheMedian(t *testing.T) {
	parts, err := Split(Plan{Mechanisms: []string{"new", "a", "b"}, Other: true}, 2, Durations{UnitOther: 1, UnitOf("a"): 10, UnitOf("b"): 12})
	require.NoError(t, err)
	assert.Equal(t, []Part{{Other: true, Mechanisms: []string{"b"}, Seconds: 13}, {Mechanisms: []string{"new", "a"}, Seconds: 20}}, parts)
}

// A plan of some mechanisms alone (make check MECHANISMS=...) has no
// other unit; its parts select those mechanisms from the registry's.
func TestSplitMechanismsAlone(t *testing.T) {
	parts, err := Split(Plan{Mechanisms: []string{"b", "d"}}, 2, Durations{UnitCLI: 170, UnitOther: 60})
	require.NoError(t, err)
	assert.Equal(t, []Part{{Mechanisms: []string{"b"}, Seconds: 170}, {Mechanisms: []string{"d"}, Seconds: 170}}, parts)
	args, run := parts[0].ScenarioArgs(partMechanisms)
	assert.True(t, run)
	assert.Equal(t, []string{"-test.run=^TestScenarios$", "-tracebench.mechanisms=b"}, args)
}

// With a figure per CLI test, the CLI's tests are units of their own:
// each part runs those it was given, the one with UnitCLI every test the
// others do not name, a test new since the figures too.
func TestSplitDividesTheCLI(t *testing.T) {
	weights := Durations{UnitCLI: 172, CLIUnitOf("TestKeepsUp"): 71, CLIUnitOf("TestCleanup"): 38,
		CLIUnitOf("TestFunctions"): 33, CLIUnitOf("TestText"): 20, UnitOther: 50, UnitOf("a"): 80, UnitOf("b"): 74}
	parts, err := Split(Plan{Mechanisms: []string{"a", "b"}, CLI: true, Other: true}, 2, weights)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, "cli -test.run=^(TestCleanup|TestText)$, scenarios-other, TestScenarios/{a}", parts[0].String())
	assert.Equal(t, "cli -test.skip=^(TestCleanup|TestText)$, TestScenarios/{b}", parts[1].String())
	assert.Equal(t, 188.0, parts[0].Seconds)
	assert.Equal(t, 10.0, parts[1].Seconds-74-71-33, "UnitCLI weighs what its tests' figures leave")

	one, err := Split(Plan{CLI: true}, 1, weights)
	require.NoError(t, err)
	assert.Empty(t, one[0].CLIArgs, "one part runs the whole CLI binary")
}

func TestScenarioArgs(t *testing.T) {
	for _, tt := range []struct {
		part Part
		args []string
		run  bool
	}{
		{Part{CLI: true}, nil, false},
		{Part{Other: true}, []string{"-test.skip=^TestScenarios$"}, true},
		{Part{Other: true, Mechanisms: partMechanisms}, nil, true},
		{Part{Other: true, Mechanisms: []string{"a", "c"}}, []string{"-tracebench.mechanisms=a,c"}, true},
		{Part{Mechanisms: []string{"b"}}, []string{"-test.run=^TestScenarios$", "-tracebench.mechanisms=b"}, true},
		{Part{Mechanisms: partMechanisms}, []string{"-test.run=^TestScenarios$"}, true},
	} {
		args, run := tt.part.ScenarioArgs(partMechanisms)
		assert.Equal(t, tt.args, args, "%+v", tt.part)
		assert.Equal(t, tt.run, run, "%+v", tt.part)
	}
}

func TestMergeOutcomes(t *testing.T) {
	other := &Outcomes{Kernel: "7.2", Accel: "tcg", CPUs: 2, Mechanisms: []string{"a", "b"}, Scenarios: []string{"bad-config", "x"},
		Status:  map[string]map[string]string{"a": {"bad-config": Pass, "x": Pass}, "b": {"bad-config": Pass}},
		Reasons: map[string]string{}, Missed: map[string]map[string]uint64{"a": {"x": 3}}}
	table := &Outcomes{Kernel: "7.2", Accel: "tcg", CPUs: 2, Mechanisms: []string{"b"}, Scenarios: []string{"x"},
		Status: map[string]map[string]string{"b": {"x": Skip}}, Reasons: map[string]string{"b": "lacks it"},
		Retries: map[string]map[string]int{"b": {"x": 1}}}
	got, err := MergeOutcomes([]*Outcomes{table, nil, other}, []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, &Outcomes{Kernel: "7.2", Accel: "tcg", CPUs: 2, Mechanisms: []string{"a", "b"}, Scenarios: []string{"x", "bad-config"},
		Status:  map[string]map[string]string{"a": {"bad-config": Pass, "x": Pass}, "b": {"bad-config": Pass, "x": Skip}},
		Reasons: map[string]string{"b": "lacks it"}, Retries: map[string]map[string]int{"b": {"x": 1}},
		Missed: map[string]map[string]uint64{"a": {"x": 3}}}, got)

	_, err = MergeOutcomes([]*Outcomes{other, other}, nil)
	assert.ErrorContains(t, err, "ran in two parts")
	_, err = MergeOutcomes([]*Outcomes{other, {Kernel: "7.3"}}, nil)
	assert.EqualError(t, err, "parts ran kernels 7.2 and 7.3")
	_, err = MergeOutcomes([]*Outcomes{nil}, nil)
	assert.EqualError(t, err, "no part has an outcome table")
}

func TestWriteTable(t *testing.T) {
	o := &Outcomes{Kernel: "7.2.13", Accel: "tcg", CPUs: 2, Mechanisms: []string{"a", "bb"}, Scenarios: []string{"x", "long-name"},
		Status:  map[string]map[string]string{"a": {"x": Pass, "long-name": Pass}, "bb": {"x": Skip}},
		Reasons: map[string]string{"bb/x": "not observed", "a/x": "not observed", "bb/long-name": "other"},
		Retries: map[string]map[string]int{"a": {"long-name": 1}}}
	var buf bytes.Buffer
	require.NoError(t, o.WriteTable(&buf))
	assert.Equal(t, `
tracebench scenarios on Linux 7.2.13, 2 CPUs, guest under TCG
scenario   a        bb
x          PASS     SKIP
long-name  PASS(2)  -
(n): the cell's status is that of attempt n; the earlier ones were repeated because the kernel skipped program runs the row does not expect
SKIP a/x, bb/x: not observed
SKIP bb/long-name: other
`, buf.String())
	o.CPUs = 0 // an outcome file from before the count was recorded
	buf.Reset()
	require.NoError(t, o.WriteTable(&buf))
	assert.Contains(t, buf.String(), "on Linux 7.2.13, guest under TCG\n")
}
