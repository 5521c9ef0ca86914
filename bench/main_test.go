package bench

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/bench/suite"
	"tracebench/internal/testenv"
	"tracebench/peers"
	"tracebench/tracers"
	"tracebench/workload"
)

// round rotates the order of the sub-benchmarks. `go test -count N` runs
// each sub-benchmark N times in a row (A A A B B B), so drift over the run
// would land on one mechanism; bench/rounds.sh instead runs this binary
// once per round with -count 1 and -tracebench.round=<round>, which gives
// A B C A B C and, with as many rounds as units, puts every unit at every
// position of a round once.
var round = flag.Int("tracebench.round", 0, "rotate the order of the sub-benchmarks by this many places")

// only limits the run to some mechanisms, e.g. to fit a time budget.
var only = flag.String("tracebench.mechanisms", "",
	"comma-separated mechanisms to measure (default: every registered one)")

// outDir receives what the benchmarks write beside their output (the multi
// family's function sets), kept with the results by cmd/bench.
var outDir = flag.String("tracebench.out", "",
	"directory for files written beside the results, e.g. function sets (default: a temporary one per process)")

// apart marks a process that runs once-per-run benchmarks apart from the
// rounds (cmd/bench passes it to those it starts): it prints
// suite.ApartKey, so that the report counts it as no round.
var apart = flag.Bool("tracebench.apart", false,
	"this process runs the once-per-run benchmarks apart from the rounds (the report counts it as no round)")

// withPeers runs the peers' wildcard variants (peers.Wildcards: bpftrace, bcc) beside
// the mechanisms in the multi benchmarks; cmd/bench turns it off for a
// family without the peer root (growth).
var withPeers = flag.Bool("tracebench.peers", true,
	"run the peers' wildcard variants (bpftrace, bcc) beside the mechanisms in BenchmarkMultiRead and BenchmarkMultiStart")

// wildcards are the peers the multi benchmarks run: none without
// -tracebench.peers.
func wildcards() []peers.Wildcard {
	if !*withPeers {
		return nil
	}
	return peers.Wildcards()
}

// onceProcesses makes the binary print the -test.bench pattern of each
// process the once-per-run benchmarks are split into, and exit.
var onceProcesses = flag.Bool("tracebench.once-processes", false,
	"print the -test.bench pattern of each process BenchmarkMultiStart runs in (a fresh kernel each), one per line, and exit")

func TestMain(m *testing.M) {
	workload.RunHelperIfRequested() // the busy readers of BenchmarkMultiStart
	flag.Parse()
	if *onceProcesses {
		os.Exit(printOnceProcesses(os.Stdout))
	}
	printConfig(os.Stdout)
	os.Exit(m.Run())
}

// printConfig labels the results in Go's benchmark format ("key: value"
// lines, as `go test` prints goos and cpu), so that the report and
// benchstat name the kernel and the emulation next to every figure.
func printConfig(w io.Writer) {
	fmt.Fprintf(w, "tracebench-kernel: %s\n", tracers.KernelRelease())
	fmt.Fprintf(w, "tracebench-emulation: %s\n", emulation())
	fmt.Fprintf(w, "tracebench-cpus: %d\n", runtime.NumCPU())
	fmt.Fprintf(w, "tracebench-clock: %s\n", cmp.Or(os.Getenv("TRACEBENCH_CLOCK"), "wall"))
	fmt.Fprintf(w, "%s: %s\n", suite.LoopKey, suite.LoopSched)
	if c := kernelCompiler(); c != "" {
		fmt.Fprintf(w, "%s: %s\n", suite.CompilerKey, c)
	}
	if *apart {
		fmt.Fprintf(w, "%s: true\n", suite.ApartKey)
	}
	printFloors(w)
}

// kernelCompiler is the compiler /proc/version names ("Linux version
// <release> (<builder>) (<compiler>, <linker>) #..."), "" if it names none.
func kernelCompiler() string {
	b, err := os.ReadFile("/proc/version")
	if err != nil {
		return ""
	}
	return compilerOf(string(b))
}

// compilerOf reads the compiler out of a /proc/version line: the text of
// its second parenthesized group up to the comma before the linker.
func compilerOf(version string) string {
	depth, group, start := 0, 0, 0
	for i, r := range version {
		switch r {
		case '(':
			if depth == 0 {
				group++
				start = i + 1
			}
			depth++
		case ')':
			depth--
			if depth == 0 && group == 2 {
				compiler, _, _ := strings.Cut(version[start:i], ",")
				return strings.TrimSpace(compiler)
			}
		}
	}
	return ""
}

// printFloors names each mechanism's floor (suite.FloorKeyPrefix +
// mechanism: floor), so that the report can split its overhead into floor + body.
func printFloors(w io.Writer) {
	for _, m := range tracers.Mechanisms() {
		kinds, err := m.AttachKinds()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err) // the mechanism's benchmarks fail the same way
			continue
		}
		if len(kinds) > 0 {
			fmt.Fprintf(w, "%s%s: %s\n", suite.FloorKeyPrefix, m.Name, suite.FloorOf(kinds))
		}
	}
}

// emulation is vm/run.sh's TRACEBENCH_ACCEL (tcg or kvm) in a guest.
func emulation() string {
	if accel := testenv.Accel(); accel != "" {
		return accel
	}
	return "none"
}

// TestCompilerOf reads the compiler out of /proc/version lines.
func TestCompilerOf(t *testing.T) {
	for line, want := range map[string]string{
		"Linux version 7.2.13+deb14-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0, " +
			"GNU ld (GNU Binutils for Debian) 2.45) #1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1 (2026-11-01)\n": "x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0",
		"Linux version 6.19.0 (me@host) (clang version 19.1.7, LLD 19.1.7) #3 SMP\n": "clang version 19.1.7",
		"Linux version 6.19.0 (me@host) #3 SMP\n":                                    "",
	} {
		assert.Equal(t, want, compilerOf(line), line)
	}
}
