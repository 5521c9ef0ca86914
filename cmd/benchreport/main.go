// Command benchreport writes the report of a benchmark run: given a
// directory holding raw.txt (the `go test -bench -v` output of every
// round) and meta.txt (written by bench/run.sh), it writes README.md (the
// summary) and overhead.svg (the chart) there, and, with -benchstat-dir,
// the two inputs bench/report.sh feeds to benchstat.
//
//	go run ./cmd/benchreport -dir results/<kernel> [-benchstat-dir DIR] [-png FILE]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tracebench/bench/report"
)

func main() {
	dir := flag.String("dir", "", "directory with "+report.RawFile+" and "+report.MetaFile+"; the report is written there")
	benchstatDir := flag.String("benchstat-dir", "", "if set, write vs-baseline.txt and vs-"+report.Reference+".txt, benchstat's inputs, there")
	png := flag.String("png", "", "if set, also write the chart as PNG to this file (a preview; the report links the SVG)")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *benchstatDir, *png); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(dir, benchstatDir, png string) error {
	raw, err := os.ReadFile(filepath.Join(dir, report.RawFile))
	if err != nil {
		return err
	}
	meta, err := readMeta(filepath.Join(dir, report.MetaFile))
	if err != nil {
		return err
	}
	parsed, err := report.Parse(bytes.NewReader(raw), report.RawFile)
	if err != nil {
		return err
	}
	summary := report.Summarize(parsed)
	if err := writeFile(filepath.Join(dir, "README.md"), func(f *os.File) error { return report.WriteMarkdown(f, summary, meta) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, report.ChartFile), func(f *os.File) error { return report.WriteChart(f, summary, "svg") }); err != nil {
		return err
	}
	if png != "" {
		if err := writeFile(png, func(f *os.File) error { return report.WriteChart(f, summary, "png") }); err != nil {
			return err
		}
	}
	if benchstatDir == "" {
		return nil
	}
	inputs := map[string]func(f *os.File) error{
		"vs-baseline.txt": func(f *os.File) error {
			return report.WriteBenchstatInput(f, bytes.NewReader(raw), report.Baseline)
		},
		"vs-" + report.Reference + ".txt": func(f *os.File) error {
			return report.WriteBenchstatInput(f, bytes.NewReader(raw), report.Reference, report.Baseline)
		},
	}
	for name, write := range inputs {
		if err := writeFile(filepath.Join(benchstatDir, name), write); err != nil {
			return err
		}
	}
	return nil
}

// readMeta reads meta.txt; a run without one (e.g. raw output copied by
// hand) still gets a report.
func readMeta(path string) (report.Meta, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return report.ParseMeta(f)
}

// writeFile writes path through write, replacing it only when complete.
func writeFile(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
