package main

// Guest test that the CLI keeps up with a fast reader: every call of a
// process doing one-byte reads of /dev/zero is an event (threshold 0), and
// the default ring buffer must drop none of them, whatever the output.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/tracers"
)

// zeroReadsEnv makes this test binary a helper that waits for one byte on
// stdin, then does that many one-byte reads of /dev/zero and exits.
const zeroReadsEnv = "TRACEBENCH_TEST_ZERO_READS"

// zeroReads is the helper's count: the load of issue 11.
const zeroReads = 20000

// readZero is the helper's main (TestMain runs it).
func readZero(count string) error {
	n, err := strconv.Atoi(count)
	if err != nil {
		return err
	}
	zero, err := os.Open("/dev/zero")
	if err != nil {
		return err
	}
	defer zero.Close()
	buf := make([]byte, 1)
	if _, err := io.ReadFull(os.Stdin, buf); err != nil {
		return fmt.Errorf("wait for the go-ahead: %w", err)
	}
	for range n {
		if _, err := zero.Read(buf); err != nil {
			return err
		}
	}
	return nil
}

// TestTraceKeepsUp traces the zero-reads helper at threshold 0 with every
// BPF mechanism, in text and JSON, to a pipe and to a file: the CLI's
// default ring buffer drops nothing (README "Keeping up").
func TestTraceKeepsUp(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			if can := requireTraceable(t, m); can.unknown != 0 {
				t.Skipf("%s does not count drops (%s unknown): no BPF ring buffer", m.Name, can.unknown)
			}
			for _, output := range []string{"text", "json"} {
				for _, to := range []string{"pipe", "file"} {
					t.Run(output+"/"+to, func(t *testing.T) { checkKeepsUp(t, m.Name, output, to) })
				}
			}
		})
	}
}

func checkKeepsUp(t *testing.T, mechanism, output, to string) {
	self, err := os.Executable()
	require.NoError(t, err)
	helper := exec.Command(self)
	helper.Env = append(os.Environ(), zeroReadsEnv+"="+fmt.Sprint(zeroReads))
	goAhead, err := helper.StdinPipe()
	require.NoError(t, err)
	helper.Stderr = os.Stderr
	require.NoError(t, helper.Start())
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })

	stdout, lines := outputTo(t, to)
	c := startCLITo(t, stdout, "trace", "--mechanism", mechanism, "--threshold-us", "0", "--output", output,
		"--duration", "600", "--pid", fmt.Sprint(helper.Process.Pid))
	stdout.Close() // the CLI has its own copy
	_, err = goAhead.Write([]byte{1})
	require.NoError(t, err)
	require.NoError(t, helper.Wait(), "zero-reads helper")
	assert.Empty(t, c.stop(t), "stdout went to the %s", to)

	out := lines()
	require.NotEmpty(t, out)
	s := parseSummary(t, output, out[len(out)-1])
	t.Logf("%s %s to a %s: %s", mechanism, output, to, out[len(out)-1])
	require.NotNil(t, s.slow)
	require.NotNil(t, s.dropped)
	assert.Zero(t, *s.dropped, "events dropped of %d", *s.slow)
	assert.Equal(t, *s.slow, s.events+*s.dropped, "slow == events + dropped")
	assert.Equal(t, uint64(len(out)-1), s.events, "event lines == events in the summary")
	// The go-ahead read was in flight when tracing started: not counted.
	assert.GreaterOrEqual(t, *s.slow+skippedProbes(c.seen), uint64(zeroReads), "slow (every call) + skipped >= reads")
}

// outputTo returns where the CLI writes (a file, or a pipe into `cat`
// writing a file, as a shell pipeline would) and a function returning the
// lines written once the CLI exited.
func outputTo(t *testing.T, to string) (*os.File, func() []string) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	require.NoError(t, err)
	lines := func() []string {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	}
	if to == "file" {
		return f, lines
	}
	defer f.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cat := exec.Command("cat")
	cat.Stdin, cat.Stdout = r, f
	require.NoError(t, cat.Start())
	return w, func() []string {
		require.NoError(t, cat.Wait(), "cat")
		return lines()
	}
}

// parseSummary parses the last line of text or JSON output.
func parseSummary(t *testing.T, output, line string) summaryLine {
	t.Helper()
	if output == "json" {
		var s jsonSummary
		require.NoError(t, json.Unmarshal([]byte(line), &s), "summary %q", line)
		return jsonSummaryLine(s)
	}
	return textSummaryLine(t, line)
}
