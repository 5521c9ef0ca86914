package main

import (
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"tracebench/funcset"
	"tracebench/tracers"
)

// functionsSpec is --functions: a glob over the kernel's function names,
// or @FILE, a file of function names (funcset.Read: a plain list or a
// function set). The zero value traces vfs_read alone.
type functionsSpec struct {
	pattern string
	file    string
}

func (f functionsSpec) given() bool { return f.pattern != "" || f.file != "" }

func (f functionsSpec) String() string {
	if f.file != "" {
		return "@" + f.file
	}
	return f.pattern
}

// parseFunctions parses a --functions value. Errors name the bad value:
// an empty one, @ without a path, a malformed pattern (path.Match's
// syntax), a pattern holding blanks (no function name does).
func parseFunctions(s string) (functionsSpec, error) {
	if file, ok := strings.CutPrefix(s, "@"); ok {
		if file == "" {
			return functionsSpec{}, fmt.Errorf("want @FILE, the path of a file of function names, after @")
		}
		return functionsSpec{file: file}, nil
	}
	switch _, err := path.Match(s, ""); {
	case s == "":
		return functionsSpec{}, fmt.Errorf("want a pattern of kernel function names (e.g. 'vfs_*') or @FILE")
	case err != nil:
		return functionsSpec{}, fmt.Errorf("pattern %q is malformed (want *, ?, [...] and \\ as in shell globs): %v", s, err)
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return functionsSpec{}, fmt.Errorf("pattern %q holds a blank or control character, which no function name has", s)
	}
	return functionsSpec{pattern: s}, nil
}

// functionsFlag is the flag.Value of --functions.
type functionsFlag struct{ v *functionsSpec }

func (f functionsFlag) Set(s string) error {
	spec, err := parseFunctions(s)
	if err != nil {
		return err
	}
	*f.v = spec
	return nil
}

func (f functionsFlag) String() string {
	if f.v == nil {
		return ""
	}
	return f.v.String()
}

// multiMechanisms are what --mechanism auto tries with --functions, best
// first (registry order): those that trace many functions at once, count
// in BPF and observe every field of Stats and Event.
func multiMechanisms() []tracers.Mechanism {
	var ms []tracers.Mechanism
	for _, m := range tracers.Mechanisms() {
		b := m.Can.Blind
		if m.Can.Functions.Many && m.Can.Aggregates() && b.Stats|b.StatsAtZero|b.Event == 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// functionSets builds the functions --functions names for each mechanism
// tried, from one reading of the running kernel's lists.
type functionSets struct {
	spec    functionsSpec
	verbose io.Writer
	inv     func() (*funcset.Inventory, error)
	file    func() (*funcset.Set, error)
}

// newFunctionSets reads the kernel's lists with kernel (funcset.ReadKernel,
// or a test's) when a set is first asked for.
func newFunctionSets(spec functionsSpec, kernel func() (*funcset.Inventory, error), verbose io.Writer) *functionSets {
	return &functionSets{spec: spec, verbose: verbose, inv: sync.OnceValues(kernel),
		file: sync.OnceValues(func() (*funcset.Set, error) { return funcset.ReadFile(spec.file) })}
}

// forMechanism returns the functions to trace with m, judged for its
// attach kinds against the kernel's lists: the glob's matches that the
// kinds attach (the others are noted on notes), or every member of the
// file, any of which the kinds cannot attach being an error. An empty
// set is an error naming the pattern or file; an error reading the file
// names its line and rule, nothing of its content but function names
// (funcset.Read). The kernel may still refuse a function at Start
// (tracers.FunctionsRefusedError names it).
func (fs *functionSets) forMechanism(m tracers.Mechanism, notes io.Writer) ([]string, error) {
	if fs.spec.file == "" {
		inv, err := fs.kernel()
		if err != nil {
			return nil, err
		}
		return fs.globbed(inv, m, notes)
	}
	return fs.listed(m, notes)
}

// kernel returns the kernel's lists.
func (fs *functionSets) kernel() (*funcset.Inventory, error) {
	inv, err := fs.inv()
	if err != nil {
		return nil, fmt.Errorf("--functions %s: reading the kernel's functions: %w", fs.spec, err)
	}
	return inv, nil
}

// listed returns the members of the file, which m's kinds must all attach.
// The file is read first: what is wrong with it is so on any kernel.
func (fs *functionSets) listed(m tracers.Mechanism, notes io.Writer) ([]string, error) {
	file, err := fs.file()
	if err != nil {
		return nil, fmt.Errorf("--functions: %w", err) // it starts with the path
	}
	if len(file.Members) == 0 {
		return nil, fmt.Errorf("--functions %s: the set has no member (%d excluded)", fs.spec, len(file.Excluded))
	}
	inv, err := fs.kernel()
	if err != nil {
		return nil, err
	}
	kinds := m.Can.Functions.Kinds
	// The names alone: the file's reasons are its content, not the kernel's.
	candidates := make([]funcset.Entry, len(file.Members))
	for i, e := range file.Members {
		candidates[i] = funcset.Entry{Name: e.Name}
	}
	set, err := inv.Select("file", "the members of "+fs.spec.file, candidates, kinds)
	if err != nil {
		return nil, fmt.Errorf("--functions %s: %w", fs.spec, err)
	}
	if len(set.Excluded) > 0 {
		return nil, fmt.Errorf("--functions %s: %s cannot attach %d of the set's %d members with %s on this kernel "+
			"(%s): %s", fs.spec, m.Name, len(set.Excluded), len(file.Members), kindList(kinds), inv.Kernel,
			entries(set.Excluded, 4))
	}
	if file.Kernel != "" && file.Kernel != inv.Kernel {
		fmt.Fprintf(notes, "tracebench: --functions %s: the set was built on %s; this kernel (%s) has each of "+
			"its %d members\n", fs.spec, file.Kernel, inv.Kernel, len(file.Members))
	}
	return set.Functions(), nil
}

// globbed returns the functions of the pattern that m's kinds attach.
func (fs *functionSets) globbed(inv *funcset.Inventory, m tracers.Mechanism, notes io.Writer) ([]string, error) {
	kinds := m.Can.Functions.Kinds
	set, err := inv.Glob(fs.spec.pattern, kinds)
	if err != nil {
		return nil, fmt.Errorf("--functions: %w", err)
	}
	switch {
	case len(set.Members) == 0 && len(set.Excluded) == 0:
		return nil, fmt.Errorf("--functions %s: no function of this kernel's BTF and available_filter_functions "+
			"matches", fs.spec)
	case len(set.Members) == 0:
		return nil, fmt.Errorf("--functions %s: %s can attach none of the %d matching functions with %s: %s",
			fs.spec, m.Name, len(set.Excluded), kindList(kinds), entries(set.Excluded, 4))
	case len(set.Members) > tracers.MaxFunctions:
		return nil, fmt.Errorf("--functions %s: %d functions match, more than the %d a tracer takes", fs.spec,
			len(set.Members), tracers.MaxFunctions)
	}
	if len(set.Excluded) > 0 {
		fmt.Fprintf(notes, "tracebench: --functions %s: %d of the %d matching functions left out: %s cannot attach "+
			"them with %s: %s\n", fs.spec, len(set.Excluded), len(set.Members)+len(set.Excluded), m.Name,
			kindList(kinds), entries(set.Excluded, 4))
	}
	for _, e := range set.Excluded {
		fmt.Fprintf(fs.verbose, "tracebench: left out %s: %s\n", e.Name, e.Reason)
	}
	return set.Functions(), nil
}

// entries lists the first n entries with their reasons, and how many more.
func entries(es []funcset.Entry, n int) string {
	var parts []string
	for _, e := range es[:min(n, len(es))] {
		parts = append(parts, e.Name+" ("+e.Reason+")")
	}
	if len(es) > n {
		parts = append(parts, fmt.Sprintf("and %d more", len(es)-n))
	}
	return strings.Join(parts, ", ")
}

func kindList(kinds []funcset.Kind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, " and ")
}

// functionsText names the traced functions for the banner: "vfs_read"
// without --functions, else "3 functions matching vfs_* (vfs_read,
// vfs_readv, vfs_readlink)" or "2 functions of FILE (...)", the first
// four named.
func functionsText(spec functionsSpec, functions []string) string {
	if !spec.given() {
		return strings.Join(tracers.Config{Functions: functions}.TracedFunctions(), "")
	}
	counted := fmt.Sprintf("%d functions", len(functions))
	if len(functions) == 1 {
		counted = "1 function"
	}
	source := "matching " + spec.pattern
	if spec.file != "" {
		source = "of " + spec.file
	}
	shown := functions[:min(4, len(functions))]
	more := ""
	if len(functions) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(functions)-len(shown))
	}
	return fmt.Sprintf("%s %s (%s%s)", counted, source, strings.Join(shown, ", "), more)
}
