package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// perfMatrix is the short table of the overhead runs of several kernels
// below dir (make bench-kernels), as report.PerfMatrix.Headline writes it.
func (s *source) perfMatrix(dir string) (string, error) {
	pm, err := s.loadPerfMatrix(dir)
	if err != nil {
		return "", err
	}
	return pm.Headline()
}

// perfAnchors are the perf matrix's answers to the kernel changes whose
// authors measured them, a sentence each (report.AnchorAnswer.Summary).
func (s *source) perfAnchors(dir string) ([]string, error) {
	pm, err := s.loadPerfMatrix(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range pm.Anchors {
		out = append(out, a.Summary())
	}
	return out, nil
}

func (s *source) loadPerfMatrix(dir string) (*report.PerfMatrix, error) {
	runs, err := report.PerfMatrixRuns(filepath.Join(s.root, dir))
	if err != nil {
		return nil, err
	}
	return report.LoadPerfMatrix(runs, nil)
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

// minutes is how long the benchmark run in dir took, boot included
// (its meta.txt's duration-s), to the minute: "19 min".
func (s *source) minutes(dir string) (string, error) {
	v, err := s.value(path.Join(dir, report.MetaFile), "duration-s")
	if err != nil {
		return "", err
	}
	secs, err := strconv.Atoi(v)
	if err != nil || secs < 0 {
		return "", fmt.Errorf("%s: duration-s %q is no number of seconds", dir, v)
	}
	return inMinutes(time.Duration(secs) * time.Second), nil
}

// inMinutes is d to the minute: "19 min", "1 h 2 min".
func inMinutes(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// kernelTimes are how long the committed kernel matrix's kernels took
// to run, boots included, to the minute.
type kernelTimes struct {
	Shortest, Longest string
	Slowest           string // the selector of the longest
	Sum               string // every kernel, one after the other
}

// kernelTimes reads them from the committed outcome files.
func (s *source) kernelTimes() (kernelTimes, error) {
	rep, err := s.matrixReport()
	if err != nil {
		return kernelTimes{}, err
	}
	if len(rep.Runs) == 0 {
		return kernelTimes{}, fmt.Errorf("results/matrix has no outcome file")
	}
	shortest, longest := rep.Runs[0], rep.Runs[0]
	var sum time.Duration
	for _, r := range rep.Runs {
		sum += r.Duration
		if r.Duration < shortest.Duration {
			shortest = r
		}
		if r.Duration > longest.Duration {
			longest = r
		}
	}
	return kernelTimes{Shortest: inMinutes(shortest.Duration), Longest: inMinutes(longest.Duration),
		Slowest: longest.Kernel.Selector, Sum: inMinutes(sum)}, nil
}

// anchor is a trigger rate, in million triggers per second, that a post
// the document cites published, with the ns per trigger it implies
// (1000 / rate), one decimal: "134.076 (7.5)". Not a measurement of
// this project's: the document names the post.
func anchor(rate string) (string, error) {
	r, err := strconv.ParseFloat(rate, 64)
	if err != nil || r <= 0 {
		return "", fmt.Errorf("trigger rate %q is no positive number of M/s", rate)
	}
	return fmt.Sprintf("%s (%.1f)", rate, 1000/r), nil
}

// benchReport states a constant of bench/report as the documents quote
// it: "confidence" the level of every interval (95%), and the targets a
// report checks: "ci" an overhead interval's largest half-width (±3%),
// "rounds" the fewest rounds (6 rounds), "duration" an overhead run's
// longest (10 min), "multi-duration" a multi run's longest (30 min).
func benchReport(name string) (string, error) {
	switch name {
	case "confidence":
		return fmt.Sprintf("%.0f%%", 100*report.Confidence), nil
	case "ci":
		return fmt.Sprintf("±%.0f%%", 100*report.TargetCIShare), nil
	case "rounds":
		return fmt.Sprintf("%d rounds", report.TargetRounds), nil
	case "duration":
		return inMinutes(report.TargetDurationS * time.Second), nil
	case "multi-duration":
		return inMinutes(report.TargetMultiDurationS * time.Second), nil
	}
	return "", fmt.Errorf("bench/report has no constant %q for documents", name)
}
