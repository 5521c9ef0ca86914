package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Loaded is a run as its directory holds it: raw.txt, meta.txt and what
// summarize makes of them.
type Loaded struct {
	Raw     []byte
	Meta    Meta // nil without meta.txt
	Summary *Summary
}

// Load reads the run in dir. It refuses a raw.txt without a round, or
// without a benchmark line, when meta.txt says rounds were run: the
// rounds' output was lost, and a report would say nothing was measured.
func Load(dir string) (Loaded, error) {
	raw, err := os.ReadFile(filepath.Join(dir, RawFile))
	if err != nil {
		return Loaded{}, err
	}
	meta, err := readMeta(filepath.Join(dir, MetaFile))
	if err != nil {
		return Loaded{}, err
	}
	run, err := parse(bytes.NewReader(raw), RawFile)
	if err != nil {
		return Loaded{}, err
	}
	rounds := meta.get("rounds")
	if n, err := strconv.Atoi(rounds); err == nil && n > 0 {
		switch {
		case run.Rounds == 0:
			return Loaded{}, fmt.Errorf("%s says %s rounds were run, but %s has no round (no tracebench-kernel: line)",
				MetaFile, rounds, RawFile)
		case len(run.samples) == 0 && len(run.Skipped) == 0 && len(run.Failed) == 0:
			return Loaded{}, fmt.Errorf("%s says %s rounds were run, but %s has no benchmark result, skip or failure",
				MetaFile, rounds, RawFile)
		}
	}
	return Loaded{Raw: raw, Meta: meta, Summary: summarize(run)}, nil
}

// readMeta reads meta.txt; a run without one (e.g. raw output copied by
// hand) still gets a report.
func readMeta(path string) (Meta, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMeta(f)
}

// Headline is the short Markdown table of the run in dir that other
// documents show (the top README): its family's "<family>.headline"
// template, given the partPage the report gives its sections.
func Headline(dir string) (string, error) {
	l, err := Load(dir)
	if err != nil {
		return "", err
	}
	p := page{Summary: l.Summary, Meta: l.Meta, HasMeta: l.Meta != nil, RunFamily: l.Summary.RunFamily(l.Meta)}
	return execute(p.RunFamily.Name+".headline", p.Lead())
}
