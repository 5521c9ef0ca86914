// Package funcset builds the sets of kernel functions a tracer attaches to
// at once: readpath, the functions a 1-byte read(2) passes through, found
// at run time; and N functions drawn deterministically from those the
// kernel lets every attach kind trace. Each set says why each function is
// in it and why each candidate left out is, and is kept as a text file
// beside the results it was measured with (see Write).
package funcset

import "slices"

// Set is a list of kernel functions with the reasons behind it.
type Set struct {
	// Name is "readpath", "n<N>" (e.g. "n100") or "all"; "list" for a
	// plain list of names (Read).
	Name string
	// Kernel is the uname release of the kernel the set was built on, ""
	// for a list.
	Kernel string
	// Kinds are the attach kinds every member attaches with, none for a
	// list.
	Kinds []Kind
	// Method says in one line how the members were found or drawn.
	Method string
	// Inputs says in one line what the set was built from (sizes of the
	// kernel's lists, the quiet window).
	Inputs string
	// Members are the functions, in order (for drawn sets, draw order:
	// every smaller set of the same candidates is a prefix).
	Members []Entry
	// Excluded are the candidates left out, each with its reason.
	Excluded []Entry
}

// Entry is one function of a set, with why it is in or out.
type Entry struct {
	Name   string
	Reason string
}

// Functions returns the members' names, in order.
func (s *Set) Functions() []string {
	names := make([]string, len(s.Members))
	for i, e := range s.Members {
		names[i] = e.Name
	}
	return names
}

// Has reports whether name is a member.
func (s *Set) Has(name string) bool {
	return slices.ContainsFunc(s.Members, func(e Entry) bool { return e.Name == name })
}
