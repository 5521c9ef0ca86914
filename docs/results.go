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
	r, err := s.peersRun(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(r.SummaryTable(), "\n"), nil
}

// peersRun is the peers' conformance run whose conformance.json is at
// path.
func (s *source) peersRun(path string) (peers.Report, error) {
	raw, err := s.read(path)
	if err != nil {
		return peers.Report{}, err
	}
	var r peers.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return peers.Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// peerRow is the row named row of the conformance run at path; an error
// names a row the run does not have.
func (s *source) peerRow(path, row string) (peers.RowReport, error) {
	r, err := s.peersRun(path)
	if err != nil {
		return peers.RowReport{}, err
	}
	for _, rr := range r.Rows {
		if rr.Name == row {
			return rr, nil
		}
	}
	return peers.RowReport{}, fmt.Errorf("%s has no row %q", path, row)
}

// peerCell is peer's cell in row of the conformance run at path: peer
// names a tool's mode ("funclatency-kprobe") or, after "tracebench ",
// one of tracebench's mechanisms, as the run's table heads its columns.
func (s *source) peerCell(path, row, peer string) (peers.PeerCell, error) {
	rr, err := s.peerRow(path, row)
	if err != nil {
		return peers.PeerCell{}, err
	}
	name, own := strings.CutPrefix(peer, "tracebench ")
	for _, p := range rr.Peers {
		if p.Peer == name && p.Own == own {
			return p, nil
		}
	}
	return peers.PeerCell{}, fmt.Errorf("%s: row %q has no cell of %q", path, row, peer)
}

// outcomes is the outcome table of the outcome file at path (a kernel
// matrix or make test run), as the scenario binary prints it.
func (s *source) outcomes(path string) (string, error) {
	o, err := s.outcomeTable(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := o.WriteTable(&b); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// reason is the reason the outcome file at path records for key (a
// mechanism, or mechanism/scenario) skipping: what the kernel lacks.
func (s *source) reason(path, key string) (string, error) {
	o, err := s.outcomeTable(path)
	if err != nil {
		return "", err
	}
	why, ok := o.Reasons[key]
	if !ok {
		return "", fmt.Errorf("%s records no skip reason for %q", path, key)
	}
	return why, nil
}

// outcomeTable is the outcome table of the outcome file at path; an
// error says why a run has none.
func (s *source) outcomeTable(path string) (*matrix.Outcomes, error) {
	raw, err := s.read(path)
	if err != nil {
		return nil, err
	}
	r, err := matrix.ReadShard(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Outcomes == nil {
		return nil, fmt.Errorf("%s: no outcome table (%s)", path, r.Problem)
	}
	return r.Outcomes, nil
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
