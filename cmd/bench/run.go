package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"tracebench/bench/report"
	"tracebench/internal/hostload"
)

// runUsage documents `bench run` and its variables (bench.mk passes its
// variables of the same names).
const runUsage = `usage: bench run

Builds ./bench into a static test binary on the host, runs it BENCH_ROUNDS
times (bench/rounds.sh) in the Linux 7.x guest through vm/run.sh, or on this
machine's kernel with BENCH_HOST=1 (root needed; mechanisms the kernel lacks
are skipped with the reason), then moves the raw output and the run's
metadata to results/<kernel>/ and writes the report there (bench report). A
failed sub-benchmark makes the run fail; skipped ones do not, even if no
mechanism could run on the kernel (the report then says so and lists why,
with neither chart nor benchstat).

Environment:
  BENCH_HOST=1          run on the host kernel instead of the guest
  BENCH_CLOCK=C         the guest's clock: icount (default: QEMU -icount,
                        1 ns of guest time per guest instruction, so ns/op
                        counts instructions) or wall (TCG wall time); with
                        BENCH_HOST=1 only wall (the default there)
  BENCH_ROUNDS=N        rounds, one process each (default 12: benchstat
                        needs >= 6 for an interval, the signed-rank test
                        >= 6 for p < 0.05)
  BENCH_BENCHTIME=Nx    read(2) calls per sub-benchmark and round (default 20000x)
  BENCH_MECHANISMS=a,b  measure only these mechanisms (default: all registered)
  BENCH_SIZES=a,b       the multi and growth families' function sets by name,
                        e.g. n1,n10 (default: growth's listed below; multi
                        n1,n10,n100,n1000,n10000,all)
  BENCH_SUITE=S         the benchmark family (default: the first), one of
{{families}}  BENCH_SETTLE=D        idle D (a Go duration, e.g. 100ms) after sync(2) and a
                        garbage collection before each timed loop (default
                        100ms; 0: none)
  BENCH_CPUS=N          guest CPUs (default: the family's, listed above): the
                        loop's thread runs SCHED_FIFO on one, other tasks
                        mostly on the others, and under icount every CPU's
                        instructions count in the loop's figure
  BENCH_GUESTS=N        guests side by side at most (default 2 under icount on a
                        host of 2 CPUs or more, else 1; more than 1 only under
                        icount, where each guest counts its own instructions):
                        the multi family runs its rounds and each process of
                        BenchmarkMultiStart in a fresh guest of its own
  BENCH_QUIET_WAIT=S    first wait up to S seconds for other QEMU processes
                        on the host to end (default 0); their count and the
                        host load are recorded either way
  BENCH_TIMEOUT=S       kill the guest after S seconds (default 3600; each
                        committed run's meta.txt has how long it took)
  BENCH_RESULTS=DIR     parent of the <kernel> directories (default results)
`

// sampleInterval is how often the host's load is sampled during a run.
const sampleInterval = 15 * time.Second

// peerRootEnv is peers.RootEnv, the peer root's directory for the peers
// family (not imported: package peers loads BPF).
const peerRootEnv = "TRACEBENCH_PEER_ROOT"

// config is a run's BENCH_* variables, checked.
type config struct {
	host                bool
	clock               string // icount or wall
	rounds, cpus        int
	guests              int // jobs side by side at most
	benchtime, settle   string
	quietWait, timeout  time.Duration
	results, mechanisms string
	sizes               string
	family              *report.Family
}

// runHelp is runUsage with the families listed.
func runHelp() string {
	var b strings.Builder
	for _, f := range report.Families {
		doc := fmt.Sprintf("%s (%d guest CPUs)", f.Doc, f.GuestCPUs)
		fmt.Fprintf(&b, "                          %s: %s\n", f.Name, wrap(doc, 52, "\n                            "))
	}
	return strings.Replace(runUsage, "{{families}}", b.String(), 1)
}

// wrap breaks s into lines of at most width bytes, joined by sep.
func wrap(s string, width int, sep string) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines, line = append(lines, line), ""
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	return strings.Join(append(lines, line), sep)
}

var (
	iterations = regexp.MustCompile(`^[1-9][0-9]*x$`)
	duration   = regexp.MustCompile(`^(0|[0-9]+(ns|us|ms|s))$`)
	counting   = regexp.MustCompile(`^[1-9][0-9]*$`)
	whole      = regexp.MustCompile(`^[0-9]+$`)
	sizeList   = regexp.MustCompile(`^(n[1-9][0-9]*|all)(,(n[1-9][0-9]*|all))*$`)
)

// parseConfig reads the BENCH_* variables through getenv; an error names
// the bad value.
func parseConfig(getenv func(string) string) (config, error) {
	get := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var c config
	switch host := get("BENCH_HOST", "0"); host {
	case "0", "1":
		c.host = host == "1"
	default:
		return c, fmt.Errorf("BENCH_HOST='%s' is not 0 or 1", host)
	}
	defaultClock := "icount"
	if c.host {
		defaultClock = "wall"
	}
	c.clock = get("BENCH_CLOCK", defaultClock)
	switch {
	case c.clock != "icount" && c.clock != "wall":
		return c, fmt.Errorf("BENCH_CLOCK='%s' is neither icount nor wall", c.clock)
	case c.host && c.clock == "icount":
		return c, errors.New("BENCH_CLOCK=icount needs the guest; BENCH_HOST=1 measures wall time")
	}
	var err error
	if c.rounds, err = positive("BENCH_ROUNDS", get("BENCH_ROUNDS", "12")); err != nil {
		return c, err
	}
	if c.benchtime = get("BENCH_BENCHTIME", "20000x"); !iterations.MatchString(c.benchtime) {
		return c, fmt.Errorf("BENCH_BENCHTIME='%s' is not an iteration count like 40000x (a fixed count keeps the run's length predictable)", c.benchtime)
	}
	if c.settle = get("BENCH_SETTLE", "100ms"); !duration.MatchString(c.settle) {
		return c, fmt.Errorf("BENCH_SETTLE='%s' is not 0 or a duration like 100ms", c.settle)
	}
	suite := get("BENCH_SUITE", report.Families[0].Name)
	if c.family, err = report.LookupFamily(suite); err != nil {
		return c, fmt.Errorf("BENCH_SUITE='%s' is not a benchmark family (%s)", suite, strings.Join(report.FamilyNames(), ", "))
	}
	if c.cpus, err = positive("BENCH_CPUS", get("BENCH_CPUS", strconv.Itoa(c.family.GuestCPUs))); err != nil {
		return c, err
	}
	if c.guests, err = positive("BENCH_GUESTS", get("BENCH_GUESTS", defaultGuests(c))); err != nil {
		return c, err
	}
	if c.guests > runtime.NumCPU() {
		return c, fmt.Errorf("BENCH_GUESTS=%d is more than this host's %d CPUs: a guest under icount runs on one host thread, "+
			"and guests sharing a CPU take longer", c.guests, runtime.NumCPU())
	}
	if c.guests > 1 && (c.host || c.clock != "icount") {
		return c, fmt.Errorf("BENCH_GUESTS=%d needs BENCH_CLOCK=icount in the guest: runs side by side share the host's CPUs, "+
			"which changes wall times (under icount each guest counts its own instructions)", c.guests)
	}
	if c.quietWait, err = seconds("BENCH_QUIET_WAIT", get("BENCH_QUIET_WAIT", "0")); err != nil {
		return c, err
	}
	if c.timeout, err = seconds("BENCH_TIMEOUT", get("BENCH_TIMEOUT", "3600")); err != nil {
		return c, err
	}
	c.results, c.mechanisms = get("BENCH_RESULTS", "results"), getenv("BENCH_MECHANISMS")
	if c.sizes = get("BENCH_SIZES", c.family.Sizes); c.sizes != "" && !sizeList.MatchString(c.sizes) {
		return c, fmt.Errorf("BENCH_SIZES='%s' is not a comma-separated list of set names like n1,n10,all", c.sizes)
	}
	return c, nil
}

// defaultGuests is 2 under icount in the guest on a host of 2 CPUs or
// more (a guest under icount runs on one host thread), else 1.
func defaultGuests(c config) string {
	if !c.host && c.clock == "icount" && runtime.NumCPU() >= 2 {
		return "2"
	}
	return "1"
}

func positive(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if !counting.MatchString(v) || err != nil {
		return 0, fmt.Errorf("%s='%s' is not a positive integer", name, v)
	}
	return n, nil
}

func seconds(name, v string) (time.Duration, error) {
	n, err := strconv.Atoi(v)
	if !whole.MatchString(v) || err != nil {
		return 0, fmt.Errorf("%s='%s' is not a whole number of seconds", name, v)
	}
	return time.Duration(n) * time.Second, nil
}

// runMain runs the benchmarks as the BENCH_* variables say and writes the
// report; it returns the exit status.
func runMain() int {
	c, err := parseConfig(os.Getenv)
	if err == nil {
		err = c.check()
	}
	if err == nil {
		c.results, err = filepath.Abs(c.results)
	}
	if err == nil {
		err = toModuleRoot()
	}
	if err == nil {
		err = c.run()
	}
	if err != nil {
		logf("error: %v", err)
		return 1
	}
	return 0
}

// check refuses what cannot run here.
func (c config) check() error {
	if c.host && os.Geteuid() != 0 {
		return errors.New("BENCH_HOST=1 needs root to load BPF programs")
	}
	return nil
}

// run builds the benchmark binary, runs the rounds, moves their output to
// the results and writes the report.
func (c config) run() error {
	if err := os.MkdirAll(".cache/bench", 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(".cache/bench", "run.")
	if err != nil {
		return err
	}
	stage, _ = filepath.Abs(stage)
	logf("building the benchmark binary and the CLI it runs in %s", stage)
	if err := build("test", "-c", "-o", filepath.Join(stage, "bench.test"), "./bench"); err != nil {
		return err
	}
	if err := build("build", "-o", filepath.Join(stage, cliBinary), "./cmd/tracebench"); err != nil {
		return err
	}
	if c.quietWait > 0 {
		logf("waiting up to %s for other QEMU processes to end (%d running)", c.quietWait, hostload.OtherGuests())
	}
	waited, _ := hostload.WaitQuiet(c.quietWait, func(int) {})
	meta := &metaFile{}
	c.startMeta(meta, waited)

	jobs, err := c.jobs(stage)
	if err != nil {
		return err
	}
	if len(jobs) > 1 {
		meta.add("once-processes", strconv.Itoa(len(jobs)-1))
		meta.add("guests", strconv.Itoa(c.guests))
	}
	sampler, start := hostload.Start(sampleInterval), time.Now()
	rc, failed, interrupted := c.runUntilSignal(jobs)
	host := sampler.Stop()
	if interrupted != nil {
		return fmt.Errorf("interrupted: the guests were sent SIGTERM and have ended; nothing was kept: %w",
			errors.Join(interrupted, os.RemoveAll(stage)))
	}
	meta.add("failed-processes", strings.Join(failed, "; "))
	if len(jobs) > 1 {
		meta.add("process-durations-s", durations(jobs))
	}
	if err := joinOutputs(jobs, filepath.Join(stage, report.RawFile)); err != nil {
		return err
	}
	meta.add("date-end", utcNow())
	meta.add("duration-s", strconv.Itoa(int(time.Since(start).Seconds())))
	meta.add("host-load-end", hostload.Averages())
	meta.add("other-qemu-end", strconv.Itoa(hostload.OtherGuests()))
	meta.add("host-load-1min-max", fmt.Sprintf("%.2f (sampled every %s)", host.LoadMax, sampleIntervalName))
	meta.add("other-qemu-max", fmt.Sprintf("%d (sampled every %s)", host.OtherGuestsMax, sampleIntervalName))
	meta.add("exit-status", strconv.Itoa(rc))
	if err := os.WriteFile(filepath.Join(stage, report.MetaFile), meta.Bytes(), 0o644); err != nil {
		return err
	}

	dest, err := c.keep(stage, rc)
	if err != nil {
		return err
	}
	reportErr := writeReport(dest, os.Stderr)
	logf("report: %s", filepath.Join(dest, "README.md"))
	var drops *dropsError
	switch {
	case rc != 0 && reportErr != nil && !errors.As(reportErr, &drops):
		return fmt.Errorf("the benchmark run failed with status %d, and writing its report failed: %w", rc, reportErr)
	case rc != 0:
		return fmt.Errorf("the benchmark run failed with status %d (see Failed in %s)", rc, filepath.Join(dest, "README.md"))
	case errors.As(reportErr, &drops):
		return fmt.Errorf("events were dropped, so the run is no comparison (see the top of %s)", filepath.Join(dest, "README.md"))
	case reportErr != nil:
		return fmt.Errorf("writing the report failed: %w", reportErr)
	}
	return nil
}

// sampleIntervalName is sampleInterval as meta.txt says it.
var sampleIntervalName = strconv.Itoa(int(sampleInterval.Seconds())) + "s"

// startMeta records what is known before the rounds run.
func (c config) startMeta(m *metaFile, waited time.Duration) {
	where, cpus := "guest", strconv.Itoa(c.cpus)
	if c.host {
		where, cpus = "host ("+hostload.Release()+")", ""
	}
	mechanisms := c.mechanisms
	if mechanisms == "" {
		mechanisms = "all registered"
	}
	m.add("where", where)
	m.add("commit", commit())
	m.add("clock", c.clockDesc())
	m.add("date-start", utcNow())
	suite := c.family.Name + " (" + c.family.Pattern()
	if len(c.family.Once) > 0 {
		suite += "; once, apart: Benchmark" + strings.Join(c.family.Once, ", Benchmark")
	}
	m.add("suite", suite+")")
	m.add("rounds", strconv.Itoa(c.rounds))
	m.add("benchtime", c.benchtime)
	m.add("mechanisms", mechanisms)
	m.add("sizes", c.sizes)
	m.add("guest-cpus", cpus)
	m.add("settle", c.settle)
	m.add("host-cpus", strconv.Itoa(runtime.NumCPU()))
	m.add("host-cpu", hostload.CPUModel())
	m.add("host-load-start", hostload.Averages())
	m.add("other-qemu-start", strconv.Itoa(hostload.OtherGuests()))
	m.add("quiet-wait-s", strconv.Itoa(int(waited.Seconds())))
}

// clockDesc is the clock the figures are in, for meta.txt.
func (c config) clockDesc() string {
	switch {
	case c.clock == "icount":
		return "icount (QEMU -icount shift=0,sleep=on: guest time advances 1 ns per executed guest instruction)"
	case c.host:
		return "wall (this machine's clock)"
	}
	return "wall (the guest's clock under TCG emulation)"
}

// cliBinary, in the stage, is the tracebench CLI BenchmarkTraceExit runs.
const cliBinary = "tracebench"

// build runs `go args...` static (the guest runs the host's binaries).
func build(args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", args[len(args)-1], err)
	}
	return nil
}

// roundsCommand is bench/rounds.sh running pattern's benchmarks for
// rounds rounds into out, with flags and the run's flags, in a guest of its own
// through vm/run.sh unless on the host. bench/rounds.sh stays a shell
// script: it runs beside the measured loop, where under icount every
// instruction of every process counts, and a shell waiting for the test
// binary executes none (a Go process has its runtime's own timers).
func (c config) roundsCommand(stage, out string, rounds int, pattern string, flags ...string) *exec.Cmd {
	args := append([]string{"bench/rounds.sh", filepath.Join(stage, "bench.test"), out, strconv.Itoa(rounds), c.benchtime, pattern}, flags...)
	if c.mechanisms != "" {
		args = append(args, "-tracebench.mechanisms="+c.mechanisms)
	}
	if c.sizes != "" {
		args = append(args, "-tracebench.sizes="+c.sizes)
	}
	args = append(args, "-tracebench.peers="+strconv.FormatBool(c.family.PeerRoot), "-tracebench.settle="+c.settle, "-tracebench.out="+filepath.Join(stage, outDir),
		"-tracebench.cli="+filepath.Join(stage, cliBinary))
	if !c.host {
		vm := []string{"vm/run.sh", "--timeout", strconv.Itoa(int(c.timeout.Seconds())), "--cpus", strconv.Itoa(c.cpus)}
		if c.clock == "icount" {
			vm = append(vm, "--icount")
		}
		args = append(append(vm, "--"), args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if c.family.PeerRoot {
		// Without it the peers skip with the reason.
		peerRoot := exec.Command("vm/peer-root.sh")
		peerRoot.Stderr = os.Stderr
		out, err := peerRoot.Output()
		if root := strings.TrimSpace(string(out)); err == nil && root != "" {
			cmd.Env = append(os.Environ(), peerRootEnv+"="+root)
		} else {
			logf("warning: no peer root (vm/peer-root.sh: %v); the peer rows are skipped", err)
		}
	}
	return cmd
}

// outDir, in the stage, receives the files the benchmarks write beside
// their output (-tracebench.out: the multi family's function sets).
const outDir = "out"

// keep moves the rounds' output, and what the benchmarks wrote to the
// stage's outDir, from stage to the results directory of the kernel it
// names, replacing what an earlier run left there; it returns that
// directory.
func (c config) keep(stage string, rc int) (string, error) {
	raw := filepath.Join(stage, report.RawFile)
	kernel := firstKernel(raw)
	if kernel == "" || strings.Contains(kernel, "/") {
		return "", fmt.Errorf("the run (status %d) left no tracebench-kernel line in %s", rc, raw)
	}
	dest := filepath.Join(c.results, kernel, c.family.Dir)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	moves := map[string]string{}
	for _, name := range []string{report.RawFile, report.MetaFile} {
		moves[filepath.Join(stage, name)] = filepath.Join(dest, name)
	}
	written, err := os.ReadDir(filepath.Join(stage, outDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, e := range written {
		moves[filepath.Join(stage, outDir, e.Name())] = filepath.Join(dest, e.Name())
	}
	for from, to := range moves {
		if err := os.RemoveAll(to); err != nil {
			return "", err
		}
		if err := os.Rename(from, to); err != nil {
			return "", err
		}
	}
	return dest, os.RemoveAll(stage)
}

// firstKernel is the value of raw's first "tracebench-kernel:" line.
func firstKernel(raw string) string {
	f, err := os.Open(raw)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "tracebench-kernel: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// commit is the working tree's commit, "-dirty" appended when it differs
// from it outside results/; "" outside a git checkout.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(out))
	if exec.Command("git", "diff", "--quiet", "HEAD", "--", ".", ":(exclude)results").Run() != nil {
		id += "-dirty"
	}
	return id
}

func utcNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05Z") }

// metaFile collects meta.txt's "key: value" lines; an empty value is left
// out.
type metaFile struct{ strings.Builder }

func (m *metaFile) add(key, value string) {
	if value != "" {
		fmt.Fprintf(m, "%s: %s\n", key, value)
	}
}

func (m *metaFile) Bytes() []byte { return []byte(m.String()) }
