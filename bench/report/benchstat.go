package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// benchstat groups results by the sub-name keys of "key=value" name parts
// (/case, /mechanism), not by position, and orders a column's values as
// first seen, comparing every column with the first. writeBenchstatInput
// therefore rewrites BenchmarkVFSRead/<mechanism>/<case> into
// BenchmarkVFSRead/case=<case>/mechanism=<mechanism> and writes the results
// with first's mechanism first; baseline, which has no case, is repeated
// under every case so that each row has it. Mechanisms in exclude are left
// out. overheadPart.Comparisons run benchstat on it.
func writeBenchstatInput(w io.Writer, raw io.Reader, first string, exclude ...string) error {
	results, err := readAll(raw)
	if err != nil {
		return err
	}
	cases := casesOf(results)
	bw := benchfmt.NewWriter(w)
	for _, pass := range []func(Key) bool{
		func(k Key) bool { return k.Mechanism == first },
		func(k Key) bool { return k.Mechanism != first },
	} {
		for _, r := range results {
			if !pass(r.key) || slices.Contains(exclude, r.key.Mechanism) {
				continue
			}
			if err := writeRenamed(bw, r, cases); err != nil {
				return err
			}
		}
	}
	return nil
}

type keyedResult struct {
	key    Key
	result *benchfmt.Result
	procs  string // the "-N" GOMAXPROCS suffix of the name, if any
}

func readAll(raw io.Reader) ([]keyedResult, error) {
	var out []keyedResult
	rd := benchfmt.NewReader(raw, "raw")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			key, err := parseKey(rec.Name.Full())
			if err != nil {
				return nil, err
			}
			_, parts := rec.Name.Parts()
			procs := ""
			if n := len(parts); n > 0 && parts[n-1][0] == '-' {
				procs = string(parts[n-1])
			}
			out = append(out, keyedResult{key: key, result: rec.Clone(), procs: procs})
		}
	}
	return out, rd.Err()
}

func casesOf(results []keyedResult) []string {
	seen := map[string]bool{}
	for _, r := range results {
		if r.key.Case != "" {
			seen[r.key.Case] = true
		}
	}
	return ordered(seen, knownCases)
}

// writeRenamed writes r under its keyed name; baseline once per case.
func writeRenamed(bw *benchfmt.Writer, r keyedResult, cases []string) error {
	for _, c := range caseList(r.key, cases) {
		out := r.result.Clone()
		out.Name = benchfmt.Name(fmt.Sprintf("%s/case=%s/mechanism=%s%s", r.key.bench, c, r.key.Mechanism, r.procs))
		if err := bw.Write(out); err != nil {
			return fmt.Errorf("write %s: %w", strings.TrimPrefix(r.key.String(), "Benchmark"), err)
		}
	}
	return nil
}

// caseList: a flat family has no cases, its sub-benchmarks one group
// named after it.
func caseList(k Key, cases []string) []string {
	if f := familyOf(k.bench); f != nil && f.flat {
		return []string{f.Name}
	}
	if k.Case == "" {
		return cases
	}
	return []string{k.Case}
}
