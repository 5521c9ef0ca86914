package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"

	"tracebench/matrix"
	"tracebench/peers"
)

// source is what the templates read: files below the repository's root
// and the reports made of them, each read once.
type source struct {
	root   string
	files  sync.Map // path -> []byte
	matrix func() (matrix.Report, error)
}

func (s *source) funcs() template.FuncMap {
	return template.FuncMap{
		"include": s.include,
		"value":   s.value,
		"exists":  s.exists,
		"given":   given,
		"section": s.section,
		"where":   s.where,
		// Benchmark runs and the registry (results.go).
		"headline":    s.headline,
		"perfMatrix":  s.perfMatrix,
		"perfAnchors": s.perfAnchors,
		"label":       s.label,
		"mechanisms":  mechanisms,
		"conformance": s.conformance,
		"peersRun":    s.peersRun,
		"peerRow":     s.peerRow,
		"peerCell":    s.peerCell,
		"reason":      s.reason,
		"outcomes":    s.outcomes,
		"setSize":     s.setSize,
		"minutes":     s.minutes,
		"kernelTimes": s.kernelTimes,
		"anchor":      anchor,
		"benchReport": benchReport,
		// The scenario rows the code declares, and a run's misses (scenarios.go).
		"scenarioTable": scenarioTable,
		"missed":        s.missed,
		// The -l tracebench gives bcc's funclatency (a setting, not a figure).
		"bccLevels": func() int { return peers.BCCLevels },
	}
}

// read returns the file at path, relative to the root; a document may
// only show files of the repository.
func (s *source) read(path string) ([]byte, error) {
	if filepath.IsAbs(path) || strings.Contains(path, "..") {
		return nil, fmt.Errorf("%q: a path relative to the repository's root, without ..", path)
	}
	if b, ok := s.files.Load(path); ok {
		return b.([]byte), nil
	}
	b, err := os.ReadFile(filepath.Join(s.root, path))
	if err != nil {
		return nil, err
	}
	s.files.Store(path, b)
	return b, nil
}

// include is the file at path, without its last line's newline: a
// captured output is shown as the run wrote it.
func (s *source) include(path string) (string, error) {
	b, err := s.read(path)
	return strings.TrimSuffix(string(b), "\n"), err
}

// value is the value of the first "key: value" line of the file at path.
func (s *source) value(path, key string) (string, error) {
	b, err := s.read(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s has no %q line", path, key+": ")
}

// exists reports whether the repository holds path: a document can say
// that a run is not recorded yet instead of failing to render.
func (s *source) exists(path string) bool {
	_, err := s.read(path)
	return err == nil
}

// given marks a number a template states itself: a setting, a default,
// a limit or a constant, not a measurement (TestNoHandTypedFigures
// accepts only these).
func given(s string) string { return s }

// section is the body of the Markdown section of the file at path whose
// heading line is heading (e.g. "## Cost per read(2)"): the lines after
// it up to the next heading of its level or above, trimmed.
func (s *source) section(path, heading string) (string, error) {
	b, err := s.read(path)
	if err != nil {
		return "", err
	}
	level := strings.Index(heading, " ")
	var body []string
	in := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(line, "\n")
		if in && isHeading(line, level) {
			break
		}
		if in {
			body = append(body, line)
		}
		in = in || line == heading
	}
	if !in {
		return "", fmt.Errorf("%s has no heading %q", path, heading)
	}
	return strings.TrimSpace(strings.Join(body, "\n")), nil
}

// isHeading: line is a Markdown heading of level at most level.
func isHeading(line string, level int) bool {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	return n > 0 && n <= level && strings.HasPrefix(line[n:], " ")
}

// where says where the committed kernel matrix ran mechanism
// (matrix.Report.Where).
func (s *source) where(mechanism string) (string, error) {
	rep, err := s.matrixReport()
	if err != nil {
		return "", err
	}
	return rep.Where(mechanism)
}

func (s *source) matrixReport() (matrix.Report, error) {
	if s.matrix == nil {
		s.matrix = sync.OnceValues(func() (matrix.Report, error) { return matrix.Committed(s.root) })
	}
	return s.matrix()
}
