package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tracebench/bench/suite"
)

// kernelChange is a change of a tracing path whose authors measured it on
// bare metal, which the perf matrix answers from its columns.
type kernelChange struct {
	Name   string
	Landed string // where and when it landed
	// First is the first release with it; a pair of columns brackets it
	// when the first is older and the second is not.
	First []int
	// Kinds are the attach kinds whose per-call path it changes: it acts
	// on every floor and mechanism attaching with one of them. None for a
	// change of attach and detach only.
	Kinds []string
	// Attach: it changes attaching and detaching many functions (Start
	// and Close of the growth family) with Kinds, not the per-call path;
	// AttachBefore and AttachAfter are its authors' attach times (s), 0
	// where they posted no before.
	Attach                    bool
	AttachBefore, AttachAfter float64
	// Authors is what its authors measured, and Ref where they posted it.
	Authors, Ref string
	// RateBefore and RateAfter are the rate (M/s) of Authors that the
	// per-call figures compare with: a call's time is their inverse; 0
	// for a change of attaching only.
	RateBefore, RateAfter float64
}

// BareMetalShare is the change of a call's time its authors measured,
// relative: RateBefore / RateAfter - 1.
func (k kernelChange) BareMetalShare() float64 { return k.RateBefore/k.RateAfter - 1 }

// fprobeKinds are the attach kinds served by fprobe; trampolineKinds
// those served by a BPF trampoline.
var (
	fprobeKinds     = []string{"kprobe.session", "kprobe.multi", "kretprobe.multi"}
	trampolineKinds = []string{"fentry", "fexit", "fsession", "fentry.multi", "fexit.multi", "fsession.multi"}
	// tracingMultiKinds attach many functions with one tracing_multi link.
	tracingMultiKinds = []string{"fentry.multi", "fexit.multi", "fsession.multi"}
)

// knownChanges are the changes issue 37 names, oldest first.
var knownChanges = []kernelChange{
	{
		Name: "kprobe_multi attach regression", Landed: "bpf-next, Dec 2023 (6.8 merge window)", First: []int{6, 8},
		Attach: true, Kinds: fprobeKinds, Authors: "56140 functions: attach 89.2 s, detach 13.2 s", Ref: "lore ZXcIN-odFOCWX8Ox@krava",
	},
	{
		Name: "fprobe on the function graph tracer", Landed: "6.14", First: []int{6, 14}, Kinds: fprobeKinds,
		Authors: "trig-kprobe-multi 8.538 → 7.221 M/s", Ref: "lore ZuHhD35xHpw2kCC-@krava",
		RateBefore: 8.538, RateAfter: 7.221,
	},
	{
		Name: "fprobe rhltable", Landed: "2025-08 series (6.18 merge window)", First: []int{6, 18}, Kinds: fprobeKinds,
		Authors:    "kprobe-multi-all 12.15 → 46.38 M/s, kretprobe-multi-all 9.67 → 24.44 M/s",
		Ref:        "lore 20250817024607.296117-1-dongml2@chinatelecom.cn",
		RateBefore: 12.15, RateAfter: 46.38,
	},
	{
		Name: "BPF trampoline \"jmp\" mode", Landed: "bpf-next, Nov 2025 (merge acf8726466a6), between 6.18 and 7.0",
		First: []int{6, 19}, Kinds: trampolineKinds,
		Authors: "fexit 76 → 130 M/s", Ref: "lore 20251114092450.172024-1-dongml2@chinatelecom.cn",
		RateBefore: 76, RateAfter: 130,
	},
	{
		Name: "tracing_multi attach fix", Landed: "2026-09, after 7.2 (kernel-patches/bpf#13691)", First: []int{7, 3},
		Attach: true, Kinds: tracingMultiKinds, AttachBefore: 1.563, AttachAfter: 0.798,
		Authors: "55227 functions: attach 1.563 → 0.798 s, detach 0.256 s", Ref: "kernel-patches/bpf#13691",
	},
}

// sessionPairs are the floors of the one-program session designs, each
// with the floor of the two-program design it replaces: the matrix shows
// the ratio of their overheads per kernel.
var sessionPairs = []ratioPair{{"fsession", "fentry+fexit"}, {"kprobe.session", "kprobe+kretprobe"}}

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

// actsOn reports whether the change acts on s's per-call cost in column c:
// a floor or mechanism attaching with one of its kinds.
func (k kernelChange) actsOn(s Series, c *Column) bool {
	if k.Attach {
		return false
	}
	kinds := suite.FloorKinds(s.Mechanism)
	if s.Case != suite.FloorCase {
		kinds = c.kinds(s.Mechanism)
	}
	return k.actsOnKinds(kinds)
}

// actsOnKinds reports whether the change acts on one of kinds.
func (k kernelChange) actsOnKinds(kinds []string) bool {
	return slices.ContainsFunc(kinds, func(kind string) bool { return slices.Contains(k.Kinds, kind) })
}

// AnchorAnswer is what the columns say about one known change.
type AnchorAnswer struct {
	kernelChange
	// From and To are the measured generic kernels that bracket it, the
	// closest on either side; nil, and Missing says why, without them.
	From, To *Column
	Missing  string
	// Steps are the series it acts on, measured in From and To;
	// AttachSteps, for a change of attaching, the growth measures.
	Steps       []Change
	AttachSteps []AttachStep
}

// Compilers names the bracketing kernels' compilers where they differ.
func (a AnchorAnswer) Compilers() string { return compilersDiffer(a.From, a.To) }

// Between names the releases the bracketing pair spans besides the change.
func (a AnchorAnswer) Between() string {
	return a.From.Version() + " → " + a.To.Version()
}

func (pm *PerfMatrix) answerAnchors() []AnchorAnswer {
	var out []AnchorAnswer
	for _, k := range knownChanges {
		a := AnchorAnswer{kernelChange: k}
		for _, c := range pm.Columns {
			if c.flavour != "" || k.Attach && c.growth == nil {
				continue
			}
			if slices.Compare(c.version, k.First) < 0 {
				a.From = c
			} else if a.To == nil {
				a.To = c
			}
		}
		switch {
		case a.From == nil || a.To == nil:
			a.Missing = "no measured kernel on one side of " + k.FirstRelease()
			if k.Attach {
				a.Missing = "no kernel with a growth run (Start and Close) on one side of " + k.FirstRelease()
			}
		case k.Attach:
			if a.AttachSteps = pm.attachSteps(k, a.From, a.To); len(a.AttachSteps) == 0 {
				a.Missing = "no mechanism attaching with " + strings.Join(k.Kinds, ", ") + " has Start or Close at one set in both kernels of the pair"
			}
		default:
			for _, s := range pm.series() {
				before, okA := a.From.Overhead(s)
				after, okB := a.To.Overhead(s)
				if okA && okB && k.actsOn(s, a.From) && sameWork(s, a.From, a.To) {
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

// Agreement says how a step's instruction change compares with the
// change of a call's time its authors measured: the same direction, the
// opposite one, or none measured (intervals overlapping).
func (a AnchorAnswer) Agreement(c Change) string {
	if !c.Disjoint() {
		return "not resolved: intervals overlap"
	}
	if (c.Delta() < 0) == (a.BareMetalShare() < 0) {
		return "same direction"
	}
	return "opposite direction"
}

// Summary is one sentence of the answer, for other documents: the
// bare-metal change and the floors' steps (the authors' trigger
// benchmarks time empty programs, as the floors are).
func (a AnchorAnswer) Summary() string {
	if a.Missing != "" {
		return a.Name + ": not answered (" + a.Missing + ")"
	}
	between := a.Between()
	if c := a.Compilers(); c != "" {
		between += " (compilers " + c + ")"
	}
	if a.Attach {
		var steps []string
		for _, s := range a.AttachSteps {
			steps = append(steps, fmt.Sprintf("%s %s on %s %+.1f%%", s.Mechanism, s.Measure.Name, s.Size, 100*s.Share()))
		}
		return fmt.Sprintf("%s (%s): guest time, one sample per kernel, %s: %s", a.Name, a.Authors, between, strings.Join(steps, ", "))
	}
	var steps []string
	for _, c := range a.Steps {
		if c.Series.Case == suite.FloorCase {
			steps = append(steps, fmt.Sprintf("%s %+.1f%% (%s)", c.Series, 100*c.Share(), a.Agreement(c)))
		}
	}
	if steps == nil {
		steps = []string{"no floor it acts on measured in both"}
	}
	return fmt.Sprintf("%s: a call's time %+.0f%% on bare metal (%s); the floors' guest instructions %s: %s", a.Name,
		100*a.BareMetalShare(), a.Authors, between, strings.Join(steps, ", "))
}
