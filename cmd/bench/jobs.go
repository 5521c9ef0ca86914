package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"tracebench/internal/procgroup"
)

// job is one run of bench/rounds.sh, in a guest of its own unless on the
// host: the rounds, or one process of the family's Once benchmarks.
type job struct {
	label string // names it in the progress lines
	out   string // its raw output
	cmd   *exec.Cmd
	took  time.Duration // from its start to its end, boot included; 0 if not run
}

// jobs are the run's rounds and, for a family with Once benchmarks, one
// job per process the test binary lists (-tracebench.once-processes), each
// writing its own output in stage.
func (c config) jobs(stage string) ([]job, error) {
	raw := filepath.Join(stage, "rounds.txt")
	jobs := []job{{label: "rounds", out: raw, cmd: c.roundsCommand(stage, raw, c.rounds, c.family.Pattern())}}
	if len(c.family.Once) == 0 {
		return jobs, nil
	}
	patterns, err := c.onceProcesses(stage)
	if err != nil {
		return nil, err
	}
	for i, p := range patterns {
		out := filepath.Join(stage, fmt.Sprintf("once-%02d.txt", i+1))
		label := strings.NewReplacer("^", "", "$", "", "//", "/").Replace(strings.TrimPrefix(p, "^Benchmark"))
		jobs = append(jobs, job{label: label, out: out, cmd: c.roundsCommand(stage, out, 1, p, "-tracebench.apart")})
	}
	return jobs, nil
}

// onceProcesses asks the test binary for the -test.bench pattern of each
// process of the Once benchmarks, for the run's mechanisms.
func (c config) onceProcesses(stage string) ([]string, error) {
	args := []string{"-tracebench.once-processes", "-tracebench.peers=" + strconv.FormatBool(c.family.PeerRoot)}
	if c.mechanisms != "" {
		args = append(args, "-tracebench.mechanisms="+c.mechanisms)
	}
	list := exec.Command(filepath.Join(stage, "bench.test"), args...)
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the processes of %s: %v: %s", strings.Join(c.family.Once, ", "), err, strings.TrimSpace(stderr.String()))
	}
	// The binary lists every Once benchmark's processes; a family runs
	// those of its own.
	return slices.DeleteFunc(strings.Fields(string(out)), func(p string) bool {
		return !slices.ContainsFunc(c.family.Once, func(b string) bool { return strings.HasPrefix(p, "^Benchmark"+b+"$") })
	}), nil
}

// notStarted is the status of a job that could not start or was not run.
const notStarted = 125

// runUntilSignal runs jobs until they end or SIGINT or SIGTERM arrives;
// interrupted is the signal's error, nil when none came. It is read before
// the signal handling stops, since stopping it cancels the context too.
func (c config) runUntilSignal(jobs []job) (rc int, failed []string, interrupted error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rc, failed = c.runJobs(ctx, jobs)
	return rc, failed, ctx.Err()
}

// runJobs runs jobs, up to c.guests at a time in their order; the first is
// the rounds, and the others start once it printed the family's Ready key
// (a family without one: at once). If the rounds end without it, the
// others are not run: what they share is not there. Each line of a job's
// output is shown prefixed by its label when there are several. It
// returns the exit status of the last job, in their order, that failed (0
// if none) and a line per failed job ("label: why"), in their order. Once
// ctx is done, the running jobs are stopped (runInGroup) and no other
// starts.
func (c config) runJobs(ctx context.Context, jobs []job) (int, []string) {
	var (
		wg   sync.WaitGroup
		once sync.Once
		// ready is closed at the rounds' Ready line or at their end;
		// isReady, set before, says which.
		ready   = make(chan struct{})
		isReady bool
	)
	signal := func(seen bool) { once.Do(func() { isReady = seen; close(ready) }) }
	if c.family.Ready == "" {
		signal(true)
	}
	statuses, whys := make([]int, len(jobs)), make([]string, len(jobs))
	queue := make(chan int, len(jobs))
	for i := range jobs {
		queue <- i
	}
	close(queue)
	for range min(c.guests, len(jobs)) {
		wg.Go(func() {
			for i := range queue {
				statuses[i], whys[i] = c.runAfterReady(ctx, jobs, i, ready, &isReady, signal)
			}
		})
	}
	wg.Wait()
	rc, failed := 0, []string(nil)
	for i, status := range statuses {
		if status != 0 {
			rc, failed = status, append(failed, jobs[i].label+": "+whys[i])
		}
	}
	return rc, failed
}

// runAfterReady runs jobs[i]: the rounds (i 0), which signal whether they
// printed the Ready key, or a later job once ready is closed, if they did.
func (c config) runAfterReady(ctx context.Context, jobs []job, i int, ready <-chan struct{}, isReady *bool, signal func(bool)) (int, string) {
	if i == 0 {
		defer signal(false)
		return c.runJob(ctx, &jobs[0], len(jobs) > 1, func() { signal(true) })
	}
	<-ready
	if !*isReady {
		why := "not run: the rounds ended without printing " + c.family.Ready
		logf("%s: %s", jobs[i].label, why)
		return notStarted, why
	}
	return c.runJob(ctx, &jobs[i], true, nil)
}

// waitDelay bounds the wait for a job's output after it exited (a child
// of it holding the pipe open).
const waitDelay = 30 * time.Second

// runJob runs j, its lines to our stdout and stderr (prefixed by its label
// if prefixed), calling ready (if not nil) at its line of the family's
// Ready key; it sets j.took and returns the job's exit status and, if not
// 0, why.
func (c config) runJob(ctx context.Context, j *job, prefixed bool, ready func()) (int, string) {
	prefix := ""
	if prefixed {
		prefix = "[" + j.label + "] "
		logf("%s: started", j.label)
	}
	var onLine func(string)
	if ready != nil && c.family.Ready != "" {
		onLine = func(line string) {
			if strings.HasPrefix(line, c.family.Ready+":") {
				ready()
			}
		}
	}
	stdout, stderr := &lineWriter{prefix: prefix, to: os.Stdout, onLine: onLine}, &lineWriter{prefix: prefix, to: os.Stderr}
	j.cmd.Stdout, j.cmd.Stderr, j.cmd.WaitDelay = stdout, stderr, waitDelay
	begin := time.Now()
	err := runInGroup(ctx, j.cmd)
	j.took = time.Since(begin)
	stdout.Flush()
	stderr.Flush()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		why := fmt.Sprintf("ended with status %d", exit.ExitCode())
		logf("%s: %s after %s", j.label, why, j.took.Round(time.Second))
		return exit.ExitCode(), why
	case err != nil:
		why := fmt.Sprintf("not started: %v", err)
		logf("%s: %s", j.label, why)
		return notStarted, why
	}
	if prefixed {
		logf("%s: ended after %s", j.label, j.took.Round(time.Second))
	}
	return 0, ""
}

// runInGroup runs cmd as procgroup starts it: stopped once ctx is done,
// not started after.
func runInGroup(ctx context.Context, cmd *exec.Cmd) error {
	release, err := procgroup.Start(ctx, cmd)
	if err != nil {
		return err
	}
	defer release()
	return cmd.Wait()
}

// lineWriter writes whole lines to to, each with prefix, and shows each
// (without its newline) to onLine if set.
type lineWriter struct {
	prefix string
	to     io.Writer
	onLine func(string)
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// Flush writes what is left of a last line without its newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
}

func (w *lineWriter) line(s string) {
	fmt.Fprintf(w.to, "%s%s\n", w.prefix, s)
	if w.onLine != nil {
		w.onLine(s)
	}
}

// durations is meta.txt's process-durations-s: "label seconds" of each
// job run, comma-separated, in their order.
func durations(jobs []job) string {
	var parts []string
	for _, j := range jobs {
		if j.took > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", j.label, int(j.took.Seconds())))
		}
	}
	return strings.Join(parts, ", ")
}

// joinOutputs writes the jobs' outputs, in their order, to raw: the
// rounds, then the Once processes (the report tells them apart).
func joinOutputs(jobs []job, raw string) error {
	f, err := os.Create(raw)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		b, err := os.ReadFile(j.out)
		if errors.Is(err, os.ErrNotExist) {
			continue // a job that failed before its first round
		}
		if err != nil {
			f.Close()
			return err
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n') // a process killed mid-line: the next starts on a line of its own
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
