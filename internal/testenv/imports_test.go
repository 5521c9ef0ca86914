package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is tracebench's module path.
const module = "tracebench"

// listedPackage is what `go list -json` says of a package's imports.
type listedPackage struct {
	ImportPath, Name                   string
	Imports, TestImports, XTestImports []string
}

// TestInternalImportsOnlyInternal: an internal package, tests included,
// imports no tracebench package outside internal/ directories, so that
// every package, tracers among them, can use the internal ones and their
// tests.
func TestInternalImportsOnlyInternal(t *testing.T) {
	packages := listPackages(t, module+"/...")
	var internal int
	for _, p := range packages {
		if !isInternal(p.ImportPath) {
			continue
		}
		internal++
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if isOurs(imp) && !isInternal(imp) {
				t.Errorf("%s imports %s, which is not an internal package", p.ImportPath, imp)
			}
		}
	}
	assert.GreaterOrEqual(t, internal, 2, "internal packages listed: %v", packages)
}

func TestIsInternal(t *testing.T) {
	for path, internal := range map[string]bool{
		"tracebench/internal/testenv":        true,
		"tracebench/tracers/internal/bpfobj": true,
		"tracebench/tracers":                 false,
		"tracebench/tracers/tracerstest":     false,
		"tracebench/internalish":             false,
	} {
		assert.Equal(t, internal, isInternal(path), path)
	}
}

func isOurs(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

func isInternal(path string) bool {
	return isOurs(path) && (strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal"))
}

// TestBinariesLinkNoTestSupport: no package a binary of the module links
// imports testing or testify (test support such as this package), so a
// binary carries no test code and registers no test flags.
func TestBinariesLinkNoTestSupport(t *testing.T) {
	var binaries int
	for _, main := range listPackages(t, module+"/...") {
		if main.Name != "main" {
			continue
		}
		binaries++
		for _, p := range listPackages(t, "-deps", main.ImportPath) {
			if isTestSupport(p.ImportPath) {
				continue
			}
			for _, imp := range p.Imports {
				if isTestSupport(imp) {
					t.Errorf("%s links %s, which imports %s", main.ImportPath, p.ImportPath, imp)
				}
			}
		}
	}
	assert.GreaterOrEqual(t, binaries, 4, "main packages listed")
}

func TestIsTestSupport(t *testing.T) {
	for path, support := range map[string]bool{
		"testing":                             true,
		"github.com/stretchr/testify/require": true,
		"testing/fstest":                      false,
		"tracebench/internal/testenv":         false, // caught by what it imports
		"tracebench/internal/poll":            false,
	} {
		assert.Equal(t, support, isTestSupport(path), path)
	}
}

// isTestSupport says whether path is the testing package or testify's.
func isTestSupport(path string) bool {
	return path == "testing" || strings.HasPrefix(path, "github.com/stretchr/testify/")
}

// listPackages runs `go list -json` with args (flags, then patterns).
func listPackages(t *testing.T, args ...string) []listedPackage {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("listing the module's imports needs the go command: %v", err)
	}
	out, err := exec.Command(gocmd, append([]string{"list", "-json=ImportPath,Name,Imports,TestImports,XTestImports"}, args...)...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("go list: %v: %s", err, exit.Stderr)
	}
	require.NoError(t, err, "go list")
	var packages []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return packages
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		packages = append(packages, p)
	}
}
