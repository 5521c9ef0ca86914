package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/asmdecl"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/buildtag"
	"golang.org/x/tools/go/analysis/passes/cgocall"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/directive"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/framepointer"
	"golang.org/x/tools/go/analysis/passes/hostport"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stdversion"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
	"golang.org/x/tools/go/packages"

	"tracebench/internal/arches"
)

// TestEveryArchBuilds type-checks the whole module, tests included, for
// every architecture of internal/arches, and vets the packages whose files differ
// from the host's there: one whose BPF objects were not generated fails
// here, on any host. It type-checks from source (go/packages) instead of
// running `go build` and `go vet` per GOARCH, which compile the standard
// library and every dependency for each architecture first (a minute
// each on a fresh 2-core host); `make unit` vets the host's with `go vet`.
// A tree that passed (treeKey) is not checked again: the check takes
// 40-80 s, and the same files type-check the same way.
func TestEveryArchBuilds(t *testing.T) {
	root := moduleRoot(t)
	if passed := passedBefore(t, root); passed != "" {
		t.Logf("this tree passed before (%s): not type-checked again", passed)
		return
	}
	hostPkgs := load(t, root, runtime.GOARCH)
	host := filesByPackage(hostPkgs)
	for _, arch := range arches.GOARCHes() {
		t.Run(arch, func(t *testing.T) {
			t.Parallel() // each loads and type-checks alone: 45 s one after another, 31 s on 2 CPUs
			pkgs := hostPkgs
			if arch != runtime.GOARCH {
				pkgs = load(t, root, arch)
			}
			var differ []*packages.Package
			packages.Visit(pkgs, nil, func(p *packages.Package) {
				for _, e := range p.Errors {
					t.Errorf("GOARCH=%s %s: %s", arch, p.PkgPath, e)
				}
			})
			for _, p := range pkgs {
				if !slices.Equal(host[p.ID], p.CompiledGoFiles) {
					differ = append(differ, p)
				}
			}
			if arch != runtime.GOARCH {
				assert.NotEmpty(t, differ, "the BPF objects' packages have files of each architecture")
			}
			graph, err := checker.Analyze(vet, differ, nil)
			require.NoError(t, err)
			for act := range graph.All() {
				for _, d := range act.Diagnostics {
					t.Errorf("GOARCH=%s vet %s: %s: %s", arch, act.Analyzer.Name, act.Package.Fset.Position(d.Pos), d.Message)
				}
			}
		})
	}
}

// passedBefore returns the marker of an earlier pass of this tree, or ""
// after arranging for a pass to leave one, in the user's cache directory
// (tracebench/every-arch-builds/<treeKey>).
func passedBefore(t *testing.T, root string) string {
	dir, err := os.UserCacheDir()
	require.NoError(t, err)
	marker := filepath.Join(dir, "tracebench", "every-arch-builds", treeKey(t, root))
	if _, err := os.Stat(marker); err == nil {
		return marker
	}
	t.Cleanup(func() {
		if !t.Failed() {
			require.NoError(t, os.MkdirAll(filepath.Dir(marker), 0o755))
			require.NoError(t, os.WriteFile(marker, nil, 0o644))
		}
	})
	return ""
}

// treeKey hashes what `go list` and the type-checker read: the go
// command's version and settings (go env) and every file under root,
// paths included, but Markdown files and those of results/ and of dot
// directories (.git, .cache), which no package embeds.
func treeKey(t *testing.T, root string) string {
	h := sha256.New()
	env, err := exec.Command("go", "env", "GOVERSION", "GOROOT", "GOFLAGS", "GOEXPERIMENT", "GOTOOLCHAIN").Output()
	require.NoError(t, err, "go env")
	h.Write(env)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || path == filepath.Join(root, "results")):
			return filepath.SkipDir
		case !d.Type().IsRegular() || strings.HasSuffix(path, ".md"):
			return nil
		}
		content, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%q %d\n", rel, len(content))
		h.Write(content)
		return err
	})
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// load type-checks the module's packages, tests included, for arch.
func load(t *testing.T, root, arch string) []*packages.Package {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: root, Tests: true,
		Env: append(os.Environ(), "GOARCH="+arch, "CGO_ENABLED=0")}
	pkgs, err := packages.Load(cfg, "./...")
	require.NoError(t, err, "GOARCH=%s", arch)
	return pkgs
}

// filesByPackage are the Go files each package compiles, by package ID.
func filesByPackage(pkgs []*packages.Package) map[string][]string {
	files := map[string][]string{}
	for _, p := range pkgs {
		files[p.ID] = p.CompiledGoFiles
	}
	return files
}

// vet are the analyzers `go vet` runs by default (cmd/vet's main.go).
var vet = []*analysis.Analyzer{
	appends.Analyzer, asmdecl.Analyzer, assign.Analyzer, atomic.Analyzer, bools.Analyzer, buildtag.Analyzer,
	cgocall.Analyzer, composite.Analyzer, copylock.Analyzer, defers.Analyzer, directive.Analyzer,
	errorsas.Analyzer, framepointer.Analyzer, hostport.Analyzer, httpresponse.Analyzer, ifaceassert.Analyzer,
	loopclosure.Analyzer, lostcancel.Analyzer, nilfunc.Analyzer, printf.Analyzer, shift.Analyzer,
	sigchanyzer.Analyzer, slog.Analyzer, stdmethods.Analyzer, stdversion.Analyzer, stringintconv.Analyzer,
	structtag.Analyzer, testinggoroutine.Analyzer, tests.Analyzer, timeformat.Analyzer, unmarshal.Analyzer,
	unreachable.Analyzer, unsafeptr.Analyzer, unusedresult.Analyzer, waitgroup.Analyzer,
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func TestBpf2goArgs(t *testing.T) {
	target := strings.Join(arches.GOARCHes(), ",")
	assert.Equal(t, strings.Fields("tool bpf2go -cc clang-19 -target "+target+" -no-global-types "+
		"-go-package bpfobj -output-dir internal/bpfobj KprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -- "+
		"-I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations -DSESSION_KFUNCS_WITHOUT_CTX"),
		bpf2goArgs("internal/bpfobj", "KprobeSessionNoCtx", "../bpf/kprobe_session.bpf.c", []string{"-DSESSION_KFUNCS_WITHOUT_CTX"}))
	assert.Equal(t, strings.Fields("tool bpf2go -cc clang-19 -target "+target+" -no-global-types "+
		"Floors ../../bpf/floors.bpf.c -- -I../../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations"),
		bpf2goArgs("", "Floors", "../../bpf/floors.bpf.c", nil))
}

// treeKey changes with any file's content, name or presence, and not with
// what dot directories, results/ or Markdown files hold.
func TestTreeKey(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	write("a.go", "package a")
	keys := map[string]bool{treeKey(t, root): true}
	for _, change := range []func(){
		func() { write("a.go", "package b") },
		func() { write("sub/b.go", "package b") },
		func() {
			require.NoError(t, os.Rename(filepath.Join(root, "sub/b.go"), filepath.Join(root, "sub/c.go")))
		},
	} {
		change()
		key := treeKey(t, root)
		assert.False(t, keys[key], "a changed tree has a new key")
		keys[key] = true
	}
	before := treeKey(t, root)
	write(".cache/x.go", "package x")
	write("results/r.txt", "a result")
	write("README.md", "# a")
	assert.Equal(t, before, treeKey(t, root), "dot directories, results/ and Markdown files are not part of the tree")
}
