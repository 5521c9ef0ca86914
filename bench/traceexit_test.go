package bench

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/testenv"
	"tracebench/tracers"
)

// cliPath is the tracebench binary BenchmarkTraceExit runs.
var cliPath = flag.String("tracebench.cli", "",
	"the tracebench binary BenchmarkTraceExit runs (make bench-multi builds it)")

// traceExitSet is the function set BenchmarkTraceExit traces: the size
// at which users report waiting for detach (hundreds to thousands of
// functions).
const traceExitSet = "n1000"

// traceExitLimit bounds the CLI's attach, and its exit, in guest time.
const traceExitLimit = 20 * time.Minute

// BenchmarkTraceExit measures what a user of `tracebench trace` waits for
// on a loaded machine, for each mechanism that traces many functions:
// the CLI traces the traceExitSet functions (every process, 100 ms
// threshold) while a busy reader per guest CPU runs, and gets SIGINT as
// soon as its banner is out. It reports attach-ns (exec to the banner)
// and exit-ns (SIGINT to exit, the summary printed), guest time.
func BenchmarkTraceExit(b *testing.B) {
	testenv.Tracing.Require(b)
	if *cliPath == "" {
		b.Fatal("BenchmarkTraceExit needs -tracebench.cli, the tracebench binary (make bench-multi builds it)")
	}
	mechs := selectedMechanisms(b)
	file := multiSets(b, multiKinds(mechs)).file(b, traceExitSet)
	for _, m := range manyFunctions(mechs, true) {
		b.Run(m.Name+"/"+traceExitSet, func(b *testing.B) { benchTraceExit(b, m, file) })
	}
}

func benchTraceExit(b *testing.B, m tracers.Mechanism, file string) {
	// A kernel without the mechanism skips, as in BenchmarkMultiStart.
	tr, err := m.Start(tracers.Config{})
	if errors.Is(err, tracers.ErrUnsupported) {
		b.Skip(err.Error())
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		b.Fatal(err)
	}
	busyCPUs(b)
	cmd := exec.Command(*cliPath, "trace", "--mechanism", m.Name, "--functions", "@"+file,
		"--threshold-us", "100000", "--duration", "86400")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill() // a no-op once it exited
	stderr := readStderr(pipe)
	if err := stderr.waitBanner(); err != nil {
		b.Fatalf("%s: %v; its stderr: %s", m.Name, err, stderr.String())
	}
	attached := time.Since(began)
	began = time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		b.Fatal(err)
	}
	if err := within(stderr.end, "its exit after SIGINT"); err != nil {
		b.Fatalf("%s: %v; its stderr: %s", m.Name, err, stderr.String())
	}
	err = cmd.Wait()
	exited := time.Since(began)
	if err != nil {
		b.Fatalf("%s after SIGINT: %v; its stderr: %s", m.Name, err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "SUMMARY calls=") {
		b.Fatalf("%s printed no summary after SIGINT: %q", m.Name, stdout.String())
	}
	endOnce(b)
	b.ReportMetric(float64(attached.Nanoseconds()), "attach-ns")
	b.ReportMetric(float64(exited.Nanoseconds()), "exit-ns")
}

// endOnce ends a benchmark body that does its work once, before it reports
// its metrics: an (empty) b.Loop that ran keeps testing from calling the
// body again with b.N after its first call with b.N == 1 (Go 1.24+), which
// under a fixed -benchtime such as 20000x would run the work twice.
func endOnce(b *testing.B) {
	for b.Loop() {
	}
}

// cliStderr collects the CLI's stderr: banner is closed at the line
// starting "Tracing ", end at the end of the stream (the CLI exited).
type cliStderr struct {
	mu          sync.Mutex
	text        strings.Builder
	banner, end chan struct{}
}

func readStderr(r io.Reader) *cliStderr {
	c := &cliStderr{banner: make(chan struct{}), end: make(chan struct{})}
	go func() {
		defer close(c.end)
		seen := false
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			c.mu.Lock()
			fmt.Fprintln(&c.text, scanner.Text())
			c.mu.Unlock()
			if !seen && strings.HasPrefix(scanner.Text(), "Tracing ") {
				close(c.banner)
				seen = true
			}
		}
	}()
	return c
}

func (c *cliStderr) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

// waitBanner waits for the banner, for at most traceExitLimit; an error
// says the CLI exited before it.
func (c *cliStderr) waitBanner() error {
	select {
	case <-c.banner:
		return nil
	case <-c.end:
		select {
		case <-c.banner:
			return nil
		default:
			return errors.New("exited before its banner")
		}
	case <-time.After(traceExitLimit):
		return fmt.Errorf("no banner after %v", traceExitLimit)
	}
}

// within waits for done, for at most traceExitLimit of guest time.
func within(done <-chan struct{}, what string) error {
	select {
	case <-done:
		return nil
	case <-time.After(traceExitLimit):
		return fmt.Errorf("no %s after %v", what, traceExitLimit)
	}
}

// Under a fixed -benchtime, a body ended by endOnce runs once and keeps
// the metrics it reports; without it, it runs twice.
func TestEndOnce(t *testing.T) {
	benchtime := flag.Lookup("test.benchtime")
	old := benchtime.Value.String()
	require.NoError(t, benchtime.Value.Set("100x"))
	defer benchtime.Value.Set(old)
	for ends, want := range map[bool]int{true: 1, false: 2} {
		calls := 0
		r := testing.Benchmark(func(b *testing.B) {
			calls++
			if ends {
				endOnce(b)
			}
			b.ReportMetric(7, "work-ns")
		})
		assert.Equal(t, want, calls, "calls of the body, endOnce %v", ends)
		assert.Equal(t, 7.0, r.Extra["work-ns"], "endOnce %v", ends)
	}
}
