package funcset

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// All, as Draw's n, asks for every candidate.
const All = -1

// Sizes are the n<N> sets the growth benchmarks use.
var Sizes = []int{1, 10, 100, 1000, 10000}

// rankSalt starts the string hashed to order candidates; changing it
// draws other sets.
const rankSalt = "tracebench funcset 1\x00"

// rank orders candidates pseudo-randomly but reproducibly (FNV-1a of
// rankSalt + name), so a set spreads over the kernel's subsystems rather
// than one prefix, and every set is a prefix of the larger ones.
func rank(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(rankSalt + name))
	return h.Sum64()
}

// Draw returns "n<N>": the first n, in rank order, of the vmlinux
// functions in both BTF and available_filter_functions that every kind
// attaches, away from the hot path: without readpath's functions (members
// and excluded) and those inv.Quiet saw called. n == All returns "all",
// every function every kind attaches, hot ones included. Each candidate
// left out is listed with its reason. Errors: no quiet measurement or
// readpath for a n<N> set, n beyond the candidates, n < 1 other than All.
func (inv *Inventory) Draw(n int, kinds []Kind, readpath *Set) (*Set, error) {
	name := fmt.Sprintf("n%d", n)
	if n == All {
		name = "all"
	} else if n < 1 {
		return nil, fmt.Errorf("function set of %d functions: want at least 1, or All", n)
	} else if inv.Quiet == nil || readpath == nil {
		return nil, fmt.Errorf("function set %s: the hot path is unknown (want a quiet measurement and readpath)", name)
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("function set %s: no attach kind", name)
	}
	s := &Set{Name: name, Kernel: inv.Kernel, Kinds: kinds}
	var candidates []string
	for _, f := range inv.universe() {
		why := inv.why(kinds, f)
		if why == "" && n != All {
			why = ownRun(kinds, f)
		}
		if why == "" && n != All {
			why = hotReason(inv.Quiet, readpath, f.name)
		}
		if why != "" {
			s.Excluded = append(s.Excluded, Entry{Name: f.name, Reason: why})
			continue
		}
		candidates = append(candidates, f.name)
	}
	sortByRank(candidates)
	if n == All {
		n = len(candidates)
	}
	if n > len(candidates) {
		return nil, fmt.Errorf("function set %s: only %d candidates", name, len(candidates))
	}
	for i, c := range candidates[:n] {
		s.Members = append(s.Members, Entry{Name: c, Reason: fmt.Sprintf("rank %d of %d candidates", i+1, len(candidates))})
	}
	s.Method = drawMethod(n == len(candidates) && name == "all", len(candidates))
	s.Inputs = inv.inputs()
	return s, nil
}

// sortByRank sorts names by rank, then by name.
func sortByRank(names []string) {
	type ranked struct {
		rank uint64
		name string
	}
	r := make([]ranked, len(names))
	for i, n := range names {
		r[i] = ranked{rank(n), n}
	}
	slices.SortFunc(r, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.name, b.name))
	})
	for i := range r {
		names[i] = r[i].name
	}
}

// universe returns the vmlinux functions in both BTF and
// available_filter_functions, by name.
func (inv *Inventory) universe() []*function {
	var out []*function
	for _, f := range inv.functions() {
		if f.btf != nil && f.ftrace > 0 {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *function) int { return strings.Compare(a.name, b.name) })
	return out
}

// hotReason says why name is on the hot path: in readpath, or called by
// the quiet system; "" if neither.
func hotReason(q *Quiet, readpath *Set, name string) string {
	if readpath.Has(name) || slices.ContainsFunc(readpath.Excluded, func(e Entry) bool { return e.Name == name }) {
		return "hot path: in readpath"
	}
	if calls := q.Calls[name]; calls > 0 {
		return fmt.Sprintf("hot path: a quiet system called it %d times in %v", calls, q.Window)
	}
	return ""
}

func drawMethod(all bool, candidates int) string {
	if all {
		return fmt.Sprintf("every one of the %d vmlinux functions in BTF and available_filter_functions that every kind attaches, "+
			"in FNV-1a order of %q + name", candidates, rankSalt[:len(rankSalt)-1])
	}
	return fmt.Sprintf("the first of %d candidates in FNV-1a order of %q + name; candidates: vmlinux functions in BTF and "+
		"available_filter_functions that every kind attaches, less readpath and what a quiet system called",
		candidates, rankSalt[:len(rankSalt)-1])
}

// inputs describes the lists inv holds.
func (inv *Inventory) inputs() string {
	vmlinux := 0
	for _, e := range inv.Ftrace {
		if e.Module == "" {
			vmlinux++
		}
	}
	parts := []string{
		fmt.Sprintf("vmlinux BTF: %d functions", len(inv.BTF)),
		fmt.Sprintf("available_filter_functions: %d vmlinux lines of %d", vmlinux, len(inv.Ftrace)),
	}
	if inv.KprobesMissing != "" {
		parts = append(parts, "kprobes blacklist: none, "+inv.KprobesMissing)
	} else {
		parts = append(parts, fmt.Sprintf("kprobes blacklist: %d lines", len(inv.KprobeBlacklist)))
	}
	if inv.SharedSymbols != nil {
		parts = append(parts, fmt.Sprintf("kallsyms: %d names shared by several symbols", len(inv.SharedSymbols)))
	}
	if inv.Quiet != nil {
		parts = append(parts, fmt.Sprintf("quiet system: %d functions called in %v", len(inv.Quiet.Calls), inv.Quiet.Window))
	}
	var probed []string
	for _, k := range Kinds {
		if r, ok := inv.Refused[k]; ok {
			probed = append(probed, fmt.Sprintf("%s %d", k, len(r)))
		}
	}
	if len(probed) > 0 {
		parts = append(parts, "refused when attached: "+strings.Join(probed, ", "))
	}
	return strings.Join(parts, "; ")
}
