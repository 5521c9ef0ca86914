// Command bench runs the overhead benchmarks (package bench) and writes
// their reports; `make bench`, `make bench-peers` and `make bench-report`
// run it.
//
//	bench run            build ./bench, run it round after round in the Linux 7.x
//	                     guest (or on this kernel) and write the report under
//	                     results/<kernel>/; configured by BENCH_* variables
//	bench report DIR...  (re)write the report of each run in DIR
//	bench kernels DIR OUT.md  compare the overhead runs of several kernels below DIR
//
// `bench run --help` and `bench report --help` document each. Both work in
// the module's root, wherever they are started: relative paths (DIR,
// BENCH_RESULTS) are taken from the directory they were started in.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const usage = `usage: bench run | bench report DIR... | bench kernels DIR OUT.md
(bench run --help, bench report --help, bench kernels --help: what each does)
`

func main() {
	os.Exit(commandMain(os.Args[1:]))
}

// commandMain runs the subcommand args name and returns the exit status.
func commandMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	help := len(args) > 1 && (args[1] == "-h" || args[1] == "--help")
	switch args[0] {
	case "run":
		if help {
			fmt.Print(runHelp())
			return 0
		}
		if len(args) > 1 {
			logf("unexpected argument %q (bench run takes none; see --help)", args[1])
			return 2
		}
		return runMain()
	case "report":
		if help {
			fmt.Print(reportUsage)
			return 0
		}
		if len(args) == 1 {
			fmt.Fprint(os.Stderr, reportUsage)
			return 2
		}
		dirs, err := absolute(args[1:])
		if err == nil {
			err = toModuleRoot()
		}
		if err != nil {
			logf("error: %v", err)
			return 1
		}
		return reportMain(dirs)
	case "kernels":
		return kernelsCommand(args[1:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	}
	logf("unknown subcommand %q", args[0])
	fmt.Fprint(os.Stderr, usage)
	return 2
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// absolute makes paths absolute against the working directory.
func absolute(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	return out, nil
}

// toModuleRoot changes to the directory of the module's go.mod: go test,
// go tool benchstat and the vm/ scripts run from there.
func toModuleRoot() error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("not inside the tracebench module (go env GOMOD is %q)", gomod)
	}
	return os.Chdir(filepath.Dir(gomod))
}
