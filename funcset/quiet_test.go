package funcset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRecordedFunctionTrace(t *testing.T) {
	calls, err := parseFunctionTrace(openTestdata(t, "function_trace.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint64(7), calls["fpregs_assert_state_consistent"], "grep -c in the excerpt")
	var total uint64
	for _, n := range calls {
		total += n
	}
	assert.Equal(t, uint64(238), total, "one call a line after the 12 header lines")

	// print-parent off, a module's function, a comm holding blanks.
	calls, err = parseFunctionTrace(strings.NewReader("  my task-12  [001] d....  1.5: kfree\n" +
		"  x-1  [000] .....  2.0: pvclock_gtod_notify [kvm]\n  x-1  [000]  2.5: kfree <-y\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]uint64{"kfree": 2}, calls)

	for in, want := range map[string]string{
		"CPU:1 [LOST 4096 EVENTS]":            `function trace line 1: "CPU:1 [LOST 4096 EVENTS]" is not "comm-pid [cpu] flags timestamp: function"`,
		"  x-1  [000] .....  2.0: k free <-y": `function trace line 1: "k free" is not "function" or "function [module]"`,
		"  x-1  [000] .....  2.0 kfree":       `function trace line 1: "  x-1  [000] .....  2.0 kfree" is not "comm-pid [cpu] flags timestamp: function"`,
	} {
		_, err := parseFunctionTrace(strings.NewReader(in))
		assert.EqualError(t, err, want, in)
	}
}
