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
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// TestInternalImportsOnlyInternal: an internal package, tests included,
// imports no tracebench package outside internal/ directories, so that
// every package, tracers among them, can use the internal ones and their
// tests.
func TestInternalImportsOnlyInternal(t *testing.T) {
	packages := listPackages(t)
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

// listPackages runs `go list -json` on every package of the module.
func listPackages(t *testing.T) []listedPackage {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("listing the module's imports needs the go command: %v", err)
	}
	out, err := exec.Command(gocmd, "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...").Output()
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
