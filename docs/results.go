package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"tracebench/bench/report"
	"tracebench/funcset"
	"tracebench/matrix"
	"tracebench/peers"
	"tracebench/tracers"
)

// headline is the short table of the benchmark run in dir (a directory
// of results/ with raw.txt and meta.txt), as report.Headline writes it.
func (s *source) headline(dir string) (string, error) {
	return report.Headline(filepath.Join(s.root, dir))
}

// label names the kernel, emulation and clock of the benchmark run in
// dir, on which each of its figures depends.
func (s *source) label(dir string) (string, error) {
	l, err := report.Load(filepath.Join(s.root, dir))
	if err != nil {
		return "", err
	}
	return l.Summary.Label(), nil
}

// mechanisms are the registered mechanisms, best first.
func mechanisms() []tracers.Mechanism { return tracers.Mechanisms() }

// conformance is the classes-only table of the peers' conformance run
// whose conformance.json is at path (peers.Report.SummaryTable).
func (s *source) conformance(path string) (string, error) {
	raw, err := s.read(path)
	if err != nil {
		return "", err
	}
	var r peers.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return strings.TrimSuffix(r.SummaryTable(), "\n"), nil
}

// outcomes is the outcome table of the outcome file at path (a kernel
// matrix or make test run), as the scenario binary prints it.
func (s *source) outcomes(path string) (string, error) {
	raw, err := s.read(path)
	if err != nil {
		return "", err
	}
	r, err := matrix.ReadShard(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if r.Outcomes == nil {
		return "", fmt.Errorf("%s: no outcome table (%s)", path, r.Problem)
	}
	var b strings.Builder
	if err := r.Outcomes.WriteTable(&b); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// setSize is how many functions the function set file at path has.
func (s *source) setSize(path string) (int, error) {
	raw, err := s.read(path)
	if err != nil {
		return 0, err
	}
	set, err := funcset.Read(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return len(set.Functions()), nil
}
