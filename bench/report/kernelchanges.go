package report

import (
	"slices"
	"strconv"
	"strings"
)

// kernelChange is a change of a tracing path whose authors measured it on
// bare metal, which the perf matrix answers from its columns.
type kernelChange struct {
	Name   string
	Landed string // where and when it landed
	// First is the first release with it; a pair of columns brackets it
	// when the first is older and the second is not.
	First []int
	// Series are the floors (attach kinds) and mechanisms whose per-call
	// cost it changes; none for a change of attach and detach only.
	Floors, Mechanisms []string
	// Attach: it changes attaching and detaching many functions (Start,
	// Close), which the overhead family does not measure.
	Attach bool
	// Authors is what its authors measured, and Ref where they posted it.
	Authors, Ref string
}

// knownChanges are the changes issue 37 names, oldest first.
var knownChanges = []kernelChange{
	{
		Name: "kprobe_multi attach regression", Landed: "bpf-next, Dec 2023 (6.8 merge window)", First: []int{6, 8},
		Attach: true, Authors: "56140 functions: attach 89.2 s, detach 13.2 s", Ref: "lore ZXcIN-odFOCWX8Ox@krava",
	},
	{
		Name: "fprobe on the function graph tracer", Landed: "6.14", First: []int{6, 14},
		Floors:     []string{"kprobe.session", "kprobe.multi+kretprobe.multi"},
		Mechanisms: []string{"kprobe-session", "kprobe-session-multi", "kprobe-kretprobe-multi"},
		Authors:    "trig-kprobe-multi 8.538 → 7.221 M/s", Ref: "lore ZuHhD35xHpw2kCC-@krava",
	},
	{
		Name: "fprobe rhltable", Landed: "2025-08 series (6.18 merge window)", First: []int{6, 18},
		Floors:     []string{"kprobe.session", "kprobe.multi+kretprobe.multi"},
		Mechanisms: []string{"kprobe-session", "kprobe-session-multi", "kprobe-kretprobe-multi"},
		Authors:    "kprobe-multi-all 12.15 → 46.38 M/s, kretprobe-multi-all 9.67 → 24.44 M/s",
		Ref:        "lore 20250817024607.296117-1-dongml2@chinatelecom.cn",
	},
	{
		Name: "BPF trampoline \"jmp\" mode", Landed: "bpf-next, Nov 2025 (merge acf8726466a6), between 6.18 and 7.0",
		First:  []int{6, 19},
		Floors: []string{"fexit", "fentry+fexit", "fsession", "fsession.multi", "fentry.multi+fexit.multi"},
		Mechanisms: []string{"fentry-fexit", "fentry-fexit-taskstorage", "fentry-fexit-multi", "fentry-fexit-each",
			"fsession", "fsession-multi", "fsession-each"},
		Authors: "fexit 76 → 130 M/s", Ref: "lore 20251114092450.172024-1-dongml2@chinatelecom.cn",
	},
	{
		Name: "tracing_multi attach fix", Landed: "2026-09, after 7.2 (kernel-patches/bpf#13691)", First: []int{7, 3},
		Attach: true, Authors: "55227 functions: attach 1.563 → 0.798 s, detach 0.256 s", Ref: "kernel-patches/bpf#13691",
	},
}

// FirstRelease is First as a version string.
func (k kernelChange) FirstRelease() string {
	var s []string
	for _, n := range k.First {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ".")
}

// brackets reports whether from lacks the change and to has it.
func (k kernelChange) brackets(from, to *Column) bool {
	return slices.Compare(from.version, k.First) < 0 && slices.Compare(to.version, k.First) >= 0
}

// actsOn reports whether the change acts on s's per-call cost.
func (k kernelChange) actsOn(s Series) bool {
	if s.Case == floorCase {
		return slices.Contains(k.Floors, s.Mechanism)
	}
	return slices.Contains(k.Mechanisms, s.Mechanism)
}

// AnchorAnswer is what the columns say about one known change.
type AnchorAnswer struct {
	kernelChange
	// From and To are the measured generic kernels that bracket it, the
	// closest on either side; nil, and Missing says why, without them.
	From, To *Column
	Missing  string
	// Steps are the series it acts on, measured in From and To.
	Steps []Change
}

// Between names the releases the bracketing pair spans besides the change.
func (a AnchorAnswer) Between() string {
	return a.From.Version() + " → " + a.To.Version()
}

func (pm *PerfMatrix) answerAnchors() []AnchorAnswer {
	var out []AnchorAnswer
	for _, k := range knownChanges {
		a := AnchorAnswer{kernelChange: k}
		for _, c := range pm.Columns {
			if c.flavour != "" {
				continue
			}
			if slices.Compare(c.version, k.First) < 0 {
				a.From = c
			} else if a.To == nil {
				a.To = c
			}
		}
		switch {
		case k.Attach:
			a.Missing = "it changes attaching and detaching many functions (Start and Close), which bench-kernels " +
				"does not measure: only the per-call overhead family runs per kernel"
		case a.From == nil || a.To == nil:
			a.Missing = "no measured kernel on one side of " + k.FirstRelease()
		default:
			for _, s := range pm.series() {
				before, okA := a.From.Overhead(s)
				after, okB := a.To.Overhead(s)
				if k.actsOn(s) && okA && okB {
					a.Steps = append(a.Steps, Change{Series: s, From: a.From, To: a.To, Before: before, After: after})
				}
			}
			if len(a.Steps) == 0 {
				a.Missing = "neither kernel of the pair measured what it acts on"
			}
		}
		if a.Missing != "" {
			a.From, a.To = nil, nil
		}
		out = append(out, a)
	}
	return out
}

// Disjoint reports whether the step's intervals do not overlap.
func (c Change) Disjoint() bool { return c.Before.hi < c.After.lo || c.After.hi < c.Before.lo }
