// Command tracebench is the operator's slow vfs_read tracer and a view of
// which tracing mechanisms the running kernel supports.
//
//	tracebench trace [flags]   print vfs_read calls slower than a threshold
//	tracebench list            mechanisms and whether this kernel runs each
//	tracebench help [COMMAND]  the help
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
  tracebench help [COMMAND]  this help, or a command's

Run "tracebench trace -h" for the flags of trace.
`

const listUsage = `Usage: tracebench list

Lists every tracing mechanism tracebench has, whether this kernel runs it and
why. As root each is loaded and attached, then closed at once; as another
user only the kernel's features are probed.
`

// helps are the help of each command.
var helps = map[string]string{"trace": traceUsage, "list": listUsage}

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
		return usageError(stderr, "", errors.New("want a command: trace, list or help"))
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "trace":
		return runTrace(ctx, rest, stdout, stderr)
	case "list":
		if err := parseNoFlags("list", rest); err != nil {
			return helpOr(stdout, stderr, "list", err)
		}
		return report(stderr, list(stdout, os.Geteuid()))
	case "-h", "-help", "--help":
		return printHelp(stdout, stderr, usage)
	case "help":
		return runHelp(rest, stdout, stderr)
	default:
		return usageError(stderr, "", fmt.Errorf("unknown command %q", cmd))
	}
}

func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseTrace(args)
	if err != nil {
		return helpOr(stdout, stderr, "trace", err)
	}
	return report(stderr, trace(ctx, opts, stdout, stderr))
}

// runHelp is "help [COMMAND]".
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		return printHelp(stdout, stderr, usage)
	case len(args) > 1:
		return usageError(stderr, "", fmt.Errorf("help: unexpected argument %q", args[1]))
	}
	help, ok := helps[args[0]]
	if !ok {
		return usageError(stderr, "", fmt.Errorf("help: unknown command %q", args[0]))
	}
	return printHelp(stdout, stderr, help)
}

// parseNoFlags parses the command line of a command that takes no flag
// nor argument; -h gives flag.ErrHelp.
func parseNoFlags(cmd string, args []string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// helpOr prints cmd's help for flag.ErrHelp (-h), else err as a usage
// error.
func helpOr(stdout, stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return printHelp(stdout, stderr, helps[cmd])
	}
	return usageError(stderr, cmd, err)
}

// printHelp writes the help asked for; one that cannot be written (a
// full disk, a closed stdout) is an error, as any other output is.
func printHelp(stdout, stderr io.Writer, help string) int {
	if _, err := io.WriteString(stdout, help); err != nil {
		return report(stderr, fmt.Errorf("writing the help: %w", err))
	}
	return exitOK
}

// usageError prints a bad command line's error and where the help of cmd
// ("" for tracebench itself) is: two lines, so that the error stays on
// screen.
func usageError(stderr io.Writer, cmd string, err error) int {
	name := strings.TrimSpace("tracebench " + cmd)
	fmt.Fprintf(stderr, "%s: %v\nRun '%s -h' for usage.\n", name, err, name)
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
