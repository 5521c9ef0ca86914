// Command bpfgen compiles one BPF C source with bpf2go for every
// architecture of internal/arches (its GOARCH as the bpf2go target, which
// defines its __TARGET_ARCH_*, as BPF_KPROBE needs), with the project's
// compiler and flags. Each BPF object has one go:generate line, in the Go
// file that loads it:
//
//	//go:generate go run tracebench/internal/bpfgen [-dir DIR] IDENT SOURCE [CFLAG...]
//
// IDENT and SOURCE are bpf2go's; DIR is the output directory, whose name is
// the generated package's (default: the directory of the go:generate line
// and its package); CFLAGs follow the common ones. `make generate` runs
// every such line.
//
// Adding an architecture is one line of internal/arches/arches.tsv: `make
// generate` writes its objects and TestEveryArchBuilds builds and vets the
// module for it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"tracebench/internal/arches"
)

// cc is the compiler `make generate` installs (vm/deps.sh --build).
const cc = "clang-19"

// cflags follow -I<SOURCE's directory>: -mcpu=v3 for atomics and 32-bit
// jumps; -Wno-missing-declarations hides bpftool 7.1 misdumping unused
// anonymous members of 7.2 types in bpf/vmlinux.h.
var cflags = []string{"-mcpu=v3", "-g", "-O2", "-Wno-missing-declarations"}

func main() {
	dir := flag.String("dir", "", "output directory and package (default: the current one)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: bpfgen [-dir DIR] IDENT SOURCE [CFLAG...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	cmd := exec.Command("go", bpf2goArgs(*dir, flag.Arg(0), flag.Arg(1), flag.Args()[2:])...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "bpfgen: %s %s: %v\n", flag.Arg(0), flag.Arg(1), err)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		os.Exit(1)
	}
}

// bpf2goArgs are `go`'s arguments that run bpf2go for ident and source.
func bpf2goArgs(dir, ident, source string, extra []string) []string {
	args := []string{"tool", "bpf2go", "-cc", cc, "-target", strings.Join(arches.GOARCHes(), ","), "-no-global-types"}
	if dir != "" {
		args = append(args, "-go-package", filepath.Base(dir), "-output-dir", dir)
	}
	args = append(args, ident, source, "--", "-I"+filepath.Dir(source))
	return append(append(args, cflags...), extra...)
}
