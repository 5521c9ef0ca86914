package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/matrix"
	"tracebench/tracers"
)

// fakeMatrix runs the command on testdata/vm's fake scripts with the
// given kernels.tsv rows (fsession, then fentry-fexit) and returns its
// exit code, the report and the fake boot script's recorded arguments.
func fakeMatrix(t *testing.T, rows ...string) (int, string, string) {
	t.Helper()
	return runFake(t, fakeOptions(t, rows...))
}

// fakeOptions writes kernels.tsv and the fake test binary into a
// temporary directory and returns options that use them.
func fakeOptions(t *testing.T, rows ...string) options {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("FAKE_CACHE", dir)
	t.Setenv(tracers.DisableEnv, "") // the host's entries would join the fake boots'
	tsv := filepath.Join(dir, "kernels.tsv")
	require.NoError(t, os.WriteFile(tsv, []byte("kernel\tpackages\tfsession\tfentry-fexit\n"+strings.Join(rows, "\n")+"\n"), 0o644))
	bin := filepath.Join(dir, "scenarios.test")
	require.NoError(t, os.WriteFile(bin, nil, 0o755))
	return options{
		kernels: tsv, bin: bin, out: filepath.Join(dir, "results", "matrix.md"), outcomes: filepath.Join(dir, "results", "matrix"),
		logs: filepath.Join(dir, "logs"), vmDir: "testdata/vm", timeout: 3 * time.Minute, guests: 1,
	}
}

func runFake(t *testing.T, opt options) (int, string, string) {
	t.Helper()
	code, err := run(opt)
	require.NoError(t, err)
	report, err := os.ReadFile(opt.out)
	require.NoError(t, err)
	args, _ := os.ReadFile(filepath.Join(os.Getenv("FAKE_CACHE"), "args"))
	return code, string(report), string(args)
}

// A subset run replaces its own columns and keeps the others, each saying
// which run it comes from. (A fresh clone's `make matrix
// MATRIX_KERNELS=trixie:6.12` once replaced the committed six-kernel
// report with a one-column one.)
func TestSubsetRunKeepsTheOtherColumns(t *testing.T) {
	six := []string{"ok:6.12\tfull\tyes\tyes", "ok:6.18\tfull\tyes\tyes", "ok:7.0\tbinary-only\tyes\tyes",
		"ok:7.2\tfull\tyes\tyes", "ok:7.3\tfull\tyes\tyes", "ok:7.3-rc\tfull\tyes\tyes"}
	opt := fakeOptions(t, six...)
	code, whole, _ := runFake(t, opt)
	require.Equal(t, 0, code)
	before := shardFiles(t, opt.outcomes)
	require.Len(t, before, 6)

	opt.only = "ok:6.12"
	code, subset, args := runFake(t, opt)
	assert.Equal(t, 0, code)
	assert.Equal(t, 7, strings.Count(args, "\n"), "the subset booted one kernel: %q", args)
	after := shardFiles(t, opt.outcomes)
	assert.NotEqual(t, before["ok_6.12.json"], after["ok_6.12.json"], "the subset's own outcome file is new")
	for name, content := range before {
		if name != "ok_6.12.json" {
			assert.Equal(t, content, after[name], "%s is kept", name)
		}
	}
	header := kernelsHeader(subset)
	assert.Equal(t, "|  | 6.12 | 6.18 | 7.0 | 7.2 | 7.3 | 7.3-rc |", header)
	assert.Equal(t, kernelsHeader(whole), header)
	assert.Contains(t, subset, "Merged from the outcome files of 2 runs:")
	assert.Contains(t, subset, "Columns: 6.18, 7.0, 7.2, 7.3, 7.3-rc.\n")
	assert.Contains(t, subset, "Columns: 6.12.\n")
	assert.Contains(t, subset, "**Verdict: as expected.**")
}

// CI jobs each run one kernel into a directory of their own and write no
// report; the merge step reads them all, and a job that left nothing is
// a missing column that fails the merge.
func TestMergeShardsOfJobs(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0\tfull\tyes\tyes", "ok:2.0\tfull\tyes\tyes", "ok:3.0\tfull\tyes\tyes")
	shards, report := opt.outcomes, opt.out
	for _, k := range []string{"ok:1.0", "ok:3.0"} {
		job := opt
		job.only, job.out, job.outcomes = k, "", filepath.Join(shards, "job-"+strings.ReplaceAll(k, ":", "_"))
		code, err := run(job)
		require.NoError(t, err)
		assert.Equal(t, 0, code, "the job's own kernel is as expected")
	}
	_, err := os.Stat(report)
	require.ErrorIs(t, err, os.ErrNotExist, "a job with an empty -out writes no report")

	merge := opt
	merge.merge, merge.bin = true, "/nonexistent: merging needs no test binary"
	code, md, args := runFake(t, merge)
	assert.Equal(t, 1, code, "a missing shard fails the merge")
	assert.Equal(t, 2, strings.Count(args, "\n"), "merging boots nothing: %q", args)
	for _, want := range []string{
		"| result | as expected | ✗ missing: no outcome file (ok_2.0.json) was merged | as expected |",
		"- ok:2.0: missing: no outcome file (ok_2.0.json) was merged",
		"Merged from the outcome files of 2 runs:",
	} {
		assert.Contains(t, md, want)
	}
}

func shardFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(raw)
	}
	return out
}

// kernelsHeader is the header row of the report's Kernels table.
func kernelsHeader(md string) string {
	_, rest, _ := strings.Cut(md, "## Kernels\n\n")
	header, _, _ := strings.Cut(rest, "\n")
	return header
}

func TestMatrixAsExpected(t *testing.T) {
	code, report, args := fakeMatrix(t, "ok:1.0\tfull\tyes\tyes", "ok:2.0\tbinary-only\tyes\tyes")
	assert.Equal(t, 0, code)
	assert.Contains(t, report, "**Verdict: as expected.**")
	assert.Contains(t, report, "| `fsession` | zero-threshold | pass | pass |")
	lines := strings.Split(strings.TrimSpace(args), "\n")
	require.Len(t, lines, 2, "one boot per kernel: %q", args)
	assert.Contains(t, lines[0], "testdata/vm/run.sh --kernel ")
	assert.Contains(t, lines[1], "testdata/vm/run-initramfs.sh --kernel ", "binary-only kernels boot without modules")
	assert.Contains(t, lines[0], "--verbose --timeout 180 --env TRACEBENCH_OUTCOMES_JSON=1 -- ")
	assert.Contains(t, lines[0], "scenarios.test -test.v -test.count=1 -test.timeout=2m0s")
}

// A kernel of another architecture boots the scenario binary built for
// it, through vm/run-initramfs.sh.
func TestMatrixBootsTheArchsBinary(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0:arm64\tinitramfs\tyes\tyes")
	_, err := run(opt)
	require.ErrorContains(t, err, "scenario test binary for arm64 (ok:1.0:arm64): ")
	arm64 := filepath.Join(filepath.Dir(opt.bin), "arm64", "scenarios.test")
	require.NoError(t, os.MkdirAll(filepath.Dir(arm64), 0o755))
	require.NoError(t, os.WriteFile(arm64, nil, 0o755))
	code, _, args := runFake(t, opt)
	assert.Equal(t, 0, code)
	assert.Contains(t, args, "testdata/vm/run-initramfs.sh --kernel ")
	assert.Contains(t, args, " -- "+arm64+" -test.v")
}

// -arches names the selected kernels' architectures other than the
// host's, each once, for make to build their scenario binaries, and runs
// nothing.
func TestArchesOfTheSelectedKernels(t *testing.T) {
	opt := fakeOptions(t, "a:7\tfull\tyes\tyes", "b:7:powerpc64le-64k\tinitramfs\tyes\tyes",
		"c:7:s390x\tinitramfs\tyes\tyes", "d:7:powerpc64le\tinitramfs\tyes\tyes", "e:7:rt-amd64\tfull\tyes\tyes")
	opt.arches = true
	stdout := os.Stdout
	r, w, err := os.Pipe()
	require.NoError(t, err)
	os.Stdout = w
	code, err := run(opt)
	os.Stdout = stdout
	w.Close()
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	printed, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "ppc64el\ns390x\n", string(printed))
	assert.NoFileExists(t, filepath.Join(os.Getenv("FAKE_CACHE"), "args"), "nothing booted")

	var b bytes.Buffer
	kernels, err := loadSelected(t, opt, "a:7,e:7:rt-amd64")
	require.NoError(t, err)
	printArches(&b, kernels)
	assert.Empty(t, b.String(), "the host's kernels need no other binary")
}

// loadSelected is the kernels of opt's table that only selects.
func loadSelected(t *testing.T, opt options, only string) ([]matrix.Kernel, error) {
	exp, err := matrix.LoadExpectations(opt.kernels)
	require.NoError(t, err)
	return exp.Select(strings.Split(only, ","))
}

// A kernel that cannot be fetched or booted is reported as such, and the
// kernels after it still run.
func TestMatrixGoesOnAfterFailures(t *testing.T) {
	code, report, args := fakeMatrix(t,
		"missing:9.9\tfull\tyes\tyes", "noboot:1.0\tfull\tyes\tyes", "fail:2.0\tfull\tyes\tyes", "silent:3.0\tfull\tyes\tyes", "ok:4.0\tfull\tyes\tyes")
	assert.Equal(t, 1, code)
	assert.Equal(t, 4, strings.Count(args, "\n"), "every fetched kernel booted: %q", args)
	for _, want := range []string{
		"- missing:9.9: fetch failed: exit status 1: vm: error: no complete amd64 kernel matching version '9.9' in suite 'missing'",
		"- noboot:1.0: guest did not boot or died (status 125): vm: error: the guest did not boot to the command (vng exited 255 after 20s)",
		"- fail:2.0 fsession zero-threshold: failed",
		`- silent:3.0: no outcome table (exit 0): no "tracebench-outcomes:" line in the output`,
		"| result | ✗ fetch failed",
		"| ✗ 1 mismatch | ✗ no outcome table (exit 0)",
		"| as expected |",
	} {
		assert.Contains(t, report, want)
	}
}

func TestMatrixSupportMismatchFails(t *testing.T) {
	code, report, _ := fakeMatrix(t, "ok:1.0\tfull\tno\tyes")
	assert.Equal(t, 1, code, "fsession ran where the table says it must skip")
	assert.Contains(t, report, "- ok:1.0 fsession: never skipped as unsupported where it should")
}

// A kernel error report on the console of a run that finished (a WARNING,
// a BUG that did not kill it) is a mismatch that names it.
func TestMatrixKernelWarningFails(t *testing.T) {
	code, report, _ := fakeMatrix(t, "warn:1.0\tfull\tyes\tyes")
	assert.Equal(t, 1, code)
	assert.Contains(t, report, `- warn:1.0: the kernel reported "WARNING: CPU: 1 PID: 212 at kernel/bpf/ringbuf.c:100 `+
		`bpf_ringbuf_submit+0x10/0x20" (last test started before it: `)
	assert.Contains(t, report, "| result | ✗ 1 mismatch |")
}

// A mechanism that crashes the kernel is a mismatch, and the kernel is
// booted again without it, so that the other mechanisms' cells are filled.
func TestMatrixBootsAgainWithoutACrashingMechanism(t *testing.T) {
	code, report, args := fakeMatrix(t, "crash:1.0\tfull\tyes\tyes")
	assert.Equal(t, 1, code)
	boots := strings.Split(strings.TrimSpace(args), "\n")
	require.Len(t, boots, 2, "%q", args)
	assert.NotContains(t, boots[0], tracers.DisableEnv)
	assert.Contains(t, boots[1], "--env TRACEBENCH_OUTCOMES_JSON=1 --env TRACEBENCH_DISABLE=fsession: "+
		"crashed this kernel in boot 1 of this matrix run (during TestScenarios/fsession/zero-threshold) -- ")
	for _, want := range []string{
		"- crash:1.0 fsession: crashed the kernel during TestScenarios/fsession/zero-threshold: " +
			"Oops: int3: 0000 [#1] SMP NOPTI; RIP: 0010:__schedule+0x30c/0x1080; Kernel panic - not syncing: Fatal exception in interrupt\n",
		"| `fsession` | zero-threshold | ✗ crash [1] |",
		"| `fentry-fexit` | zero-threshold | pass |",
		"| `fentry-fexit` | runs ✓ |",
		"exit 0 (2 boots, 1 crash)",
		"| result | ✗ 1 mismatch |",
	} {
		assert.Contains(t, report, want)
	}
	assert.NotContains(t, report, "status 125")
	logs, err := filepath.Glob(filepath.Join(os.Getenv("FAKE_CACHE"), "logs", "*.log"))
	require.NoError(t, err)
	assert.Equal(t, []string{"1.0.boot2.log", "1.0.log"}, baseNames(logs), "a log per boot")
}

func baseNames(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

// Every kind of packages a kernels.tsv row may give has vm/ scripts that
// fetch and boot it.
func TestEveryPackageKindHasItsScripts(t *testing.T) {
	for _, p := range matrix.PackageKinds {
		s, ok := scripts[p]
		if !assert.True(t, ok, "packages %s has no scripts", p) {
			continue
		}
		for _, script := range []string{s.fetch, s.boot} {
			assert.FileExists(t, filepath.Join("../../vm", script), "packages %s", p)
		}
	}
}

func TestDisableValueKeepsTheHostsEntries(t *testing.T) {
	t.Setenv(tracers.DisableEnv, "kprobe-session: crashes CI")
	crashes := []matrix.Crash{{Mechanism: "fsession", Test: "TestScenarios/fsession/a;b"}, {Mechanism: "fentry-fexit", Test: "TestBadConfig/fentry-fexit"}}
	assert.Equal(t, "kprobe-session: crashes CI; "+
		"fsession: crashed this kernel in boot 1 of this matrix run (during TestScenarios/fsession/a,b); "+
		"fentry-fexit: crashed this kernel in boot 2 of this matrix run (during TestBadConfig/fentry-fexit)",
		disableValue(matrix.Kernel{}, crashes))
}

// A mechanism kernels.tsv says the kernel crashes with is out of every
// boot, the first too, with the table's word for why.
func TestDisableValueTakesOutKnownCrashes(t *testing.T) {
	t.Setenv(tracers.DisableEnv, "")
	exp, err := matrix.ParseExpectations(strings.NewReader("kernel\tpackages\tfsession\tkprobe-kretprobe\n" +
		"sid:7:powerpc64le\tinitramfs\tyes\tcrashes\n"))
	require.NoError(t, err)
	k := exp.Kernels[0]
	assert.Equal(t, map[string]bool{"fsession": true, "kprobe-kretprobe": false}, k.Supports)
	assert.Equal(t, "kprobe-kretprobe: matrix/kernels.tsv says this kernel crashes with it (a kernel bug reproduced "+
		"without tracebench, named in the table's comments)", disableValue(k, nil))
	g := guest{opt: options{timeout: 10 * time.Minute, bin: ".cache/bin/scenarios.test"}}
	assert.Contains(t, g.bootArgs(&partRun{Run: matrix.Run{Kernel: k}}, "/k"), tracers.DisableEnv+"="+disableValue(k, nil))
	assert.NotContains(t, strings.Join(g.bootArgs(&partRun{Run: matrix.Run{Kernel: matrix.Kernel{Selector: "sid:7"}}}, "/k"), " "),
		tracers.DisableEnv)
}

func TestNewCrashBlamesTheRunningTestsMechanism(t *testing.T) {
	mechanisms := []string{"fsession", "kprobe-session"}
	crashed := output{lastTest: "TestCleanupOnSignal/kprobe-session/SIGINT", crash: []string{"Oops: int3"}}
	c, ok := crashed.newCrash(mechanisms, matrix.Run{})
	assert.True(t, ok)
	assert.Equal(t, matrix.Crash{Mechanism: "kprobe-session", Test: "TestCleanupOnSignal/kprobe-session/SIGINT", Lines: []string{"Oops: int3"}}, c)
	for name, out := range map[string]output{
		"no crash":            {lastTest: "TestScenarios/fsession/drops"},
		"no mechanism's test": {lastTest: "TestCLI", crash: []string{"Oops: int3"}},
		"unknown mechanism":   {lastTest: "TestScenarios/ftrace/drops", crash: []string{"Oops: int3"}},
	} {
		_, ok := out.newCrash(mechanisms, matrix.Run{})
		assert.False(t, ok, name)
	}
	_, ok = crashed.newCrash(mechanisms, matrix.Run{Crashes: []matrix.Crash{c}})
	assert.False(t, ok, "a mechanism that crashed the kernel before was disabled: booting again would not help")
}

func TestIsProgress(t *testing.T) {
	for line, want := range map[string]bool{
		"vm: kernel=7.2.13+deb14-amd64 accel=tcg":        true,
		"--- PASS: TestScenarios (98.41s)":               true,
		"        --- FAIL: TestScenarios/fsession/drops": true,
		"FAIL":                                   true,
		"PASS":                                   true,
		"=== RUN   TestScenarios/fsession":       true,
		"=== RUN   TestScenarios/fsession/drops": false,
		"        --- PASS: TestScenarios/fsession/drops": false,
		"    --- PASS: TestScenarios/fsession (8.06s)":   false,
		"tracebench-cli: exit 1":                         true,
		"    harness_test.go:111: {Calls:65}":            false,
	} {
		assert.Equal(t, want, isProgress(line), "%q", line)
	}
}

func TestProblem(t *testing.T) {
	crashed := output{}
	for _, line := range []string{
		"=== RUN   TestCleanupOnSignal/kprobe-session",
		"=== RUN   TestCleanupOnSignal/kprobe-session/SIGKILL",
		"[   30.620816] Oops: int3: 0000 [#1] SMP NOPTI",
		"[   30.621883] CPU: 0 UID: 0 PID: 395 Comm: scenarios.test",
		"[   30.623161] RIP: 0010:__schedule+0x30c/0x1080",
		"[   30.629794] RIP: 0033:0x491437",
		"[   30.632890] RIP: 0010:__schedule+0x30c/0x1080",
		"[   30.633161] Kernel panic - not syncing: Fatal exception in interrupt",
		"vm: error: the guest died while running the command",
	} {
		crashed.see(line)
	}
	assert.Equal(t, "guest did not boot or died (status 125) during TestCleanupOnSignal/kprobe-session/SIGKILL: "+
		"Oops: int3: 0000 [#1] SMP NOPTI; RIP: 0010:__schedule+0x30c/0x1080; Kernel panic - not syncing: Fatal exception in interrupt",
		crashed.problem(125, time.Minute, nil))

	noBoot := output{}
	noBoot.see("vm: error: the guest did not boot to the command")
	assert.Equal(t, "guest did not boot or died (status 125): vm: error: the guest did not boot to the command", noBoot.problem(125, time.Minute, nil))
	hung := output{lastTest: "TestScenarios/fsession/drops"}
	assert.Equal(t, "timed out after 20m0s during TestScenarios/fsession/drops", hung.problem(124, 20*time.Minute, nil))
	assert.Equal(t, "no outcome table (exit 2): boom", output{}.problem(2, time.Minute, errBoom))
}

// The scenario binary really prints the outcome line cmd/matrix parses,
// with every registered mechanism (TestBadConfig runs for each, as root
// or not, on any kernel: it loads nothing).
func TestScenarioBinaryPrintsOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scenario test binary")
	}
	bin := filepath.Join(t.TempDir(), "scenarios.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "tracebench/scenarios")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "-test.run", "TestBadConfig")
	cmd.Env = append(os.Environ(), matrix.OutcomesEnv+"=1")
	out, err = cmd.Output()
	require.NoError(t, err, "%s", out)
	o, err := matrix.ParseOutcomes(bytes.NewReader(out))
	require.NoError(t, err)
	var registered []string
	for _, m := range tracers.Mechanisms() {
		registered = append(registered, m.Name)
	}
	if o.SkipAll != "" {
		t.Skipf("the binary skipped everything: %s", o.SkipAll)
	}
	assert.Equal(t, registered, o.Mechanisms)
	assert.Equal(t, []string{"bad-config"}, o.Scenarios)
	assert.True(t, slices.ContainsFunc(o.Mechanisms, func(m string) bool { return o.Status[m]["bad-config"] == matrix.Pass }))
}

var errBoom = errors.New("boom")

func TestMergeRefusesAMissingDirectoryAndOtherModes(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0\tfull\tyes\tyes")
	opt.merge = true
	require.NoError(t, os.MkdirAll(filepath.Dir(opt.out), 0o755))
	require.NoError(t, os.WriteFile(opt.out, []byte("committed"), 0o644))
	_, err := run(opt)
	assert.ErrorContains(t, err, "-merge: outcomes directory: stat "+opt.outcomes+": no such file or directory")
	md, err := os.ReadFile(opt.out)
	require.NoError(t, err)
	assert.Equal(t, "committed", string(md), "the report is left as it was")

	require.NoError(t, os.MkdirAll(opt.outcomes, 0o755))
	bad := opt
	bad.only = "ok:1.0"
	_, err = run(bad)
	assert.EqualError(t, err, "-merge merges every kernel's outcome file: it takes no -only")
}

// A kernel's run divided over two guests with the CLI's tests: each unit
// runs in one guest, the outcome tables merge into one, and the next run
// divides by the durations this one recorded.
func TestDividedRunMergesItsGuests(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0\tfull\tyes\tyes")
	opt.guests = 2
	opt.cli = filepath.Join(filepath.Dir(opt.bin), "tracebench.test")
	require.NoError(t, os.WriteFile(opt.cli, nil, 0o755))
	code, report, args := runFake(t, opt)
	assert.Equal(t, 0, code, "%s", report)
	boots := strings.Split(strings.TrimSpace(args), "\n")
	require.Len(t, boots, 2, "%q", args)
	assert.Equal(t, 1, strings.Count(args, "tracebench-cli: start"), "the CLI's tests run in one guest: %q", args)
	assert.Contains(t, report, "**Verdict: as expected.**")
	assert.Contains(t, report, "| `fentry-fexit` | bad-config | pass |")

	raw, err := os.Open(filepath.Join(opt.outcomes, matrix.ShardName("ok:1.0")))
	require.NoError(t, err)
	defer raw.Close()
	r, err := matrix.ReadShard(raw)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Guests)
	assert.Equal(t, &matrix.CLIResult{Exit: 0}, r.CLI)
	assert.Equal(t, matrix.Durations{matrix.UnitCLI: 3, matrix.CLIUnitOf("TestTraceText"): 3, matrix.UnitOther: 2,
		matrix.UnitOf("fsession"): 5, matrix.UnitOf("fentry-fexit"): 5}, r.Durations)
	assert.ElementsMatch(t, []string{"bad-config", "zero-threshold"}, r.Outcomes.Scenarios)
	assert.Equal(t, []string{"fsession", "fentry-fexit"}, r.Outcomes.Mechanisms)
}

// A failed CLI test fails the kernel's run, named, though every cell of
// the table passed.
func TestDividedRunFailsWithTheCLI(t *testing.T) {
	opt := fakeOptions(t, "clifail:1.0\tfull\tyes\tyes")
	opt.guests = 2
	opt.cli = filepath.Join(filepath.Dir(opt.bin), "tracebench.test")
	require.NoError(t, os.WriteFile(opt.cli, nil, 0o755))
	code, report, _ := runFake(t, opt)
	assert.Equal(t, 1, code)
	assert.Contains(t, report, "the CLI tests exited with status 1, failed: TestTraceJSON")
}

func TestGuestsMustFitTheHost(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0\tfull\tyes\tyes")
	for _, n := range []int{0, runtime.NumCPU() + 1} {
		opt.guests = n
		_, err := run(opt)
		assert.ErrorContains(t, err, fmt.Sprintf("-guests %d: want 1 to the host's %d CPUs", n, runtime.NumCPU()))
	}
}

func TestBootArgsOfAGuestWithTheCLI(t *testing.T) {
	g := guest{opt: options{timeout: 10 * time.Minute, bin: ".cache/bin/scenarios.test", cli: ".cache/bin/tracebench.test"},
		all: []string{"fsession", "fentry-fexit"}, mechanisms: []string{"fsession", "fentry-fexit"}}
	p := &partRun{Run: matrix.Run{Kernel: matrix.Kernel{Selector: "sid:7", Packages: matrix.Full}},
		part: matrix.Part{CLI: true, Mechanisms: []string{"fentry-fexit"}}}
	args := g.bootArgs(p, "/k")
	assert.Equal(t, []string{"--", "sh", "-c", "echo tracebench-cli: start; " +
		"'.cache/bin/tracebench.test' '-test.v' '-test.count=1' '-test.timeout=9m0s'; echo \"tracebench-cli: exit $?\"; " +
		"'.cache/bin/scenarios.test' '-test.v' '-test.count=1' '-test.timeout=9m0s' '-test.run=^TestScenarios$' " +
		"'-tracebench.mechanisms=fentry-fexit'"}, args[len(args)-4:])
	assert.NotContains(t, args, "--add", "vm/run.sh shares the host's files")
	p.Kernel = matrix.Kernel{Selector: "sid:7:arm64", Packages: matrix.Initramfs}
	assert.Contains(t, strings.Join(g.bootArgs(p, "/k"), " "), "--add .cache/bin/arm64/tracebench.test --add .cache/bin/arm64/scenarios.test -- sh -c ")
}

// -mechanisms runs those mechanisms' rows alone (no CLI, no other tests)
// in one guest per unit at most, and holds the run to their columns only:
// a whole run without fsession's outcomes would be a mismatch.
func TestMechanismsRunAlone(t *testing.T) {
	opt := fakeOptions(t, "ok:7.2\tfull\tyes\tyes")
	opt.out, opt.mechanisms, opt.guests = "", "fentry-fexit", min(2, runtime.NumCPU())
	code, err := run(opt)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	args, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_CACHE"), "args"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(args), "\n"), "one unit, one guest: %s", args)
	assert.Contains(t, string(args), "-test.run=^TestScenarios$ -tracebench.mechanisms=fentry-fexit")
	f, err := os.Open(filepath.Join(opt.outcomes, matrix.ShardName("ok:7.2")))
	require.NoError(t, err)
	defer f.Close()
	r, err := matrix.ReadShard(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"fentry-fexit"}, r.Outcomes.Mechanisms)
}

func TestMechanismsRefused(t *testing.T) {
	opt := fakeOptions(t, "ok:7.2\tfull\tyes\tyes")
	opt.mechanisms = "fsession"
	_, err := run(opt)
	assert.ErrorContains(t, err, "-mechanisms fsession runs part of each column: it writes no report")
	opt.out, opt.cli = "", "tracebench.test"
	_, err = run(opt)
	assert.ErrorContains(t, err, "it takes no -cli")
	opt.cli, opt.mechanisms = "", "fsession,fsesion"
	_, err = run(opt)
	assert.EqualError(t, err, `-mechanisms: mechanism "fsesion" is no column of the table (fsession, fentry-fexit)`)
}

// A -mechanisms run's durations replace those units' committed figures
// and keep the others.
func TestWeightsOverlayTheLastRun(t *testing.T) {
	dir := t.TempDir()
	k := matrix.Kernel{Selector: "sid:7"}
	for sub, d := range map[string]matrix.Durations{
		"committed": {matrix.UnitCLI: 170, matrix.UnitOf("a"): 10},
		"last":      {matrix.UnitOf("a"): 12},
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
		require.NoError(t, writeShard(filepath.Join(dir, sub), matrix.Run{Kernel: k, Durations: d}))
	}
	g := guest{opt: options{weights: filepath.Join(dir, "committed"), outcomes: filepath.Join(dir, "last")}}
	assert.Equal(t, matrix.Durations{matrix.UnitCLI: 170, matrix.UnitOf("a"): 12}, g.weights(k))
}

// With a figure per CLI test in the weights, the CLI's tests are divided
// between the guests: one runs those named, the other the rest, and the
// run's CLI figure is the sum of both.
func TestDividedRunSplitsTheCLI(t *testing.T) {
	opt := fakeOptions(t, "ok:1.0\tfull\tyes\tyes")
	opt.guests = 2
	opt.cli = filepath.Join(filepath.Dir(opt.bin), "tracebench.test")
	require.NoError(t, os.WriteFile(opt.cli, nil, 0o755))
	opt.weights = t.TempDir()
	require.NoError(t, writeShard(opt.weights, matrix.Run{Kernel: matrix.Kernel{Selector: "ok:1.0"}, Durations: matrix.Durations{
		matrix.UnitCLI: 100, matrix.CLIUnitOf("TestA"): 60, matrix.CLIUnitOf("TestB"): 40, matrix.UnitOther: 1,
		matrix.UnitOf("fsession"): 1, matrix.UnitOf("fentry-fexit"): 1}}))
	code, _, args := runFake(t, opt)
	assert.Equal(t, 0, code)
	assert.Contains(t, args, "'-test.run=^(TestA)$'")
	assert.Contains(t, args, "'-test.skip=^(TestA)$'")
	raw, err := os.Open(filepath.Join(opt.outcomes, matrix.ShardName("ok:1.0")))
	require.NoError(t, err)
	defer raw.Close()
	r, err := matrix.ReadShard(raw)
	require.NoError(t, err)
	assert.Equal(t, 6.0, r.Durations[matrix.UnitCLI], "each guest's fake CLI run took 3 s")
	assert.Equal(t, &matrix.CLIResult{Exit: 0}, r.CLI)
}
