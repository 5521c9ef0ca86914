package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tracebench/internal/procgroup"
	"tracebench/matrix"
	"tracebench/tracers"
)

// scripts are the vm/ scripts that fetch and boot a kernel of each kind.
var scripts = map[matrix.Packages]struct{ fetch, boot string }{
	matrix.Full:       {"kernel.sh", "run.sh"},
	matrix.BinaryOnly: {"kernel-binary.sh", "run-initramfs.sh"},
	matrix.Initramfs:  {"kernel.sh", "run-initramfs.sh"},
}

// Exit statuses of the boot scripts that are not the test binary's.
const (
	exitTimeout  = 124
	exitNoStatus = 125
)

// guest fetches and boots kernels with the vm/ scripts.
type guest struct {
	opt options
	// all are the expectations' mechanisms, the scenario binary's
	// registry; mechanisms are those the run runs (-mechanisms), the ones
	// a crash can be blamed on.
	all, mechanisms []string
	// ctx is done at SIGINT or SIGTERM: the runners are stopped
	// (procgroup) and no other starts.
	ctx context.Context
}

// run fetches kernel k, runs the scenarios (and the CLI's tests, with
// -cli) in it, divided over -guests guests side by side, and returns the
// result; every failure is recorded in the result, so the matrix goes on.
func (g guest) run(k matrix.Kernel) matrix.Run {
	r := matrix.Run{Kernel: k}
	dir, err := g.fetch(k)
	if err != nil {
		r.Problem = "fetch failed: " + err.Error()
		return r
	}
	if err := readMarker(dir, &r); err != nil {
		r.Problem = err.Error()
		return r
	}
	plan := matrix.Plan{Mechanisms: g.mechanisms, CLI: g.opt.cli != "", Other: g.opt.mechanisms == ""}
	parts, err := matrix.Split(plan, g.opt.guests, g.weights(k))
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	start, sampler := time.Now(), startSampling()
	runs := make([]partRun, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		runs[i] = partRun{Run: r, part: p, label: partLabel(i, len(parts))}
		if len(parts) > 1 {
			progressf("%s: guest %s runs %s (about %.0f s by the last run)", k.Selector, runs[i].label, p, p.Seconds)
		}
		wg.Go(func() { g.bootUntilNoNewCrash(dir, &runs[i]) })
	}
	wg.Wait()
	r = merge(r, runs, g.all)
	r.Duration, r.Host = time.Since(start), sampler.stop()
	return r
}

// partRun is one guest's share of a kernel's run.
type partRun struct {
	matrix.Run
	part  matrix.Part
	label string // "" when the kernel runs in one guest, else e.g. "2/3"
	// cli is the CLI test binary's result, when the part ran it.
	cli *matrix.CLIResult
}

func partLabel(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", i+1, n)
}

// merge joins the guests' runs of r's kernel into r: their outcome
// tables, crashes, kernel errors, durations, problems and exit statuses.
func merge(r matrix.Run, runs []partRun, order []string) matrix.Run {
	var tables []*matrix.Outcomes
	var problems []string
	r.Durations = matrix.Durations{}
	cliSeconds := 0.0 // the parts ran different CLI tests
	for _, p := range runs {
		r.Crashes = append(r.Crashes, p.Crashes...)
		r.KernelErrors = append(r.KernelErrors, p.KernelErrors...)
		maps.Copy(r.Durations, p.Durations)
		cliSeconds += p.Durations[matrix.UnitCLI]
		r.CLI = joinCLI(r.CLI, p.cli)
		if _, scenarios := p.part.ScenarioArgs(order); !scenarios && p.Problem == "" {
			continue
		}
		tables = append(tables, p.Outcomes)
		if p.Exit != 0 && r.Exit == 0 {
			r.Exit = p.Exit
		}
		if p.Problem != "" {
			problems = append(problems, strings.TrimPrefix(p.label+": ", ": ")+p.Problem)
		}
	}
	if cliSeconds > 0 {
		r.Durations[matrix.UnitCLI] = cliSeconds
	}
	r.Guests = len(runs)
	if len(problems) > 0 {
		r.Problem = strings.Join(problems, "; ")
		return r
	}
	o, err := matrix.MergeOutcomes(tables, order)
	if err != nil {
		r.Problem = err.Error()
	}
	r.Outcomes = o
	return r
}

// joinCLI is the CLI's result over the parts that ran some of its tests:
// the first failed exit status, every failed test.
func joinCLI(a, b *matrix.CLIResult) *matrix.CLIResult {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	joined := matrix.CLIResult{Exit: a.Exit, Failed: slices.Concat(a.Failed, b.Failed)}
	if joined.Exit == 0 {
		joined.Exit = b.Exit
	}
	return &joined
}

// weights are the durations of k's units in its last runs: the committed
// outcome file's for k (-weights), each replaced by this run's outcome
// directory's where it has one (a -mechanisms run has some units alone).
func (g guest) weights(k matrix.Kernel) matrix.Durations {
	w := matrix.Durations{}
	for _, dir := range []string{g.opt.weights, g.opt.outcomes} {
		f, err := os.Open(filepath.Join(dir, matrix.ShardName(k.Selector)))
		if err != nil {
			continue
		}
		r, err := matrix.ReadShard(f)
		f.Close()
		if err == nil {
			maps.Copy(w, r.Durations)
		}
	}
	return w
}

// bootUntilNoNewCrash boots r's kernel at dir and, each time a mechanism
// crashes it, records the crash and boots it again without that
// mechanism, so that the others still get their cells: at most one boot
// per mechanism and one more. r gets the last boot's outcomes.
func (g guest) bootUntilNoNewCrash(dir string, r *partRun) {
	_, scenarios := r.part.ScenarioArgs(g.all)
	for boot := 1; ; boot++ {
		logPath := g.logPath(r.ABI, r.label, boot)
		progressf("%s: booting %s%s, full output in %s", r.Kernel.Selector, r.ABI, inGuest(r.label), logPath)
		out, err := g.boot(r, dir, logPath)
		r.Exit, r.Durations, r.cli = exitCode(err), out.durations, out.cli
		if r.Exit < 0 {
			r.Problem = "could not start the guest: " + err.Error()
			return
		}
		r.Outcomes, err = matrix.ParseOutcomes(bytes.NewReader(out.stdout))
		if err == nil || !scenarios && out.cli != nil {
			r.KernelErrors = append(r.KernelErrors, out.errors...)
			return
		}
		crash, ok := out.newCrash(g.mechanisms, r.Run)
		if !ok {
			r.Problem = out.problem(r.Exit, r.Kernel.Arch().Limit(g.opt.timeout), err)
			return
		}
		r.Crashes = append(r.Crashes, crash)
		progressf("%s: %s crashed the kernel during %s; booting again without it",
			r.Kernel.Selector, crash.Mechanism, crash.Test)
	}
}

func inGuest(label string) string {
	if label == "" {
		return ""
	}
	return " (guest " + label + ")"
}

// newCrash blames the kernel crash in out on the mechanism of the test
// that was running (TestScenarios/<mechanism>/<scenario> and the like),
// unless it is not one of mechanisms or has crashed r's kernel before:
// then booting again without it would not help.
func (out output) newCrash(mechanisms []string, r matrix.Run) (matrix.Crash, bool) {
	parts := strings.Split(out.lastTest, "/")
	if len(out.crash) == 0 || len(parts) < 2 || !slices.Contains(mechanisms, parts[1]) {
		return matrix.Crash{}, false
	}
	if _, before := r.Crashed(parts[1]); before {
		return matrix.Crash{}, false
	}
	return matrix.Crash{Mechanism: parts[1], Test: out.lastTest, Lines: out.crash}, true
}

// problem says why a run left no outcome table: how it ended, the test
// running then, and the kernel's crash report or the boot script's error.
func (out output) problem(exit int, timeout time.Duration, parseErr error) string {
	var what string
	switch exit {
	case exitTimeout:
		what = fmt.Sprintf("timed out after %s", timeout)
	case exitNoStatus:
		what = "guest did not boot or died (status 125)"
	default:
		what = fmt.Sprintf("no outcome table (exit %d)", exit)
	}
	if out.lastTest != "" {
		what += " during " + out.lastTest
	}
	switch {
	case len(out.crash) > 0:
		return what + ": " + strings.Join(out.crash, "; ")
	case out.lastError != "":
		return what + ": " + out.lastError
	case exit == exitNoStatus || exit == exitTimeout:
		return what
	}
	return fmt.Sprintf("%s: %v", what, parseErr)
}

// exitCode is the status of a finished command, -1 if it never ran.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// fetch runs the kernel's fetch script, which prints its directory.
func (g guest) fetch(k matrix.Kernel) (string, error) {
	cmd := exec.Command(filepath.Join(g.opt.vmDir, scripts[k.Packages].fetch), k.Selector)
	var dir, lastError string
	err := runLines(g.ctx, cmd, func(line string) { dir = line }, func(line string) {
		fmt.Fprintln(os.Stderr, "  "+line)
		lastError = keepError(lastError, line)
	})
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, lastError)
	}
	return strings.TrimSpace(dir), nil
}

// keepError returns line if it is a vm/ script's error line, else last.
func keepError(last, line string) string {
	if strings.HasPrefix(line, "vm: error") {
		return line
	}
	return last
}

// runLines runs cmd as procgroup starts it (stopped once ctx is done),
// handing each line of its stdout and stderr to the callbacks (one
// goroutine per stream), and waits for both streams to end.
func runLines(ctx context.Context, cmd *exec.Cmd, onStdout, onStderr func(string)) error {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	release, err := procgroup.Start(ctx, cmd)
	if err != nil {
		return err
	}
	defer release()
	var wg sync.WaitGroup
	wg.Go(func() { scanLines(stdout, onStdout) })
	wg.Go(func() { scanLines(stderr, onStderr) })
	wg.Wait() // Wait closes the pipes: read them to the end first
	return cmd.Wait()
}

func scanLines(r io.Reader, each func(string)) {
	// A read error ends the stream early; cmd.Wait still reports how the
	// command ended, and a lost outcome line shows as "no outcome table".
	_ = matrix.EachLine(r, each)
	io.Copy(io.Discard, r)
}

// readMarker fills r's kernel identity from the directory's
// tracebench-kernel.env, written by both fetch scripts.
func readMarker(dir string, r *matrix.Run) error {
	raw, err := os.ReadFile(filepath.Join(dir, "tracebench-kernel.env"))
	if err != nil {
		return fmt.Errorf("kernel directory %s: %w", dir, err)
	}
	env := map[string]string{}
	for line := range strings.Lines(string(raw)) {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			env[name] = strings.Trim(value, `"`)
		}
	}
	r.ABI, r.PkgVersion, r.Suite = env["ABI"], env["PKG_VERSION"], env["SUITE"]
	if r.ABI == "" {
		return fmt.Errorf("kernel directory %s: no ABI in tracebench-kernel.env", dir)
	}
	return nil
}

// output is what a guest run printed: its stdout, where the outcome line
// is, the last test it started, the last "vm: error" line of the boot
// script and the first lines of a kernel crash report on the console.
type output struct {
	stdout    []byte
	lastTest  string
	lastError string
	crash     []string
	// errors are the kernel's error reports, crash or not, with the test
	// that was running (at most maxKernelErrors).
	errors []matrix.KernelError
	// durations are the units' seconds as the tests reported them.
	durations matrix.Durations
	// cli is the CLI test binary's result, once its exit line was read.
	cli *matrix.CLIResult
	// inCLI: the lines are the CLI test binary's (after cliStart).
	inCLI     bool
	cliFailed []string
}

// Lines the guest command prints around the CLI test binary's run, which
// precedes the scenario binary's in a guest that runs both.
const (
	cliStart = "tracebench-cli: start"
	cliExit  = "tracebench-cli: exit "
)

// testResult matches a test's result line at the top level or one below
// (the mechanisms of the table test): indent, status, name, seconds.
var testResult = regexp.MustCompile(`^( {4})?--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+)s\)$`)

// count adds what line says of the units' durations and the CLI's result.
func (out *output) count(line string) {
	switch {
	case line == cliStart:
		out.inCLI, out.cli = true, nil
		return
	case strings.HasPrefix(line, cliExit):
		status, err := strconv.Atoi(strings.TrimPrefix(line, cliExit))
		if err != nil {
			status = -1
		}
		out.inCLI = false
		out.cli = &matrix.CLIResult{Exit: status, Failed: out.cliFailed}
		return
	}
	m := testResult.FindStringSubmatch(line)
	if m == nil {
		return
	}
	if out.durations == nil {
		out.durations = matrix.Durations{}
	}
	nested, status, name := m[1] != "", m[2], m[3]
	seconds, _ := strconv.ParseFloat(m[4], 64)
	switch {
	case out.inCLI && !nested:
		out.durations[matrix.UnitCLI] += seconds
		out.durations[matrix.CLIUnitOf(name)] = seconds
		if status == matrix.Fail {
			out.cliFailed = append(out.cliFailed, name)
		}
	case out.inCLI:
	case nested && strings.HasPrefix(name, matrix.TableTest+"/"):
		out.durations[name] = seconds
	case !nested && name != matrix.TableTest:
		out.durations[matrix.UnitOther] += seconds
	}
}

// errorMarkers start the console lines of kernel error reports: a
// WARNING's (matrix.WarningMarker) and crashMarkers.
var errorMarkers = append([]string{matrix.WarningMarker}, crashMarkers...)

// maxKernelErrors bounds the report lines kept per boot.
const maxKernelErrors = 5

// crashMarkers start the console lines that say why a kernel died; the
// first kernel-mode RIP says where.
var crashMarkers = []string{"Oops:", "BUG:", "general protection fault", "Kernel panic", "Out of memory", "RIP: 0010:"}

// see records what line tells about how the run ended.
func (out *output) see(line string) {
	out.count(line)
	if test, ok := strings.CutPrefix(line, "=== RUN"); ok {
		out.lastTest = strings.TrimSpace(test)
	}
	out.lastError = keepError(out.lastError, line)
	// Console lines start with the kernel's "[  30.620816] " timestamp.
	_, msg, ok := strings.Cut(line, "] ")
	if !ok || !strings.HasPrefix(line, "[") {
		return
	}
	marker := markerOf(msg)
	if marker == "" {
		return
	}
	msg = strings.TrimSpace(msg)
	if len(out.errors) < maxKernelErrors {
		out.errors = append(out.errors, matrix.KernelError{Test: out.lastTest, Line: msg})
	}
	sameMarker := func(c string) bool { return strings.HasPrefix(c, marker) }
	if marker != matrix.WarningMarker && len(out.crash) < 3 && !slices.ContainsFunc(out.crash, sameMarker) {
		out.crash = append(out.crash, msg)
	}
}

// markerOf returns the errorMarkers entry msg starts with, "" if none.
func markerOf(msg string) string {
	for _, m := range errorMarkers {
		if strings.HasPrefix(msg, m) {
			return m
		}
	}
	return ""
}

// boot runs r's part in the kernel at dir without the mechanisms that
// crashed it before. Every line goes to logPath; the progress lines also
// go to stderr, marked with the part's label.
func (g guest) boot(r *partRun, dir, logPath string) (output, error) {
	if err := os.MkdirAll(g.opt.logs, 0o755); err != nil {
		return output{}, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return output{}, err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(g.opt.vmDir, scripts[r.Kernel.Packages].boot), g.bootArgs(r, dir)...)
	var out output
	var stdout bytes.Buffer
	log := &lineLog{w: logFile, label: r.label}
	var mu sync.Mutex // out is seen from both streams' goroutines
	see := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		out.see(line)
		log.line(line)
	}
	err = runLines(g.ctx, cmd, func(line string) {
		stdout.WriteString(line + "\n")
		see(line)
	}, see)
	out.stdout = stdout.Bytes()
	return out, err
}

// bootArgs are the boot script's arguments for the kernel at dir (both
// scripts take these). --verbose puts
// the guest's console in the log, so that a guest that dies leaves its
// panic there. The test binaries' own timeout comes first so that a hang
// shows its stacks. A part of one binary runs it directly, one of both
// through sh, the CLI's first, its exit status on a line of its own.
func (g guest) bootArgs(r *partRun, dir string) []string {
	k := r.Kernel
	limit := k.Arch().Limit(g.opt.timeout)
	testTimeout := max(limit-time.Minute, limit/2)
	args := []string{
		"--kernel", dir, "--verbose",
		"--timeout", fmt.Sprint(int(limit.Seconds())),
		"--env", matrix.OutcomesEnv + "=1",
	}
	if len(r.Crashes) > 0 || len(k.Crashes) > 0 {
		args = append(args, "--env", tracers.DisableEnv+"="+disableValue(k, r.Crashes))
	}
	common := []string{"-test.v", "-test.count=1", "-test.timeout=" + testTimeout.String()}
	scenarioArgs, scenarios := r.part.ScenarioArgs(g.all)
	scenarioBin := archBinary(g.opt.bin, k.Arch().Debian)
	if !r.part.CLI {
		return slices.Concat(args, []string{"--", scenarioBin}, common, scenarioArgs)
	}
	cliBin := archBinary(g.opt.cli, k.Arch().Debian)
	script := fmt.Sprintf("echo %s; %s; echo \"%s$?\"", cliStart,
		shellWords(slices.Concat([]string{cliBin}, common, r.part.CLIArgs)), cliExit)
	bins := []string{cliBin}
	if scenarios {
		script += "; " + shellWords(slices.Concat([]string{scenarioBin}, common, scenarioArgs))
		bins = append(bins, scenarioBin)
	}
	if k.Packages != matrix.Full { // vm/run-initramfs.sh copies what sh runs
		for _, b := range bins {
			args = append(args, "--add", b)
		}
	}
	return append(args, "--", "sh", "-c", script)
}

// shellWords quotes words for sh; the first is a program's path, which
// sh must not look up in PATH.
func shellWords(words []string) string {
	if !strings.Contains(words[0], "/") {
		words[0] = "./" + words[0]
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// archBinary is the scenario binary for arch: bin itself for the host's
// (matrix.HostArch), else bin's name in a directory named arch next to it (make
// builds .cache/bin/arm64/scenarios.test with GOARCH=arm64).
func archBinary(bin, arch string) string {
	if arch == matrix.HostArch {
		return bin
	}
	return filepath.Join(filepath.Dir(bin), arch, filepath.Base(bin))
}

// disableValue takes out of a boot of k the mechanisms kernels.tsv says
// it crashes with and those that crashed it in this run, keeping the
// host's own entries, which the scripts pass on only when no --env
// replaces them. An entry is "name: reason", entries are joined by ";",
// so a reason must not hold one (a test name could).
func disableValue(k matrix.Kernel, crashes []matrix.Crash) string {
	var entries []string
	if host := os.Getenv(tracers.DisableEnv); host != "" {
		entries = append(entries, host)
	}
	for _, m := range slices.Sorted(maps.Keys(k.Crashes)) {
		entries = append(entries, m+": matrix/kernels.tsv says this kernel crashes with it (a kernel bug "+
			"reproduced without tracebench, named in the table's comments)")
	}
	for i, c := range crashes {
		reason := fmt.Sprintf("crashed this kernel in boot %d of this matrix run (during %s)", i+1, c.Test)
		entries = append(entries, c.Mechanism+": "+strings.ReplaceAll(reason, ";", ","))
	}
	return strings.Join(entries, "; ")
}

// logPath is where boot number boot of the kernel abi logs: <abi>.log,
// then <abi>.boot2.log and so on; with a guest label "2/3",
// <abi>.guest2.log, <abi>.guest2.boot2.log.
func (g guest) logPath(abi, label string, boot int) string {
	if n, _, ok := strings.Cut(label, "/"); ok {
		abi += ".guest" + n
	}
	if boot > 1 {
		abi += fmt.Sprintf(".boot%d", boot)
	}
	return filepath.Join(g.opt.logs, abi+".log")
}

// isProgress picks the lines of a guest run worth showing on the
// terminal: the boot scripts' own, top-level test results, the start of
// each top-level test and of its subtests (most are mechanisms: the
// results of subtests come only when their parent ends), and failures.
func isProgress(line string) bool {
	for _, p := range []string{"vm: ", "--- ", "FAIL", "PASS", "ok ", "panic:", cliExit} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	if test, ok := strings.CutPrefix(line, "=== RUN   "); ok {
		return strings.Count(test, "/") <= 1
	}
	return strings.Contains(line, "--- FAIL:")
}

// lineLog writes lines from both streams of a run to one file, and the
// progress lines to stderr too; the lock keeps lines whole.
type lineLog struct {
	mu    sync.Mutex
	w     io.Writer
	label string // the guest's, on its progress lines
}

func (l *lineLog) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
	if isProgress(s) {
		fmt.Fprintln(os.Stderr, "  "+strings.TrimPrefix("["+l.label+"] ", "[] ")+strings.TrimSpace(s))
	}
}
