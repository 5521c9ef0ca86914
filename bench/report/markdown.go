package report

import (
	"embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/template"
)

// Files the report links to, relative to its directory.
const (
	RawFile                = "raw.txt"
	MetaFile               = "meta.txt"
	ChartFile              = "overhead.svg"
	BenchstatBaselineFile  = "benchstat-vs-baseline.txt"
	BenchstatReferenceFile = "benchstat-vs-" + reference + ".txt"
)

// The report's prose: report.md.tmpl lays out what every report has,
// <family>.md.tmpl each family's lead and sections.
//
//go:embed templates/*.md.tmpl
var templateFiles embed.FS

// templates are parsed in init: their lead and body functions execute them.
var templates *template.Template

func init() {
	templates = template.Must(template.New("").Funcs(funcs).Funcs(multiFuncs).Funcs(kernelFuncs).ParseFS(templateFiles, "templates/*.md.tmpl"))
}

// funcs are the templates' functions: formats of the figures and the
// families' templates.
var funcs = template.FuncMap{
	"ns":        fmtNs,
	"ci":        fmtCI,
	"shift":     fmtShift,
	"p":         fmtP,
	"ratio":     fmtRatio,
	"rate":      fmtRate,
	"esc":       escape,
	"orUnknown": orUnknown,
	"plural":    plural,
	"join":      strings.Join,
	"sentence":  func(s string) string { return strings.ToUpper(s[:1]) + s[1:] },
	"alpha":     func() float64 { return alpha },
	"reference": func() string { return reference },
	"chartFile": func() string { return ChartFile },
	"costCase":  func() string { return costCase },
	"rounds": func(rounds []int) string {
		return strings.Join(strings.Fields(strings.Trim(fmt.Sprint(rounds), "[]")), ", ")
	},
	"dispatch": func(r Row) string {
		if d, ok := r.dispatch(); ok {
			return fmtNs(d)
		}
		return "n/a"
	},
	"cost": func(c cost, unit string) string {
		e, ok := c.units[unit]
		switch {
		case !ok:
			return "n/a"
		case unit == "start-ns":
			return fmtRate(e, ok)
		}
		return fmt.Sprintf("%.0f", e.Center)
	},
	"uncounted": func(rows []Row) bool { return slices.ContainsFunc(rows, func(r Row) bool { return !r.HasDropped }) },
	"lead":      func(p partPage) (string, error) { return execute(p.Family.Name+".lead", p) },
	"body":      func(p partPage) (string, error) { return execute(p.Family.Name+".body", p) },
}

func execute(name string, data any) (string, error) {
	var b strings.Builder
	err := templates.ExecuteTemplate(&b, name, data)
	return b.String(), err
}

// page is what the report's templates are given: the summary, the run's
// meta.txt (HasMeta without one), and the command that regenerates the
// report ("" to leave it out).
type page struct {
	*Summary
	Meta       Meta
	HasMeta    bool
	Regenerate string
	// RunFamily is the family of the run: meta.txt's suite, or the summary's.
	RunFamily *Family
}

// partPage is a page with one family's part, for that family's templates.
type partPage struct {
	page
	Family *Family
	Part   Part
}

// Lead is the run's family's part.
func (p page) Lead() partPage { return p.partPage(p.RunFamily) }

// Shown are the parts the report writes (Summary.Shown).
func (p page) Shown() []partPage {
	var out []partPage
	for _, fp := range p.Summary.Shown(p.RunFamily) {
		out = append(out, p.partPage(fp.Family))
	}
	return out
}

func (p page) partPage(f *Family) partPage {
	return partPage{page: p, Family: f, Part: p.Summary.Part(f)}
}

// Charts are the part's charts.
func (p partPage) Charts() []Chart { return p.Part.Charts(p.Summary) }

// SeeBelow points to the sections that say why nothing was measured.
func (p page) SeeBelow() string {
	var see []string
	if len(p.Skipped) > 0 {
		see = append(see, "*Skipped*")
	}
	if len(p.Failed) > 0 {
		see = append(see, "*Failed*")
	}
	switch len(see) {
	case 1:
		return see[0] + " below says why"
	case 2:
		return strings.Join(see, " and ") + " below say why"
	}
	return ""
}

// MetaRows are meta.txt's fields: those bench runs write first, labelled,
// in metaLabels' order, then any others as they are.
func (p page) MetaRows() []MetaField {
	var rows []MetaField
	for _, l := range metaLabels {
		if v := p.Meta.get(l.Key); v != "" {
			rows = append(rows, MetaField{l.Value, v})
		}
	}
	for _, f := range p.Meta {
		if !slices.ContainsFunc(metaLabels, func(l MetaField) bool { return l.Key == f.Key }) {
			rows = append(rows, f)
		}
	}
	return rows
}

// WriteMarkdown writes the report's summary. regenerate is the command
// that regenerates the report (left out if ""); meta is nil without
// meta.txt, whose suite names the run's family (else the summary's).
// The files it lists are those the shown parts write (Part.Without "").
func WriteMarkdown(w io.Writer, s *Summary, meta Meta, regenerate string) error {
	md, err := execute("report", page{Summary: s, Meta: meta, HasMeta: meta != nil, Regenerate: regenerate, RunFamily: s.RunFamily(meta)})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, md)
	return err
}

// RunFamily is the family of the run: meta.txt's suite, else the one
// summarize found.
func (s *Summary) RunFamily(meta Meta) *Family {
	if suite, _, _ := strings.Cut(meta.get("suite"), " "); suite != "" {
		if f, err := LookupFamily(suite); err == nil {
			return f
		}
	}
	return s.Family
}

// Label names the kernel, the emulation and the clock, which every figure
// depends on.
func (s *Summary) Label() string {
	l := fmt.Sprintf("Linux %s, %s", orUnknown(s.Kernel), s.EmulationName())
	if s.clock != "" {
		l += ", " + s.clock + " clock"
	}
	return l
}

// Icount reports whether ns/op counts guest instructions (QEMU icount).
func (s *Summary) Icount() bool { return s.clock == "icount" }

// Unit names what ns/op measures: under icount one guest instruction is
// one ns of guest time.
func (s *Summary) Unit() string {
	if s.Icount() {
		return "guest instructions"
	}
	return "ns"
}

// ClockName spells out clock.
func (s *Summary) ClockName() string {
	switch s.clock {
	case "icount":
		return "QEMU icount (-icount shift=0,sleep=on): guest time advances 1 ns per executed guest instruction, " +
			"so ns/op is guest instructions per read(2)"
	case "wall":
		return "wall time"
	case "":
		return "not recorded (tracebench-clock missing)"
	}
	return s.clock
}

// EmulationName spells out Emulation.
func (s *Summary) EmulationName() string {
	switch s.Emulation {
	case "tcg":
		return "QEMU guest under TCG (software emulation)"
	case "kvm":
		return "QEMU guest under KVM"
	case "none":
		return "not a tracebench guest (bare metal or the host's own VM)"
	}
	return "emulation unknown"
}

// TimeUnit names the seconds of a duration: the guest's in a guest.
func (s *Summary) TimeUnit() string {
	if s.guest() {
		return "guest s"
	}
	return "s"
}

// guest reports whether the figures come from an emulated guest, where
// only ratios within the run carry over.
func (s *Summary) guest() bool { return s.Emulation == "tcg" || s.Emulation == "kvm" }

// fmtNs prints about three significant digits.
func fmtNs(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtCI(e estimate) string {
	if !e.hasCI() {
		return fmt.Sprintf("[no CI: n=%d]", e.N)
	}
	return fmt.Sprintf("[%s, %s]", fmtNs(e.lo), fmtNs(e.hi))
}

func fmtShift(s shift) string {
	if s.N == 0 {
		return "n/a"
	}
	sign := ""
	if s.Center > 0 {
		sign = "+"
	}
	return sign + fmtNs(s.Center) + " " + fmtCI(s.estimate)
}

func fmtP(s shift) string {
	if s.N == 0 {
		return "n/a"
	}
	p := fmt.Sprintf("%.3f", s.P)
	if s.P < 0.001 {
		p = "<0.001"
	}
	if !s.significant() {
		p += " *n.s.*"
	}
	return p
}

func fmtRatio(r Row) string {
	if math.IsNaN(r.Ratio) {
		return r.noRatio
	}
	return fmt.Sprintf("%.2f×", r.Ratio)
}

func fmtRate(e estimate, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmtNs(e.Center) + " " + fmtCI(e)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// escape keeps a value inside its Markdown table cell.
func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
