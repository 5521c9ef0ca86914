package funcset

import (
	"fmt"
	"path"
	"slices"
)

// Select returns the set name of candidates, in order, each with how it
// was found: members those every kind attaches (by the lists and
// inv.Refused), the others excluded with why, the reason how it was found
// appended. Errors: no kind, a candidate given twice.
func (inv *Inventory) Select(name, method string, candidates []Entry, kinds []Kind) (*Set, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("function set %s: no attach kind", name)
	}
	s := &Set{Name: name, Kernel: inv.Kernel, Kinds: kinds, Method: method, Inputs: inv.inputs()}
	fns := inv.functions()
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c.Name] {
			return nil, fmt.Errorf("function set %s: %s given twice", name, c.Name)
		}
		seen[c.Name] = true
		s.add(c, inv.judge(fns, kinds, c.Name))
	}
	return s, nil
}

// add makes c a member, or an exclusion when why says it cannot be one.
func (s *Set) add(c Entry, why string) {
	if why == "" {
		s.Members = append(s.Members, c)
		return
	}
	if c.Reason != "" {
		why += "; " + c.Reason
	}
	s.Excluded = append(s.Excluded, Entry{Name: c.Name, Reason: why})
}

// judge returns why kinds cannot all attach the vmlinux function name, or
// "" when they can.
func (inv *Inventory) judge(fns map[string]*function, kinds []Kind, name string) string {
	f, ok := fns[name]
	if !ok {
		return "in neither BTF nor available_filter_functions of the inventory"
	}
	return inv.why(kinds, f)
}

// Glob returns the set of the vmlinux functions in both BTF and
// available_filter_functions whose names match pattern (path.Match: *,
// ?, [...] and \), by name, as Select judges them: the caller decides
// what an exclusion or an empty set means. Errors: a malformed pattern,
// naming it.
func (inv *Inventory) Glob(pattern string, kinds []Kind) (*Set, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("function pattern %q: %w", pattern, err)
	}
	var matched []Entry
	for _, f := range inv.universe() {
		if ok, _ := path.Match(pattern, f.name); ok {
			matched = append(matched, Entry{Name: f.name, Reason: "matches " + pattern})
		}
	}
	return inv.Select("glob", fmt.Sprintf("the vmlinux functions in BTF and available_filter_functions matching %q",
		pattern), matched, kinds)
}

// OutsideFtrace returns the vmlinux BTF functions ftrace cannot patch
// (not in available_filter_functions: notrace, __init, inlined), in rank
// order: no kind attaches them.
func (inv *Inventory) OutsideFtrace() []string {
	var names []string
	for name, f := range inv.functions() {
		if f.btf != nil && f.ftrace == 0 {
			names = append(names, name)
		}
	}
	sortByRank(names)
	return slices.Clip(names)
}

// OwnRefusals returns the vmlinux functions the lists refuse to kind by a
// rule of kind's own (for kprobe: the kprobes blacklist, a name kallsyms
// shares), which another kind attaches, in rank order: what the kernel
// refuses kind alone, for kinds it is not asked about in bulk.
func (inv *Inventory) OwnRefusals(kind Kind) []string {
	var names []string
	for name, f := range inv.functions() {
		if refusal(kind, f) == "" {
			continue
		}
		for _, other := range Kinds {
			if other != kind && refusal(other, f) == "" {
				names = append(names, name)
				break
			}
		}
	}
	sortByRank(names)
	return slices.Clip(names)
}
