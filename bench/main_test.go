package bench

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"tracebench/bench/suite"
	"tracebench/internal/testenv"
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
	if *apart {
		fmt.Fprintf(w, "%s: true\n", suite.ApartKey)
	}
	printFloors(w)
}

// printFloors names each mechanism's floor (tracebench-floor-<mechanism>:
// <floor>), so that the report can split its overhead into floor + body.
func printFloors(w io.Writer) {
	for _, m := range tracers.Mechanisms() {
		kinds, err := m.AttachKinds()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err) // the mechanism's benchmarks fail the same way
			continue
		}
		if len(kinds) > 0 {
			fmt.Fprintf(w, "tracebench-floor-%s: %s\n", m.Name, suite.FloorOf(kinds))
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
