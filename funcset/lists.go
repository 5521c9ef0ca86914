package funcset

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"strings"
)

// FtraceEntry is one line of tracefs available_filter_functions: a
// function ftrace can patch, by name, with its module ("" for vmlinux).
// A name appears once per function of that name: static functions of
// one name in several objects appear several times.
type FtraceEntry struct {
	Name, Module string
}

// ParseFilterFunctions parses available_filter_functions ("name" or
// "name [module]" a line). An error names the first line of another
// shape.
func ParseFilterFunctions(r io.Reader) ([]FtraceEntry, error) {
	return parseEntries(r, "available_filter_functions", func(line string) (FtraceEntry, error) {
		name, module, err := nameAndModule(line)
		return FtraceEntry{Name: name, Module: module}, err
	})
}

// ParseKprobeBlacklist parses debugfs kprobes/blacklist
// ("0xSTART-0xEND<tab>name" or "... name [module]" a line) into the
// names of the functions kprobes refuse, with their modules.
func ParseKprobeBlacklist(r io.Reader) ([]FtraceEntry, error) {
	return parseEntries(r, "kprobes blacklist", func(line string) (FtraceEntry, error) {
		addrs, rest, ok := strings.Cut(line, "\t")
		start, end, okRange := strings.Cut(addrs, "-")
		if !ok || !okRange || !isHex(start) || !isHex(end) {
			return FtraceEntry{}, fmt.Errorf("%q is not \"0xSTART-0xEND<tab>function\"", line)
		}
		name, module, err := nameAndModule(rest)
		return FtraceEntry{Name: name, Module: module}, err
	})
}

// ParseKallsyms reads /proc/kallsyms ("ADDRESS TYPE name" or "... name
// [module]" a line) and returns the names it lists more than once, of
// any symbol type, vmlinux and modules alike, with how many times: the
// count trace_kprobe holds a kprobe's symbol to. An error names the first
// line of another shape.
func ParseKallsyms(r io.Reader) (map[string]int, error) {
	counts := map[string]int{}
	err := eachLine(r, func(n int, line string) error {
		fields := strings.Fields(line)
		module := len(fields) == 4 && strings.HasPrefix(fields[3], "[") && strings.HasSuffix(fields[3], "]")
		if len(fields) != 3 && !module || len(fields[1]) != 1 || !isHexDigits(fields[0]) {
			return fmt.Errorf("kallsyms line %d: %q is not \"ADDRESS TYPE symbol\" or \"ADDRESS TYPE symbol [module]\"", n, line)
		}
		counts[fields[2]]++
		return nil
	})
	maps.DeleteFunc(counts, func(_ string, n int) bool { return n < 2 })
	return counts, err
}

// parseEntries parses the lines of the list what with parse; an error
// names the list and the line.
func parseEntries(r io.Reader, what string, parse func(line string) (FtraceEntry, error)) ([]FtraceEntry, error) {
	var out []FtraceEntry
	err := eachLine(r, func(n int, line string) error {
		e, err := parse(line)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", what, n, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// ParseBTFList parses a list of BTF functions, "name" or
// "name<tab>variadic" a line, as WriteBTFList writes it; an error names
// a line holding anything else.
func ParseBTFList(r io.Reader) ([]BTFFunc, error) {
	var out []BTFFunc
	err := eachLine(r, func(n int, line string) error {
		name, flag, tab := strings.Cut(line, "\t")
		if !isSymbol(name) || tab && flag != "variadic" {
			return fmt.Errorf("BTF list line %d: %q is not \"function\" or \"function<tab>variadic\"", n, line)
		}
		out = append(out, BTFFunc{Name: name, Variadic: tab})
		return nil
	})
	return out, err
}

// WriteBTFList writes fns in ParseBTFList's format.
func WriteBTFList(w io.Writer, fns []BTFFunc) error {
	bw := bufio.NewWriter(w)
	for _, f := range fns {
		if f.Variadic {
			fmt.Fprintf(bw, "%s\tvariadic\n", f.Name)
		} else {
			fmt.Fprintln(bw, f.Name)
		}
	}
	return bw.Flush()
}

// nameAndModule splits "name" or "name [module]".
func nameAndModule(s string) (name, module string, err error) {
	fields := strings.Fields(s)
	switch {
	case len(fields) == 1 && isSymbol(fields[0]):
		return fields[0], "", nil
	case len(fields) == 2 && isSymbol(fields[0]) && len(fields[1]) > 2 &&
		strings.HasPrefix(fields[1], "[") && strings.HasSuffix(fields[1], "]") &&
		isModule(fields[1][1:len(fields[1])-1]):
		return fields[0], fields[1][1 : len(fields[1])-1], nil
	}
	return "", "", fmt.Errorf("%q is not \"function\" or \"function [module]\"", s)
}

// isSymbol reports whether s is a kernel symbol name as kallsyms prints
// them: letters, digits, '_', and the '.' of compiler clones
// (".isra.0", ".constprop.0", ".cold").
func isSymbol(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '.' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isModule reports whether s is a module name: letters, digits, '_', '-'
// (9pnet, nf_conntrack).
func isModule(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

func isHex(s string) bool {
	digits, ok := strings.CutPrefix(s, "0x")
	return ok && isHexDigits(digits)
}

func isHexDigits(digits string) bool {
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// eachLine calls f with each non-empty line (and its 1-based number).
func eachLine(r io.Reader, f func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" {
			continue
		}
		if err := f(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}
