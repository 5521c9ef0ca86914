// Command tracebench is the operator's slow vfs_read tracer and a view of
// which tracing mechanisms the running kernel supports.
//
//	tracebench trace [flags]   print vfs_read calls slower than a threshold
//	tracebench list            mechanisms and whether this kernel runs each
//
// See README.md in this directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"tracebench/tracers"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // tracing could not run or failed
	exitUsage = 2 // bad command line, as the flag package does
)

const usage = `Usage:
  tracebench trace [flags]   print vfs_read calls slower than a threshold
  tracebench list            tracing mechanisms and whether this kernel runs each

Run "tracebench trace -h" for the flags of trace.
`

func main() {
	// Signals and a stdout without reader end tracing early (stop.go).
	ctx, cancel := context.WithCancelCause(context.Background())
	watchSignals(cancel, os.Stderr)
	watchOutput(os.Stdout, cancel)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process around it: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "trace":
		return runTrace(ctx, rest, stdout, stderr)
	case "list":
		if len(rest) > 0 {
			return usageError(stderr, "tracebench list", fmt.Errorf("unexpected argument %q", rest[0]), usage)
		}
		return report(stderr, list(stdout, os.Geteuid()))
	case "-h", "-help", "--help", "help":
		return printHelp(stdout, stderr, usage)
	default:
		return usageError(stderr, "tracebench", fmt.Errorf("unknown command %q", cmd), usage)
	}
}

func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseTrace(args)
	if errors.Is(err, flag.ErrHelp) {
		return printHelp(stdout, stderr, traceUsage)
	}
	if err != nil {
		return usageError(stderr, "tracebench trace", err, traceUsage)
	}
	return report(stderr, trace(ctx, opts, stdout, stderr))
}

// printHelp writes the help asked for; one that cannot be written (a
// full disk, a closed stdout) is an error, as any other output is.
func printHelp(stdout, stderr io.Writer, help string) int {
	if _, err := io.WriteString(stdout, help); err != nil {
		return report(stderr, fmt.Errorf("writing the help: %w", err))
	}
	return exitOK
}

func usageError(stderr io.Writer, cmd string, err error, usage string) int {
	fmt.Fprintf(stderr, "%s: %v\n\n%s", cmd, err, usage)
	return exitUsage
}

// report prints err, if any, as one line and returns the exit status.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "tracebench: %s\n", describe(err, os.Geteuid()))
	return exitError
}

// describe turns an error into the one sentence an operator needs: the
// missing kernel feature, missing privileges, or the error's first line
// (a verifier log, for one, runs to many lines).
func describe(err error, euid int) string {
	var unsupported *tracers.UnsupportedError
	switch {
	case errors.As(err, &unsupported):
		return unsupported.Error()
	case errors.Is(err, os.ErrPermission) && euid != 0:
		return fmt.Sprintf("tracing vfs_read needs root (CAP_BPF and CAP_PERFMON); this process runs as uid %d", euid)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	return first
}
