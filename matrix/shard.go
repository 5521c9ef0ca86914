package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Origin names the matrix run a kernel's outcomes come from: a whole
// matrix, a subset or one CI job each is its own run.
type Origin struct {
	Started time.Time `json:"started"`
	// Commit is the tree's git commit ("-dirty" with uncommitted
	// changes), "unknown" outside a git work tree.
	Commit string `json:"commit"`
	// Host describes the machine, e.g. "a 2-CPU host (AMD EPYC, Linux 6.18.44, ...)".
	Host string `json:"host"`
	// QuietWait is how long the run waited for other guests to end first;
	// OthersAtStart how many were running when it started.
	QuietWait     time.Duration `json:"quiet_wait_ns"`
	OthersAtStart int           `json:"others_at_start"`
}

func (o Origin) String() string {
	return fmt.Sprintf("started %s, commit %s", o.Started.UTC().Format("2006-01-02 15:04 MST"), o.Commit)
}

// shard is the JSON form of one kernel's outcome file. Its expectations
// are not in it: a merge judges it by the kernels.tsv it is given.
type shard struct {
	Selector string `json:"selector"`
	Run      Run    `json:"run"`
}

// ShardName is the outcome file name of the kernel with selector, e.g.
// "sid_7_rt-amd64.json" (no ':', which CI artifact names refuse).
func ShardName(selector string) string {
	return strings.ReplaceAll(selector, ":", "_") + ".json"
}

// WriteShard writes r as an outcome file.
func WriteShard(w io.Writer, r Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(shard{Selector: r.Kernel.Selector, Run: r})
}

// ReadShard reads an outcome file; the Run's Kernel holds only the
// selector until Merge looks it up in kernels.tsv.
func ReadShard(r io.Reader) (Run, error) {
	var s shard
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Run{}, err
	}
	if s.Selector == "" {
		return Run{}, fmt.Errorf("no selector")
	}
	s.Run.Kernel = Kernel{Selector: s.Selector}
	return s.Run, nil
}

// Merge makes the report of every kernel of exp from outcome files, in
// kernels.tsv's order: each kernel's run from the file for it, or a run
// whose problem says its file is missing. Files of kernels exp does not
// list are left out and named in Report.Ignored. sources[i] names
// runs[i] (its path) in errors; two files for one kernel are an error.
func Merge(exp Expectations, runs []Run, sources []string) (Report, error) {
	rep := Report{Expect: exp}
	for _, k := range exp.Kernels {
		var found []int
		for i, r := range runs {
			if r.Kernel.Selector == k.Selector {
				found = append(found, i)
			}
		}
		switch len(found) {
		case 0:
			problem := "missing: no outcome file (" + ShardName(k.Selector) + ") was merged"
			rep.Runs = append(rep.Runs, Run{Kernel: k, Problem: problem})
		case 1:
			r := runs[found[0]]
			r.Kernel = k
			rep.Runs = append(rep.Runs, r)
		default:
			return Report{}, fmt.Errorf("kernel %s has %d outcome files: %s",
				k.Selector, len(found), strings.Join(pick(sources, found), ", "))
		}
	}
	for i, r := range runs {
		if !slices.ContainsFunc(exp.Kernels, func(k Kernel) bool { return k.Selector == r.Kernel.Selector }) {
			rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s (%s)", sources[i], r.Kernel.Selector))
		}
	}
	return rep, nil
}

func pick(s []string, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, s[i])
	}
	return out
}

// Origins are the distinct runs of rep's columns, in order of first
// column, each with the columns it made.
func (rep Report) Origins() []Origin {
	var out []Origin
	for _, r := range rep.Runs {
		if r.Origin.Started.IsZero() || slices.Contains(out, r.Origin) {
			continue
		}
		out = append(out, r.Origin)
	}
	return out
}

// ReadShards reads every outcome file (*.json) below dir (a CI download
// puts each job's files in a directory of its own) and returns the runs
// with their paths; no dir means no files.
func ReadShards(dir string) ([]Run, []string, error) {
	var runs []Run
	var sources []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == dir {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r, err := ReadShard(f)
		if err != nil {
			return fmt.Errorf("outcome file %s: %w", path, err)
		}
		runs, sources = append(runs, r), append(sources, path)
		return nil
	})
	return runs, sources, err
}

// LoadExpectations reads kernels.tsv at path.
func LoadExpectations(path string) (Expectations, error) {
	f, err := os.Open(path)
	if err != nil {
		return Expectations{}, err
	}
	defer f.Close()
	exp, err := ParseExpectations(f)
	if err != nil {
		return Expectations{}, fmt.Errorf("%s: %w", path, err)
	}
	return exp, nil
}

// Committed is the report of the repository at root as committed: its
// matrix/kernels.tsv and the outcome files in results/matrix, merged.
func Committed(root string) (Report, error) {
	exp, err := LoadExpectations(filepath.Join(root, "matrix", "kernels.tsv"))
	if err != nil {
		return Report{}, err
	}
	runs, sources, err := ReadShards(filepath.Join(root, "results", "matrix"))
	if err != nil {
		return Report{}, err
	}
	return Merge(exp, runs, sources)
}
