package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
)

const checkKernel = "7.2.13+deb14-amd64"

// guestOutput is a `make test` guest output whose outcome line has
// fsession and fentry-fexit in zero-threshold and bad-config: fentry-fexit
// passes, fsession as given.
func guestOutput(fsession string, reasons map[string]string) string {
	o := matrix.Outcomes{
		Kernel: checkKernel, Accel: "tcg",
		Mechanisms: []string{"fsession", "fentry-fexit"}, Scenarios: []string{"zero-threshold", "bad-config"},
		Status: map[string]map[string]string{
			"fsession":     {"zero-threshold": fsession, "bad-config": matrix.Pass},
			"fentry-fexit": {"zero-threshold": matrix.Pass, "bad-config": matrix.Pass},
		},
		Reasons: reasons,
	}
	raw, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return "=== RUN   TestScenarios\nguest: tracebench CLI tests exit 0, scenarios exit 0\n" +
		matrix.OutcomesPrefix + string(raw) + "\n"
}

// checkRun runs `matrix -check` on output against the sid:7 row with its
// fsession column, and returns the exit code and what it printed.
func checkRun(t *testing.T, output, fsessionColumn, markerABI string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	tsv := filepath.Join(dir, "kernels.tsv")
	require.NoError(t, os.WriteFile(tsv, []byte("kernel\tpackages\tfsession\tfentry-fexit\n"+
		"trixie:6.12\tfull\tno\tyes\nsid:7\tfull\t"+fsessionColumn+"\tyes\n"), 0o644))
	log := filepath.Join(dir, "guest.log")
	require.NoError(t, os.WriteFile(log, []byte(output), 0o644))
	kernelDir := filepath.Join(dir, "kernel")
	require.NoError(t, os.Mkdir(kernelDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kernelDir, "tracebench-kernel.env"),
		[]byte("ABI="+markerABI+"\nSUITE=sid\n"), 0o644))

	stderr := filepath.Join(dir, "stderr")
	f, err := os.Create(stderr)
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = f
	code, err := run(options{kernels: tsv, only: "sid:7", check: log, kernelDir: kernelDir})
	os.Stderr = saved
	require.NoError(t, f.Close())
	require.NoError(t, err)
	printed, err := os.ReadFile(stderr)
	require.NoError(t, err)
	return code, string(printed)
}

var unsupportedReason = map[string]string{
	"fsession": "fsession: not supported by this kernel: enum bpf_attach_type in kernel BTF has no BPF_TRACE_FSESSION",
}

// The input: fsession skipped on 7.2, whose column says it must
// run: make test must fail and say so.
func TestCheckFailsWhereAMechanismSkipsThatMustRun(t *testing.T) {
	code, printed := checkRun(t, guestOutput(matrix.Skip, unsupportedReason), "yes", checkKernel)
	assert.Equal(t, 1, code)
	assert.Contains(t, printed, "mismatch: sid:7 fsession: skipped as unsupported where it should run: "+
		unsupportedReason["fsession"])
	assert.Contains(t, printed, "NOT as expected, mismatches: 1")
}

func TestCheckFailsWhereAMechanismRunsThatMustSkip(t *testing.T) {
	code, printed := checkRun(t, guestOutput(matrix.Pass, nil), "no", checkKernel)
	assert.Equal(t, 1, code)
	assert.Contains(t, printed, "mismatch: sid:7 fsession: never skipped as unsupported where it should")
}

func TestCheckPassesWhenTheColumnMatches(t *testing.T) {
	for name, c := range map[string]struct{ output, column string }{
		"runs where it must":  {guestOutput(matrix.Pass, nil), "yes"},
		"skips where it must": {guestOutput(matrix.Skip, unsupportedReason), "no"},
	} {
		t.Run(name, func(t *testing.T) {
			code, printed := checkRun(t, c.output, c.column, checkKernel)
			assert.Equal(t, 0, code, "%s", printed)
			assert.Contains(t, printed, "against the sid:7 column of")
			assert.Contains(t, printed, ": as expected")
		})
	}
}

func TestCheckFailsWithoutOutcomesOrOnAnotherKernel(t *testing.T) {
	code, printed := checkRun(t, "vm: error: the guest did not boot to the command\n", "yes", checkKernel)
	assert.Equal(t, 1, code)
	assert.Contains(t, printed, `mismatch: sid:7: no outcome table in `)
	assert.Contains(t, printed, `no "tracebench-outcomes:" line in the output`)

	code, printed = checkRun(t, guestOutput(matrix.Pass, nil), "yes", "7.2.12+deb14-amd64")
	assert.Equal(t, 1, code)
	assert.Contains(t, printed,
		"mismatch: sid:7: the guest ran kernel "+checkKernel+", not the fetched 7.2.12+deb14-amd64")
}

func TestCheckNeedsOneKernel(t *testing.T) {
	for _, only := range []string{"", "sid:7,trixie:6.12"} {
		_, err := run(options{kernels: "../../matrix/kernels.tsv", only: only, check: "guest.log"})
		assert.ErrorContains(t, err, "-check needs -only with the one kernels.tsv selector")
	}
}
