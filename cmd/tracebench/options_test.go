package main

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
)

func TestParseTraceDefaults(t *testing.T) {
	o, err := parseTrace(nil)
	require.NoError(t, err)
	assert.Equal(t, traceOptions{threshold: time.Millisecond, duration: 10 * time.Second, mechanism: "auto",
		ringBytes: 4 << 20}, o)
	assert.NoError(t, o.config().Validate())
}

func TestParseTraceAll(t *testing.T) {
	name := tracers.Mechanisms()[2].Name // any registered one
	o, err := parseTrace([]string{"--threshold-us", "10000", "--duration=86400", "--pid", "42",
		"--mechanism", name, "--histogram", "--per-pid", "--output", "json", "--verbose", "--ring-kib", "4"})
	require.NoError(t, err)
	assert.Equal(t, traceOptions{
		threshold: 10 * time.Millisecond, duration: 24 * time.Hour, pid: 42, mechanism: name,
		histogram: true, perPID: true, json: true, verbose: true, ringBytes: 4096,
	}, o)
	assert.Equal(t, 4096, o.config().RingBufferBytes)
	assert.Equal(t, uint32(42), o.config().TGID)
	assert.True(t, o.config().Histogram && o.config().PerTGID)
}

func TestParseTraceEdges(t *testing.T) {
	o, err := parseTrace([]string{"--threshold-us", "0", "--duration", "1", "--output", "text"})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), o.threshold)
	assert.Equal(t, time.Second, o.duration)
	assert.False(t, o.json)

	o, err = parseTrace([]string{"--threshold-us", "3600000000"})
	require.NoError(t, err)
	assert.Equal(t, time.Hour, o.threshold, "the largest threshold the tracers accept")
}

func TestParseTraceRejects(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--threshold-us", "-5"}, `invalid value "-5" for flag -threshold-us: want an integer from 0 to 3600000000 (microseconds)`},
		{[]string{"--threshold-us", "3600000001"}, `invalid value "3600000001" for flag -threshold-us`},
		{[]string{"--threshold-us", "1.5"}, `invalid value "1.5" for flag -threshold-us`},
		{[]string{"--ring-kib", "3000"}, `invalid value "3000" for flag -ring-kib: want a power of two from 4 to 1048576 (KiB)`},
		{[]string{"--ring-kib", "2"}, `invalid value "2" for flag -ring-kib: want a power of two from 4 to 1048576 (KiB)`},
		{[]string{"--ring-kib", "0"}, `invalid value "0" for flag -ring-kib: want a power of two from 4 to 1048576 (KiB)`},
		{[]string{"--ring-kib", "x"}, `invalid value "x" for flag -ring-kib: want a power of two from 4 to 1048576 (KiB)`},
		{[]string{"--ring-kib", "2097152"}, `invalid value "2097152" for flag -ring-kib`},
		{[]string{"--duration", "0"}, `invalid value "0" for flag -duration: want an integer from 1 to 86400 (seconds)`},
		{[]string{"--duration", "86401"}, `invalid value "86401" for flag -duration`},
		{[]string{"--duration", "10s"}, `invalid value "10s" for flag -duration`},
		{[]string{"--pid", "abc"}, `invalid value "abc" for flag -pid: want an integer from 1 to 4194303 (a process ID)`},
		{[]string{"--pid", "4194304"}, `invalid value "4194304" for flag -pid`},
		{[]string{"--pid", "0"}, `invalid value "0" for flag -pid`},
		{[]string{"--pid", "-1"}, `invalid value "-1" for flag -pid`},
		{[]string{"--mechanism", "nope"}, `invalid value "nope" for flag -mechanism: unknown mechanism "nope" (known: fsession, `},
		{[]string{"--output", "yaml"}, `invalid value "yaml" for flag -output: want text or json`},
		{[]string{"--threshold-us"}, `flag needs an argument: -threshold-us`},
		{[]string{"--frobnicate"}, `flag provided but not defined: -frobnicate`},
		{[]string{"--pid", "1", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		_, err := parseTrace(tt.args)
		assert.ErrorContains(t, err, tt.want, "args %q", tt.args)
	}
}

func TestParseTraceHelp(t *testing.T) {
	for _, h := range []string{"-h", "--help"} {
		_, err := parseTrace([]string{h})
		assert.ErrorIs(t, err, flag.ErrHelp)
	}
}

// --mechanism auto tries the declared tools, which count what trace's
// --histogram and --per-pid print; the help names them.
func TestAutoTriesTheTools(t *testing.T) {
	auto, err := mechanisms("auto", functionsSpec{})
	require.NoError(t, err)
	assert.Equal(t, names(tracers.MechanismsFor(tracers.RoleTool)), names(auto))
	for _, m := range auto {
		assert.True(t, m.Can.Aggregates(), "%s: aggregates", m.Name)
	}
	assert.Contains(t, traceUsage, "\n                        "+strings.Join(names(auto), ", ")+"\n")
}
