package matrix

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOutcomesTakesTheLastLine(t *testing.T) {
	out := "=== RUN   TestScenarios\n" +
		OutcomesPrefix + `{"kernel":"old"}` + "\n" +
		"--- PASS: TestScenarios (1.00s)\n" +
		OutcomesPrefix + `{"kernel":"7.2.13+deb14-amd64","accel":"tcg","mechanisms":["fsession"],"scenarios":["errors"],` +
		`"status":{"fsession":{"errors":"SKIP"}},"reasons":{"errors":"no io_uring"},"skip_all":""}` + "\n" +
		"vm: guest command exited with status 0\n"
	o, err := ParseOutcomes(strings.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, &Outcomes{
		Kernel: "7.2.13+deb14-amd64", Accel: "tcg",
		Mechanisms: []string{"fsession"}, Scenarios: []string{"errors"},
		Status:  map[string]map[string]string{"fsession": {"errors": Skip}},
		Reasons: map[string]string{"errors": "no io_uring"},
	}, o)
}

func TestParseOutcomesRefuses(t *testing.T) {
	_, err := ParseOutcomes(strings.NewReader("PASS\nok\n"))
	assert.EqualError(t, err, `no "tracebench-outcomes:" line in the output`)
	_, err = ParseOutcomes(strings.NewReader(OutcomesPrefix + `{"kernel": 7`))
	assert.ErrorContains(t, err, "outcome line: ")
	_, err = ParseOutcomes(strings.NewReader(OutcomesPrefix + `{"kernel": "7.2", "statuses": {}}` + "\n"))
	assert.EqualError(t, err, `outcome line: json: unknown field "statuses"`)
	_, err = ParseOutcomes(strings.NewReader(OutcomesPrefix + `{"kernel": "7.2"}garbage {"x":1}` + "\n"))
	assert.EqualError(t, err, "outcome line: data after its JSON object at byte 17")
	// A line longer than any buffer before the outcome line, CRLF endings.
	long := strings.Repeat("x", 17<<20) + "\r\n" + OutcomesPrefix + `{"kernel": "7.2"}` + "\r\n"
	o, err := ParseOutcomes(strings.NewReader(long))
	require.NoError(t, err)
	assert.Equal(t, "7.2", o.Kernel)
	// Indented, it is some test's log output quoting the line, not the line.
	_, err = ParseOutcomes(strings.NewReader("    " + OutcomesPrefix + "{}\n"))
	assert.Error(t, err)
}

// host-6.18.txt is the tail of a real run of the scenario binary on this
// project's host (kernel 6.18, where every mechanism is refused), so the
// decoder is held to what scenarios/outcomes_test.go really prints.
func TestParseOutcomesOfARealRun(t *testing.T) {
	f, err := os.Open("testdata/host-6.18.txt")
	require.NoError(t, err)
	defer f.Close()
	o, err := ParseOutcomes(f)
	require.NoError(t, err)
	assert.Equal(t, "6.18.44-fc-v595", o.Kernel)
	assert.Contains(t, o.Mechanisms, "fsession")
	assert.Contains(t, o.Scenarios, "bad-config")
	assert.Equal(t, Pass, o.cell("fsession", "bad-config"))
	assert.Equal(t, Skip, o.cell("fsession", "zero-threshold"))
	assert.True(t, o.skippedAsUnsupported("fsession"))
	assert.False(t, o.ranTracer("fsession"), "bad-config starts no tracer")
	assert.Contains(t, o.skipReason("fsession", "zero-threshold"), "enum bpf_attach_type in kernel BTF has no BPF_TRACE_FSESSION")
}
