package docs

import (
	"regexp"
	"slices"
	"strings"
)

// A Figure is a number a template types itself where a measurement
// belongs: Line is its line, from 1.
type Figure struct {
	Line int
	Text string
}

// action is a template action, which reads its value from a file, the
// code or given.
var action = regexp.MustCompile(`(?s)\{\{.*?\}\}`)

// Patterns of what a measurement looks like. unit: a number or range
// (22-25) with a unit of time, size, share or count; of: "N of M"; long: a number of three
// digits or more that is no part of a name, path, version or flag.
var (
	unit = regexp.MustCompile(`(?i)(?:^|[^\w.:/#-])[-+±~]?\d[\d,]*(?:\.\d+)?(?:\s?[-–]\s?\d[\d,]*(?:\.\d+)?)?\s?(?:%|×|x\b|[µu]s\b|ns\b|ms\b|s\b|` +
		`secs?\b|seconds?\b|min\b|mins?\b|minutes?\b|h\b|hours?\b|[KMG]i?B\b|bytes?\b|instructions?\b|M instr|` +
		`calls?\b|reads?\b|events?\b|functions?\b|rounds?\b|boots?\b|runs?\b|threads?\b|probes?\b|entries\b|misse[sd]\b)`)
	of   = regexp.MustCompile(`\b\d+ of \d+\b`)
	long = regexp.MustCompile(`(?:^|[^\w.:/#@=+-])[-+±~]?\d{3,}(?:[.,]\d+)?(?:[^\w.:/-]|$)`)
	// codeSpan is inline code, where names, flags and citations live.
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// commandWords start the lines of a code block that are commands to
// type, not output: only a unit-figure is one there (a comment's "~7 min").
var commandWords = []string{"make", "sudo", "go", "vm/", "./", "tracebench", "CGO_", "TRACEBENCH_", "#", "git", "$"}

// HandTyped returns the figures a template types outside its actions: in
// prose and tables any of the patterns; in inline code and in the
// command lines of code blocks a number with a unit; in the other lines
// of code blocks (output) any number of two digits or more.
func HandTyped(template string) []Figure {
	text := action.ReplaceAllStringFunc(template, func(a string) string {
		return strings.Repeat("\n", strings.Count(a, "\n")) // keep the line numbers
	})
	var out []Figure
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		var found []string
		switch {
		case fenced && isCommand(trimmed):
			found = matches(line, unit)
		case fenced:
			found = matches(line, number)
		default:
			for _, span := range codeSpan.FindAllString(line, -1) {
				found = append(found, matches(span[1:len(span)-1], unit)...)
			}
			found = append(found, matches(codeSpan.ReplaceAllString(line, "``"), unit, of, long)...)
		}
		for _, f := range found {
			out = append(out, Figure{Line: i + 1, Text: f})
		}
	}
	return out
}

// number is any number of two digits or more, in output.
var number = regexp.MustCompile(`(?:^|[^\w.:/-])\d{2,}(?:[^\w.:/-]|$)`)

// matches are what the patterns find in line, in order, a match that
// overlaps an earlier one left out.
func matches(line string, patterns ...*regexp.Regexp) []string {
	var spans [][]int
	for _, p := range patterns {
		for _, m := range p.FindAllStringIndex(line, -1) {
			if !slices.ContainsFunc(spans, func(s []int) bool { return m[0] < s[1] && s[0] < m[1] }) {
				spans = append(spans, m)
			}
		}
	}
	slices.SortFunc(spans, func(a, b []int) int { return a[0] - b[0] })
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = strings.Trim(line[s[0]:s[1]], " \t,;()[]=")
	}
	return out
}

func isCommand(line string) bool {
	for _, w := range commandWords {
		if strings.HasPrefix(line, w) {
			return true
		}
	}
	return line == ""
}
