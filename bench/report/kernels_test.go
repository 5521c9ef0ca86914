package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/bench/suite"
)

// kernelRun writes an overhead run of kernel into dir/<kernel>: 6 rounds
// under icount, baseline 1000 and each floor or mechanism ("name/case")
// of costs at that overhead, each round off by r (0..5).
func kernelRun(t *testing.T, dir, kernel string, costs map[string]int) string {
	t.Helper()
	return kernelRunBuiltBy(t, dir, kernel, "", costs)
}

// kernelRunBuiltBy is kernelRun of a kernel compiler built ("": unsaid).
func kernelRunBuiltBy(t *testing.T, dir, kernel, compiler string, costs map[string]int) string {
	t.Helper()
	var b strings.Builder
	for r := range 6 {
		fmt.Fprintf(&b, "tracebench-kernel: %s\ntracebench-emulation: tcg\ntracebench-cpus: 2\ntracebench-clock: icount\n", kernel)
		if compiler != "" {
			fmt.Fprintf(&b, "tracebench-kernel-compiler: %s\n", compiler)
		}
		b.WriteString("tracebench-floor-fentry-fexit: fentry+fexit\ntracebench-floor-fsession-multi: fsession.multi\n")
		fmt.Fprintf(&b, "BenchmarkVFSRead/baseline-2 20000 %d ns/op\n", 1000+r)
		for name, c := range costs {
			if !strings.Contains(name, "/") {
				name += "/floor"
			}
			fmt.Fprintf(&b, "BenchmarkVFSRead/%s-2 20000 %d ns/op\n", name, 1000+c+2*r)
		}
		b.WriteString("PASS\n")
	}
	run := filepath.Join(dir, kernel)
	require.NoError(t, os.MkdirAll(run, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(run, RawFile), []byte(b.String()), 0o644))
	meta := "where: guest\ncommit: 0123456789ab\nsuite: overhead (x)\nrounds: 6\nexit-status: 0\n"
	require.NoError(t, os.WriteFile(filepath.Join(run, MetaFile), []byte(meta), 0o644))
	return run
}

func TestParseRelease(t *testing.T) {
	for release, want := range map[string]string{
		"7.2.13+deb14-amd64": "7.2.13", "7.2.13+deb14-rt-amd64": "7.2.13 rt", "6.1.0-50-amd64": "6.1.0-50",
		"7.3-amd64": "7.3", "6.12.117+deb13-cloud-amd64": "6.12.117 cloud", "6.12.0-rc3-amd64": "6.12.0-rc3",
		"6.18-rc1-amd64": "6.18-rc1", "6.19.0-custom": "6.19.0", "5.10.0-32-rt-amd64": "5.10.0-32 rt",
	} {
		r, err := parseRelease(release)
		require.NoError(t, err, release)
		c := &Column{version: r.version, rc: r.rc, abi: r.abi, flavour: r.flavour}
		assert.Equal(t, want, c.Name(), release)
	}
	_, err := parseRelease("linux")
	assert.ErrorContains(t, err, `"linux"`)
}

// Runs sort by release: a release candidate before its release, Debian's
// ABI numbers as numbers, a flavour after its generic kernel, which it is
// compared with alone.
func TestPerfMatrixOrder(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	for _, k := range []string{"6.1.0-10-amd64", "6.1.0-9-amd64", "6.12.0-rc3-amd64", "6.12.1-amd64", "6.1.0-9-rt-amd64"} {
		runs = append(runs, kernelRun(t, dir, k, map[string]int{"fexit": 200}))
	}
	pm, err := LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	var names []string
	for _, c := range pm.Columns {
		names = append(names, c.Name())
	}
	assert.Equal(t, []string{"6.1.0-9", "6.1.0-9 rt", "6.1.0-10", "6.12.0-rc3", "6.12.1"}, names)
	var pairs []string
	for _, p := range pm.Neighbours() {
		pairs = append(pairs, p[0].Name()+" → "+p[1].Name())
	}
	assert.Equal(t, []string{"6.1.0-9 → 6.1.0-10", "6.1.0-10 → 6.12.0-rc3", "6.12.0-rc3 → 6.12.1", "6.1.0-9 → 6.1.0-9 rt"}, pairs)
}

func TestPerfMatrix(t *testing.T) {
	dir := t.TempDir()
	// From 6.18 to 7.2 (the jmp mode's pair) fexit's floor falls 20% and
	// fentry's rises 10%; from 6.12 to 6.18 the kprobe floor rises 2%
	// (within changeShare) and kretprobe's 10%, which no known change
	// explains; rt is 7.2's flavour.
	runs := []string{
		kernelRunBuiltBy(t, dir, "7.2.13+deb14-amd64", gcc16, map[string]int{"fexit": 160, "kprobe": 306, "fentry": 110, "kretprobe": 330,
			"fsession": 200, "fentry+fexit": 250, "fsession/tgid-miss": 300, "fentry-fexit/tgid-miss": 400}),
		kernelRunBuiltBy(t, dir, "6.18.15+deb13-amd64", gcc14, map[string]int{"fexit": 200, "kprobe": 306, "fentry": 100, "kretprobe": 330,
			"fentry-fexit/tgid-miss": 400}),
		kernelRunBuiltBy(t, dir, "6.12.117+deb13-amd64", gcc14, map[string]int{"fexit": 200, "kprobe": 300, "fentry": 100, "kretprobe": 300}),
		kernelRunBuiltBy(t, dir, "7.2.13+deb14-rt-amd64", gcc16, map[string]int{"fexit": 160, "kprobe": 306, "fentry": 110, "kretprobe": 330}),
	}
	pm, err := LoadPerfMatrix(runs, []string{"trixie-backports:7.0 (binary-only)"})
	require.NoError(t, err)
	var names []string
	for _, c := range pm.Columns {
		names = append(names, c.Name())
	}
	assert.Equal(t, []string{"6.12.117", "6.18.15", "7.2.13", "7.2.13 rt"}, names, "release order, a flavour after its generic kernel")

	var changes []string
	for _, c := range pm.Changes {
		changes = append(changes, fmt.Sprintf("%s %s→%s %+.0f %q", c.Series, c.From.Name(), c.To.Name(), c.Delta(), c.Explained))
	}
	assert.ElementsMatch(t, []string{
		`fexit floor 6.18.15→7.2.13 -40 "BPF trampoline \"jmp\" mode"`,
		`fentry floor 6.18.15→7.2.13 +10 "BPF trampoline \"jmp\" mode"`,
		`kretprobe floor 6.12.117→6.18.15 +30 ""`,
	}, changes, "kprobe's +2% is below the threshold; rt equals its generic kernel")

	jmp := anchor(t, pm, "BPF trampoline \"jmp\" mode")
	require.Empty(t, jmp.Missing)
	assert.Equal(t, "6.18.15 → 7.2.13", jmp.Between())
	var steps []string
	for _, s := range jmp.Steps {
		steps = append(steps, fmt.Sprintf("%s %+.0f %v", s.Series, s.Delta(), s.Disjoint()))
	}
	assert.Equal(t, []string{"fentry-fexit (tgid-miss) +0 false", "fentry floor +10 true", "fexit floor -40 true"}, steps,
		"a mechanism acted on through its floor's kinds; fsession is not in 6.18: no step")
	assert.Equal(t, "BPF trampoline \"jmp\" mode: a call's time -42% on bare metal (fexit 76 → 130 M/s); the floors' guest "+
		"instructions 6.18.15 → 7.2.13 (compilers gcc-14 (Debian 14.2.0-19) 14.2.0 → gcc-16 (Debian 16.2.0-4) 16.2.0): fentry floor +9.8% (opposite direction), fexit floor -19.8% (same direction)", jmp.Summary(),
		"the floors alone: the authors' trigger benchmarks time empty programs")
	assert.Equal(t, "no kernel with a growth run (Start and Close) on one side of 7.3", anchor(t, pm, "tracing_multi attach fix").Missing)
	assert.Equal(t, "no kernel with a growth run (Start and Close) on one side of 6.8", anchor(t, pm, "kprobe_multi attach regression").Missing)

	var md strings.Builder
	require.NoError(t, pm.WriteMarkdown(&md, filepath.Dir(dir), dir))
	assertContains(t, md.String(),
		"| attach kinds | 6.12.117 | 6.18.15 | 7.2.13 | 7.2.13 rt |\n",
		"| fexit | +202 [200, 205] | +202 [200, 205] | +162 [160, 165] | +162 [160, 165] |\n",
		"| fsession | – | – | +302 [300, 305] | – |\n",
		"fsession on 6.12.117, 6.18.15, 7.2.13 rt: not run",
		"- **kretprobe floor**, 6.12.117 → 6.18.15: +302 [300, 305] → +332 [330, 335] (+30, +9.9%): *no known change*\n",
		"- **fexit floor**, 6.18.15 → 7.2.13: +202 [200, 205] → +162 [160, 165] (-40, -19.8%): candidates: BPF trampoline \"jmp\" mode; "+
			"built by different compilers, gcc-14 (Debian 14.2.0-19) 14.2.0 → gcc-16 (Debian 16.2.0-4) 16.2.0\n",
		"| 6.12.117+deb13-amd64 | gcc-14 (Debian 14.2.0-19) 14.2.0 | 6 |",
		"| fsession ÷ fentry+fexit | – | – | 0.80× | – |\n",
		"| tgid-miss | fsession | – | – | 0.75× | – |\n",
		"trixie-backports:7.0 (binary-only)",
		"**Not answered**: no kernel with a growth run (Start and Close) on one side of 7.3.",
		"No run below 001/ has a growth run",
	)
	var js strings.Builder
	require.NoError(t, pm.JSON(&js))
	assert.Contains(t, js.String(), `"Series": "fexit floor"`)
	for _, c := range pm.Charts() {
		var svg strings.Builder
		require.NoError(t, c.Draw(&svg, "svg"), c.File)
		assert.Contains(t, svg.String(), "6.18.15", c.File)
	}
}

// growthRun writes a growth run below the overhead run of kernel in dir
// (multiRoundsOn's, fsession-multi's Start scaled by startScale).
func growthRun(t *testing.T, dir, kernel string, startScale float64) {
	t.Helper()
	run := filepath.Join(dir, kernel, "growth")
	require.NoError(t, os.MkdirAll(run, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(run, RawFile), []byte(multiRoundsOn(6, kernel, startScale)), 0o644))
	meta := "where: guest\ncommit: 0123456789ab\nsuite: growth (x)\nrounds: 6\nduration-s: 700\nexit-status: 0\n"
	require.NoError(t, os.WriteFile(filepath.Join(run, MetaFile), []byte(meta), 0o644))
}

// The growth runs below the overhead runs give the read path, Start and
// Close per kernel, and answer a change of attaching from the pair that
// brackets it: fsession-multi's Start halves from 7.2 to 7.3 (the
// tracing_multi fix's pair), fsession-multi attaching with fsession.multi.
func TestPerfMatrixGrowth(t *testing.T) {
	dir := t.TempDir()
	costs := map[string]int{"fexit": 160, "fsession-multi/below-threshold": 300}
	runs := []string{kernelRun(t, dir, "7.2.13+deb14-amd64", costs), kernelRun(t, dir, "7.3-amd64", costs), kernelRun(t, dir, "6.18.15+deb13-amd64", costs)}
	growthRun(t, dir, "7.2.13+deb14-amd64", 1)
	growthRun(t, dir, "7.3-amd64", 0.5)
	pm, err := LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"7.2.13", "7.3"}, columnNames(pm.GrowthColumns()), "6.18 has no growth run")
	assert.Equal(t, "all", pm.GrowthSize())
	assert.Equal(t, []string{"fsession-multi", "kprobe-session", "fentry-fexit-each"}, pm.GrowthMechanisms(), "no peer, no vfs_read-only one")

	fix := anchor(t, pm, "tracing_multi attach fix")
	require.Empty(t, fix.Missing)
	assert.Equal(t, "7.2.13 → 7.3", fix.Between())
	var steps []string
	for _, s := range fix.AttachSteps {
		steps = append(steps, fmt.Sprintf("%s %s %s %+.0f%% %s", s.Mechanism, s.Measure.Name, s.Size, 100*s.Share(), fix.AttachAgreement(s)))
	}
	assert.Equal(t, []string{"fsession-multi Start all -50% same direction", "fsession-multi Close all -50% they measured attach"}, steps,
		"the largest set both measured; only mechanisms attaching with the change's kinds")
	assert.Contains(t, fix.Summary(), "fsession-multi Start on all -50.0%")
	assert.Equal(t, "no kernel with a growth run (Start and Close) on one side of 6.8", anchor(t, pm, "kprobe_multi attach regression").Missing)

	var md strings.Builder
	require.NoError(t, pm.WriteMarkdown(&md, filepath.Dir(dir), dir))
	assertContains(t, md.String(),
		"| mechanism | 7.2.13 | 7.3 |\n|---|---:|---:|\n| fsession-multi | +2000 [2000, 2000] | +2000 [2000, 2000] |\n",
		"The size of the readpath set per kernel: 7.2.13 16, 7.3 16 functions.",
		"Not measured: kprobe-session on 7.2.13, 7.3: Start failed:",
		"| fsession-multi | 2.00 | 1.00 |\n| kprobe-session | stops at all | stops at all |\n",
		"| fentry-fexit-each | stops at n1000 | stops at n1000 |\n",
		"| fsession-multi | Start | all | 2.00 | 1.00 | -50.0% | same direction |\n",
		"| 0123456789ab, 700 s, exit 0: [README](001/7.3-amd64/growth/README.md) |",
	)
	var js strings.Builder
	require.NoError(t, pm.JSON(&js))
	assert.Contains(t, js.String(), `"Measure": "Close, CPUs busy"`)
	assert.Contains(t, js.String(), `"Series": "fsession-multi (readpath)"`, "the read path among the figures, with its interval")
	charts := pm.Charts()
	require.Len(t, charts, 3)
	var svg strings.Builder
	require.NoError(t, charts[2].Draw(&svg, "svg"))
	assert.Contains(t, svg.String(), "fsession-multi")

	// A growth run of another kernel than its directory's is refused.
	require.NoError(t, os.Rename(filepath.Join(dir, "7.3-amd64", "growth"), filepath.Join(dir, "6.18.15+deb13-amd64", "growth")))
	_, err = LoadPerfMatrix(runs, nil)
	assert.ErrorContains(t, err, "a run on 7.3-amd64, not on 6.18.15+deb13-amd64")
}

// editRaw replaces each match of pattern in run's raw.txt with repl.
func editRaw(t *testing.T, run, pattern, repl string) {
	t.Helper()
	path := filepath.Join(run, RawFile)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(pattern)
	require.True(t, re.Match(raw), "%s has no %q", path, pattern)
	require.NoError(t, os.WriteFile(path, re.ReplaceAll(raw, []byte(repl)), 0o644))
}

// The growth runs compare only like with like: one CPU count, the sets
// both runs measured, read path steps between sets of one size; an
// attach step within 3% is no change; a mechanism's kinds come from the
// growth run where the overhead run does not name them.
func TestPerfMatrixGrowthComparesLikeWithLike(t *testing.T) {
	dir := t.TempDir()
	costs := map[string]int{"fexit": 160}
	runs := []string{kernelRun(t, dir, "7.2.13+deb14-amd64", costs), kernelRun(t, dir, "7.3-amd64", costs)}
	growthRun(t, dir, "7.2.13+deb14-amd64", 1)
	growthRun(t, dir, "7.3-amd64", 0.99)
	g72, g73 := filepath.Join(runs[0], "growth"), filepath.Join(runs[1], "growth")
	// fsession-multi's floor only in the growth runs.
	for _, r := range runs {
		editRaw(t, r, `tracebench-floor-fsession-multi: [^\n]*\n`, "")
	}
	for _, g := range []string{g72, g73} {
		editRaw(t, g, `tracebench-clock: icount\n`, "tracebench-clock: icount\ntracebench-floor-fsession-multi: fsession.multi\n")
	}
	// 7.3 did not run the set all; its read path costs 1000 more.
	editRaw(t, g73, `(?m)^(`+suite.MultiSetPrefix+`all: .*|BenchmarkMultiStart/.*/all.*)\n`, "")
	editRaw(t, g73, `readpath-2 20000 300`, "readpath-2 20000 400")

	pm, err := LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	assert.Equal(t, "n10000", pm.GrowthSize(), "the largest set both runs measured")
	fix := anchor(t, pm, "tracing_multi attach fix")
	require.Empty(t, fix.Missing)
	require.NotEmpty(t, fix.AttachSteps, "fsession-multi's kinds read from the growth runs")
	assert.Equal(t, "n10000", fix.AttachSteps[0].Size)
	assert.Equal(t, "not resolved: within 3%", fix.AttachAgreement(fix.AttachSteps[0]), "Start -1%%")
	assert.Len(t, pm.Changes, 1, "the read path step between sets of one size")

	editRaw(t, g73, suite.MultiSetPrefix+`readpath: 16`, suite.MultiSetPrefix+"readpath: 17")
	pm, err = LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	assert.Empty(t, pm.Changes, "readpath sets of 16 and 17 functions are other work")

	editRaw(t, g73, `tracebench-cpus: 2`, "tracebench-cpus: 4")
	_, err = LoadPerfMatrix(runs, nil)
	assert.ErrorContains(t, err, "ran on 4 CPUs")
}

// A mechanism measured only on the read path is among the growth
// mechanisms; start.svg is drawn only where a generic kernel has a
// growth run.
func TestPerfMatrixGrowthOnlyReadpathOrFlavour(t *testing.T) {
	dir := t.TempDir()
	runs := []string{kernelRun(t, dir, "7.2.13+deb14-amd64", map[string]int{"fexit": 160}),
		kernelRun(t, dir, "7.2.13+deb14-rt-amd64", map[string]int{"fexit": 160})}
	growthRun(t, dir, "7.2.13+deb14-rt-amd64", 1)
	editRaw(t, filepath.Join(runs[1], "growth"), `(?m)^BenchmarkMultiStart/fsession-multi/.*\n`, "")
	pm, err := LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	assert.Contains(t, pm.GrowthMechanisms(), "fsession-multi")
	assert.Len(t, pm.Charts(), 2, "no generic kernel has a growth run")
	var md strings.Builder
	require.NoError(t, pm.WriteMarkdown(&md, filepath.Dir(dir), dir))
	assert.NotContains(t, md.String(), startChartFile)
}

func columnNames(cols []*Column) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name())
	}
	return out
}

func TestPerfMatrixRefusesOtherClocksAndTwins(t *testing.T) {
	dir := t.TempDir()
	a := kernelRun(t, dir, "7.2.13+deb14-amd64", map[string]int{"fexit": 160})
	twin := filepath.Join(dir, "copy")
	require.NoError(t, os.CopyFS(twin, os.DirFS(a)))
	_, err := LoadPerfMatrix([]string{a, twin}, nil)
	assert.ErrorContains(t, err, "runs of one kernel, 7.2.13+deb14-amd64")

	raw, err := os.ReadFile(filepath.Join(a, RawFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, RawFile), []byte(strings.ReplaceAll(string(raw), "tracebench-clock: icount", "tracebench-clock: wall")), 0o644))
	_, err = LoadPerfMatrix([]string{a}, nil)
	assert.ErrorContains(t, err, `its clock is "wall", not icount`)
}

func anchor(t *testing.T, pm *PerfMatrix, name string) AnchorAnswer {
	t.Helper()
	return named(t, pm.Anchors, name, func(a AnchorAnswer) string { return a.Name })
}

func TestPerfMatrixHeadline(t *testing.T) {
	dir := t.TempDir()
	runs := []string{
		kernelRun(t, dir, "6.18.15+deb13-amd64", map[string]int{"fentry-fexit/below-threshold": 900, "kprobe-kretprobe/below-threshold": 1500,
			"fentry-fexit-multi/below-threshold": 950}),
		kernelRun(t, dir, "7.2.13+deb14-amd64", map[string]int{"fentry-fexit/below-threshold": 900, "fsession/below-threshold": 500}),
	}
	pm, err := LoadPerfMatrix(runs, nil)
	require.NoError(t, err)
	h, err := pm.Headline()
	require.NoError(t, err)
	assert.Equal(t, "| kernel | fentry-fexit | fsession | kprobe-kretprobe | cheapest |\n|---|---:|---:|---:|---|\n"+
		"| 6.18.15+deb13-amd64 | +902 [900, 905] | – | +1502 [1500, 1505] | fentry-fexit (902) |\n"+
		"| 7.2.13+deb14-amd64 | +902 [900, 905] | +502 [500, 505] | – | fsession (502) |", h,
		"single-function designs only: fentry-fexit-multi left out")
}

const (
	gcc14 = "x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"
	gcc16 = "x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0"
)

// A figure without an interval (a sample missing from some rounds) is
// written without one, in the JSON too, and listed as imprecise.
func TestPerfMatrixFigureWithoutInterval(t *testing.T) {
	dir := t.TempDir()
	run := kernelRun(t, dir, "7.2.13+deb14-amd64", map[string]int{"fexit": 160, "kprobe": 300})
	raw, err := os.ReadFile(filepath.Join(run, RawFile))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(raw), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "BenchmarkVFSRead/kprobe/floor") })
	require.NoError(t, os.WriteFile(filepath.Join(run, RawFile), []byte(strings.Join(slices.Delete(lines, i, i+1), "")), 0o644))
	pm, err := LoadPerfMatrix([]string{run}, nil)
	require.NoError(t, err)
	var js strings.Builder
	require.NoError(t, pm.JSON(&js))
	assert.Contains(t, pm.Imprecise(), "kprobe floor on 7.2.13 (no interval: n=5)")
}
