package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layoutBlock returns the code block of CONTRIBUTING.md's Layout section.
func layoutBlock(t *testing.T, root string) string {
	readme, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "## Layout\n\n```\n")
	require.True(t, ok, "CONTRIBUTING.md has a Layout section with a code block")
	block, _, ok = strings.Cut(block, "\n```")
	require.True(t, ok, "the Layout block ends")
	return block
}

// layoutEntry is the start of a line of the layout block: the paths it
// describes, comma-separated, before two spaces or a tab.
var layoutEntry = regexp.MustCompile(`(?m)^([^\s,]+(?:, [^\s,]+)*)`)

// CONTRIBUTING.md's layout names every Go package and every top-level
// directory of the tree, and every path it describes exists, so the
// listing shows the architecture as it is.
func TestLayout(t *testing.T) {
	root := sourceTree(t)
	block := layoutBlock(t, root)
	// named: path itself, as a word; with below, a path under it will do.
	named := func(path string, below bool) bool {
		end := `/?([\s,;:)]|$)`
		if below {
			end = `(/|[\s,;:)]|$)`
		}
		return regexp.MustCompile(`(^|[\s(,])` + regexp.QuoteMeta(path) + end).MatchString(block)
	}

	var packages []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(rel, ".go") && !slices.Contains(packages, filepath.Dir(rel)) {
			packages = append(packages, filepath.Dir(rel))
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, packages)
	for _, p := range packages {
		assert.True(t, named(p, false), "CONTRIBUTING.md's layout does not name package %s", p)
	}

	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			assert.True(t, named(e.Name(), true), "CONTRIBUTING.md's layout does not name directory %s/", e.Name())
		}
	}

	for _, m := range layoutEntry.FindAllStringSubmatch(block, -1) {
		for _, path := range strings.Split(m[1], ", ") {
			_, err := os.Stat(filepath.Join(root, path))
			assert.NoError(t, err, "CONTRIBUTING.md's layout describes %s", path)
		}
	}
}
