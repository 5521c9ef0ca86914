package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/report"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig(env(nil))
	require.NoError(t, err)
	guests := 1
	if runtime.NumCPU() >= 2 {
		guests = 2
	}
	assert.Equal(t, config{clock: "icount", rounds: 12, cpus: 2, guests: guests, benchtime: "20000x", settle: "100ms",
		timeout: time.Hour, results: "results", family: report.Families[0]}, c)
	c, err = parseConfig(env(map[string]string{"BENCH_HOST": "1", "BENCH_SUITE": "peers", "BENCH_QUIET_WAIT": "30"}))
	require.NoError(t, err)
	assert.True(t, c.host)
	assert.Equal(t, 1, c.guests, "side by side only under icount")
	assert.Equal(t, "wall", c.clock, "the host has no icount")
	assert.Equal(t, "peers", c.family.Name)
	assert.Equal(t, 30*time.Second, c.quietWait)
}

// A family's guest CPUs are BENCH_CPUS's default; BENCH_CPUS overrides them.
func TestParseConfigCPUsOfTheFamily(t *testing.T) {
	for _, f := range report.Families {
		c, err := parseConfig(env(map[string]string{"BENCH_SUITE": f.Name}))
		require.NoError(t, err)
		assert.Equal(t, f.GuestCPUs, c.cpus, f.Name)
		c, err = parseConfig(env(map[string]string{"BENCH_SUITE": f.Name, "BENCH_CPUS": "3"}))
		require.NoError(t, err)
		assert.Equal(t, 3, c.cpus, f.Name)
	}
}

// Each bad value is refused with an error naming it.
func TestParseConfigNamesTheBadValue(t *testing.T) {
	for vars, want := range map[[2]string]string{
		{"BENCH_HOST", "yes"}:                     "BENCH_HOST='yes' is not 0 or 1",
		{"BENCH_CLOCK", "tsc"}:                    "BENCH_CLOCK='tsc' is neither icount nor wall",
		{"BENCH_ROUNDS", "0"}:                     "BENCH_ROUNDS='0' is not a positive integer",
		{"BENCH_ROUNDS", "12a"}:                   "BENCH_ROUNDS='12a' is not a positive integer",
		{"BENCH_BENCHTIME", "2s"}:                 "BENCH_BENCHTIME='2s' is not an iteration count like 40000x",
		{"BENCH_SETTLE", "soon"}:                  "BENCH_SETTLE='soon' is not 0 or a duration like 100ms",
		{"BENCH_CPUS", "-1"}:                      "BENCH_CPUS='-1' is not a positive integer",
		{"BENCH_GUESTS", "0"}:                     "BENCH_GUESTS='0' is not a positive integer",
		{"BENCH_GUESTS", "99999999999999999999"}:  "BENCH_GUESTS='99999999999999999999' is not a positive integer",
		{"BENCH_GUESTS", "4096"}:                  "BENCH_GUESTS=4096 is more than this host's",
		{"BENCH_TIMEOUT", "99999999999999999999"}: "BENCH_TIMEOUT='99999999999999999999' is not a whole number of seconds",
		{"BENCH_QUIET_WAIT", "1.5"}:               "BENCH_QUIET_WAIT='1.5' is not a whole number of seconds",
		{"BENCH_TIMEOUT", "1h"}:                   "BENCH_TIMEOUT='1h' is not a whole number of seconds",
		{"BENCH_SUITE", "multiple"}:               "BENCH_SUITE='multiple' is not a benchmark family (" + strings.Join(report.FamilyNames(), ", ") + ")",
	} {
		_, err := parseConfig(env(map[string]string{vars[0]: vars[1]}))
		assert.ErrorContains(t, err, want, vars[0])
	}
	_, err := parseConfig(env(map[string]string{"BENCH_HOST": "1", "BENCH_CLOCK": "icount"}))
	assert.EqualError(t, err, "BENCH_CLOCK=icount needs the guest; BENCH_HOST=1 measures wall time")
	_, err = parseConfig(env(map[string]string{"BENCH_CLOCK": "wall", "BENCH_GUESTS": "2"}))
	assert.ErrorContains(t, err, "BENCH_GUESTS=2 needs BENCH_CLOCK=icount in the guest")
}

// The rounds run bench/rounds.sh with the family's pattern, in the guest
// through vm/run.sh unless on the host.
func TestRoundsCommand(t *testing.T) {
	c, err := parseConfig(env(map[string]string{"BENCH_MECHANISMS": "fsession,fentry-fexit", "BENCH_ROUNDS": "6"}))
	require.NoError(t, err)
	stage := "/stage"
	assert.Equal(t, "vm/run.sh --timeout 3600 --cpus 2 --icount -- bench/rounds.sh /stage/bench.test /stage/r.txt 6 20000x "+
		"^Benchmark(VFSRead|BPFStats)$ -tracebench.mechanisms=fsession,fentry-fexit -tracebench.peers=false -tracebench.settle=100ms -tracebench.out=/stage/out -tracebench.cli=/stage/tracebench",
		strings.Join(c.roundsCommand(stage, "/stage/r.txt", 6, c.family.Pattern()).Args, " "))
	c, err = parseConfig(env(map[string]string{"BENCH_HOST": "1"}))
	require.NoError(t, err)
	assert.Equal(t, "bench/rounds.sh /stage/bench.test /stage/r.txt 12 20000x ^Benchmark(VFSRead|BPFStats)$ "+
		"-tracebench.peers=false -tracebench.settle=100ms -tracebench.out=/stage/out -tracebench.cli=/stage/tracebench", strings.Join(c.roundsCommand(stage, "/stage/r.txt", 12, c.family.Pattern()).Args, " "))
}

// A family with Once benchmarks gets a job per process of its own that
// the test binary lists (not another family's), after the rounds' job;
// BENCH_SIZES selects the function sets.
func TestJobs(t *testing.T) {
	stage := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(stage, "bench.test"),
		[]byte("#!/bin/sh\n[ \"$1\" = -tracebench.once-processes ] && [ \"$2\" = -tracebench.peers=false ] && [ \"$3\" = -tracebench.mechanisms=a,b ] || exit 3\n"+
			"echo '^BenchmarkFirst$/^a$'\necho '^BenchmarkOther$/^a$'\necho '^BenchmarkFirst$/^b$'\n"), 0o755))
	c, err := parseConfig(env(map[string]string{"BENCH_HOST": "1", "BENCH_SIZES": "n1,n10,all", "BENCH_MECHANISMS": "a,b"}))
	require.NoError(t, err)
	c.family = &report.Family{Name: "growth", Benchmarks: []string{"Every", "First"}, Once: []string{"First"}, Ready: "ready"}
	jobs, err := c.jobs(stage)
	require.NoError(t, err)
	var got []string
	for _, j := range jobs {
		got = append(got, j.label+": "+strings.Join(j.cmd.Args[2:6], " "))
	}
	assert.Equal(t, []string{
		"rounds: " + filepath.Join(stage, "rounds.txt") + " 12 20000x ^BenchmarkEvery$",
		"First/a: " + filepath.Join(stage, "once-01.txt") + " 1 20000x ^BenchmarkFirst$/^a$",
		"First/b: " + filepath.Join(stage, "once-02.txt") + " 1 20000x ^BenchmarkFirst$/^b$",
	}, got)
	assert.Contains(t, strings.Join(jobs[1].cmd.Args, " "), " -tracebench.mechanisms=a,b -tracebench.sizes=n1,n10,all -tracebench.peers=false -tracebench.settle=100ms")
	c.mechanisms = "c"
	_, err = c.jobs(stage)
	assert.ErrorContains(t, err, "listing the processes of First: exit status 3")
	for _, bad := range []string{"n0", "10", "n1,", "all,n01", "n1 n10"} {
		_, err := parseConfig(env(map[string]string{"BENCH_SIZES": bad}))
		assert.ErrorContains(t, err, "BENCH_SIZES='"+bad+"' is not a comma-separated list of set names", bad)
	}
}

// The Once jobs start after the rounds printed the Ready key, never
// before, side by side with them; the outputs are joined rounds first.
func TestRunJobs(t *testing.T) {
	dir := t.TempDir()
	sh := func(label, script string) job {
		out := filepath.Join(dir, label+".txt")
		return job{label: label, out: out, cmd: exec.Command("sh", "-c", script, "sh", out, dir)}
	}
	jobs := []job{
		// The rounds wait (bounded) for the Once job to have started after Ready.
		sh("rounds", `echo round1 >"$1"; echo ready: yes; i=0; while [ ! -e "$2/once-started" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; `+
			`[ -e "$2/once-started" ] || exit 4; echo round2 >>"$1"`),
		sh("once", `[ -e "$2/rounds.txt" ] || exit 5; touch "$2/once-started"; echo start >"$1"; exit 7`),
	}
	c := config{guests: 2, family: &report.Family{Ready: "ready"}}
	rc, failed := c.runJobs(context.Background(), jobs)
	assert.Equal(t, 7, rc, "the failing job's status")
	assert.Equal(t, []string{"once: ended with status 7"}, failed)
	assert.Equal(t, "round1\nround2\nstart\n", joined(t, jobs))
	assert.Regexp(t, `^rounds \d+, once \d+$`, durations(jobs), "every job run, in order")
}

// joined is joinOutputs of jobs, read back.
func joined(t *testing.T, jobs []job) string {
	raw := filepath.Join(t.TempDir(), "raw.txt")
	require.NoError(t, joinOutputs(jobs, raw))
	b, err := os.ReadFile(raw)
	require.NoError(t, err)
	return string(b)
}

// Rounds that end without the Ready key, or never start, leave the Once
// jobs unrun (they would build what they share on their own), each one
// listed; a job cut mid-line leaves the next its own line.
func TestRunJobsWithoutReady(t *testing.T) {
	for _, rounds := range [][]string{{"sh", "-c", "echo round1; exit 3"}, {"/no/such/binary"}} {
		for _, guests := range []int{1, 2} {
			dir := t.TempDir()
			ran := filepath.Join(dir, "once-ran")
			jobs := []job{{label: "rounds", out: filepath.Join(dir, "rounds.txt"), cmd: exec.Command(rounds[0], rounds[1:]...)},
				{label: "once", out: filepath.Join(dir, "once.txt"), cmd: exec.Command("touch", ran)}}
			rc, failed := config{guests: guests, family: &report.Family{Ready: "ready"}}.runJobs(context.Background(), jobs)
			assert.NotZero(t, rc)
			assert.NoFileExists(t, ran)
			require.Len(t, failed, 2, rounds[0])
			assert.Equal(t, "once: not run: the rounds ended without printing ready", failed[1])
			assert.NotContains(t, durations(jobs), "once", "a job not run has no duration")
		}
	}
	dir := t.TempDir()
	jobs := []job{{out: filepath.Join(dir, "a")}, {out: filepath.Join(dir, "b")}}
	require.NoError(t, writeString(jobs[0].out, "cut mid-li"))
	require.NoError(t, writeString(jobs[1].out, "tracebench-kernel: 7.2\n"))
	assert.Equal(t, "cut mid-li\ntracebench-kernel: 7.2\n", joined(t, jobs))
}

// Once interrupted, the running job's whole process group (vm/run.sh and
// what it started) gets SIGTERM, and no other job starts.
func TestRunJobsInterrupted(t *testing.T) {
	dir := t.TempDir()
	pidFile, ran := filepath.Join(dir, "pid"), filepath.Join(dir, "once-ran")
	jobs := []job{
		{label: "rounds", out: filepath.Join(dir, "rounds.txt"),
			cmd: exec.Command("sh", "-c", `sleep 60 & echo $! >"$1.tmp"; mv "$1.tmp" "$1"; wait`, "sh", pidFile)},
		{label: "once", out: filepath.Join(dir, "once.txt"), cmd: exec.Command("touch", ran)},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var pid int
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil {
				fmt.Sscan(string(b), &pid)
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(cancel)
	begin := time.Now()
	rc, failed := config{guests: 1, family: &report.Family{}}.runJobs(ctx, jobs)
	assert.Less(t, time.Since(begin), 20*time.Second, "the job ended at SIGTERM, not after its sleep")
	assert.NotZero(t, rc)
	require.Len(t, failed, 2)
	assert.Equal(t, "once: not started: context canceled", failed[1])
	assert.NoFileExists(t, ran)
	require.NotZero(t, pid)
	assert.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 5*time.Second, 20*time.Millisecond,
		"the job's child (pid %d) outlived it", pid) // reaped by init once dead
}

// bench/rounds.sh runs every round with the pattern, and passes the
// flags on.
func TestRoundsScript(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bench.test")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755))
	out := filepath.Join(dir, "raw.txt")
	for args, want := range map[string]string{
		"^B$ -x": "-test.run ^$ -test.bench ^B$ -test.benchtime 5x -test.count 1 -test.v -tracebench.round 0 -x\n" +
			"-test.run ^$ -test.bench ^B$ -test.benchtime 5x -test.count 1 -test.v -tracebench.round 1 -x\n",
	} {
		cmd := exec.Command("../../bench/rounds.sh", append([]string{bin, out, "2", "5x"}, strings.Fields(args)...)...)
		cmd.Stderr = io.Discard
		require.NoError(t, cmd.Run(), args)
		raw, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, want, string(raw), args)
	}
}

// keep moves the output and what the benchmarks wrote beside it into the
// kernel's results, replacing an earlier run's.
func TestKeep(t *testing.T) {
	stage, results := t.TempDir(), t.TempDir()
	require.NoError(t, writeString(filepath.Join(stage, report.RawFile), "tracebench-kernel: 7.2\n"))
	require.NoError(t, writeString(filepath.Join(stage, report.MetaFile), "rounds: 1\n"))
	require.NoError(t, os.MkdirAll(filepath.Join(stage, outDir, "sets"), 0o755))
	require.NoError(t, writeString(filepath.Join(stage, outDir, "sets", "n1.txt"), "new"))
	c := config{results: results, family: report.Families[0]}
	dest := filepath.Join(results, "7.2", c.family.Dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dest, "sets"), 0o755))
	require.NoError(t, writeString(filepath.Join(dest, "sets", "n2.txt"), "old"))
	got, err := c.keep(stage, 0)
	require.NoError(t, err)
	assert.Equal(t, dest, got)
	for path, want := range map[string]string{report.RawFile: "tracebench-kernel: 7.2\n", "sets/n1.txt": "new"} {
		b, err := os.ReadFile(filepath.Join(dest, path))
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
	assert.NoFileExists(t, filepath.Join(dest, "sets", "n2.txt"), "the earlier run's sets are replaced")
	assert.NoDirExists(t, stage)
}

func TestRunHelpListsEveryFamily(t *testing.T) {
	help := runHelp()
	words := strings.Join(strings.Fields(help), " ")
	for _, f := range report.Families {
		assert.Contains(t, help, f.Name+": ")
		assert.Contains(t, words, fmt.Sprintf("(%d guest CPUs)", f.GuestCPUs), "BENCH_CPUS's default for %s", f.Name)
	}
	for _, v := range []string{"BENCH_HOST", "BENCH_CLOCK", "BENCH_ROUNDS", "BENCH_BENCHTIME", "BENCH_MECHANISMS",
		"BENCH_SUITE", "BENCH_SIZES", "BENCH_SETTLE", "BENCH_CPUS", "BENCH_QUIET_WAIT", "BENCH_TIMEOUT", "BENCH_RESULTS"} {
		assert.Contains(t, help, "  "+v+"=", "every variable documented")
	}
	assert.NotContains(t, help, "{{")
}

func TestCommandLine(t *testing.T) {
	assert.Equal(t, 2, commandMain(nil))
	assert.Equal(t, 2, commandMain([]string{"bench"}))
	assert.Equal(t, 2, commandMain([]string{"run", "extra"}))
	assert.Equal(t, 2, commandMain([]string{"report"}), "needs a directory")
	assert.Equal(t, 1, commandMain([]string{"report", filepath.Join(t.TempDir(), "absent")}))
}

func TestFirstKernel(t *testing.T) {
	raw := filepath.Join(t.TempDir(), "raw.txt")
	assert.Equal(t, "", firstKernel(raw), "no file")
	require.NoError(t, writeString(raw, "bench: round 1/2\ntracebench-kernel: 7.2.13+deb14-amd64\ntracebench-kernel: other\n"))
	assert.Equal(t, "7.2.13+deb14-amd64", firstKernel(raw))
}

func writeString(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// A run that no signal stopped is kept (stopping the signal handling
// cancels its context: the run was reported interrupted and discarded),
// and one that SIGTERM stopped is not.
func TestRunUntilSignal(t *testing.T) {
	c := config{guests: 1, family: &report.Family{}}
	out := filepath.Join(t.TempDir(), "out.txt")
	rc, failed, interrupted := c.runUntilSignal([]job{{label: "rounds", out: out, cmd: exec.Command("true")}})
	assert.Zero(t, rc)
	assert.Empty(t, failed)
	assert.NoError(t, interrupted)

	rc, _, interrupted = c.runUntilSignal([]job{{label: "rounds", out: out,
		cmd: exec.Command("sh", "-c", "kill -TERM $PPID; sleep 60")}})
	assert.NotZero(t, rc)
	assert.ErrorIs(t, interrupted, context.Canceled)
}
