package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// job is one run of bench/rounds.sh, in a guest of its own unless on the
// host: the rounds, or one process of the family's Once benchmarks.
type job struct {
	label string // names it in the progress lines
	out   string // its raw output
	cmd   *exec.Cmd
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
		label := strings.NewReplacer("^", "", "$", "").Replace(strings.TrimPrefix(p, "^Benchmark"))
		jobs = append(jobs, job{label: label, out: out, cmd: c.roundsCommand(stage, out, 1, p)})
	}
	return jobs, nil
}

// onceProcesses asks the test binary for the -test.bench pattern of each
// process of the Once benchmarks, for the run's mechanisms.
func (c config) onceProcesses(stage string) ([]string, error) {
	args := []string{"-tracebench.once-processes"}
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
	return strings.Fields(string(out)), nil
}

// runJobs runs jobs, up to c.guests at a time in their order; the first is
// the rounds, and the others start once it printed the family's Ready key
// (or ended). Each line of a job's output is shown prefixed by its label
// when there are several. It returns the exit status of the last job that
// failed (0 if none), or an error if one could not be started.
func (c config) runJobs(jobs []job) (int, error) {
	var ready sync.Once
	readyc := make(chan struct{})
	markReady := func() { ready.Do(func() { close(readyc) }) }
	queue := make(chan int, len(jobs))
	for i := range jobs {
		queue <- i
	}
	close(queue)
	var (
		mu   sync.Mutex
		rc   int
		errs []error
		wg   sync.WaitGroup
	)
	for range min(c.guests, len(jobs)) {
		wg.Go(func() {
			for i := range queue {
				if i > 0 {
					<-readyc
				}
				status, err := c.runJob(jobs[i], len(jobs) > 1, i == 0, markReady)
				if i == 0 {
					markReady()
				}
				mu.Lock()
				if status != 0 {
					rc = status
				}
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return rc, errors.Join(errs...)
}

// runJob runs j, its lines to our stdout and stderr (prefixed by its label
// if prefixed), calling ready at its line of the family's Ready key if
// watch; it returns the job's exit status.
func (c config) runJob(j job, prefixed, watch bool, ready func()) (int, error) {
	prefix := ""
	if prefixed {
		prefix = "[" + j.label + "] "
		logf("%s: started", j.label)
	}
	var onLine func(string)
	if watch && c.family.Ready != "" {
		onLine = func(line string) {
			if strings.HasPrefix(line, c.family.Ready+":") {
				ready()
			}
		}
	}
	stdout, stderr := &lineWriter{prefix: prefix, to: os.Stdout, onLine: onLine}, &lineWriter{prefix: prefix, to: os.Stderr}
	j.cmd.Stdout, j.cmd.Stderr = stdout, stderr
	err := j.cmd.Run()
	stdout.Flush()
	stderr.Flush()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		logf("%s: ended with status %d", j.label, exit.ExitCode())
		return exit.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("%s: %w", j.label, err)
	}
	if prefixed {
		logf("%s: ended", j.label)
	}
	return 0, nil
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
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
