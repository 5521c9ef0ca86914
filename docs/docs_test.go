package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = ".."

// Every committed document is what its template renders now.
func TestCommittedDocs(t *testing.T) {
	docs, err := Render(root)
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	for _, d := range docs {
		committed, err := os.ReadFile(filepath.Join(root, d.Path))
		require.NoError(t, err, "make docs writes %s", d.Path)
		assert.Equal(t, string(d.Text), string(committed), "%s is not what its template renders: run make docs", d.Path)
	}
}

// No template types a figure: each comes from an action.
func TestNoHandTypedFigures(t *testing.T) {
	paths, err := Templates(root)
	require.NoError(t, err)
	for _, p := range paths {
		raw, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		for _, f := range HandTyped(string(raw)) {
			t.Errorf("%s:%d: %q is typed by hand: read it from results/ (include, value, ...) or, "+
				"for a setting or constant, mark it {{ given %q }}", p, f.Line, f.Text, f.Text)
		}
	}
}

func TestHandTyped(t *testing.T) {
	for text, want := range map[string][]string{
		"took 12 minutes on 2 cores":                              {"12 minutes"},
		"+5824 [5823, 5824] over 954 instructions":                {"+5824", "5823", "5824", "954 instructions"},
		"lost 4190 of 4200 calls":                                 {"4190", "4200 calls"},
		"took 22-25 s, 6-11% more, ~120-180 MB":                   {"22-25 s", "6-11%", "~120-180 MB"},
		"ratio 0.43× and 3%":                                      {"0.43×", "3%"},
		"Linux 7.2.13+deb14-amd64, BPF_TRACE_FSESSION 58":         nil,
		"commit 59bd6eb and e1891b6, fprobe.c:683":                nil,
		"`--threshold-us 10000` and `10 ms` in code":              {"10 ms"},
		"{{ value \"f\" \"k\" }} reads in {{ given \"10 ms\" }}":  nil,
		"```\nmake test   # ~7 min\nSUMMARY calls=25 slow=4\n```": {"~7 min", "25"},
		"```\nvm/run.sh --timeout 900 -- x\n```":                  nil,
	} {
		var got []string
		for _, f := range HandTyped(text) {
			got = append(got, f.Text)
		}
		assert.ElementsMatch(t, want, got, "%q", text)
	}
}

// Every Markdown file of the repository is a rendered document, or a
// report written from results/ by its own command.
func TestEveryMarkdownIsRendered(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "*.md").Output()
	require.NoError(t, err)
	docs, err := Render(root)
	require.NoError(t, err)
	for _, path := range strings.Fields(string(out)) {
		if strings.HasPrefix(path, "results/") || strings.Contains(path, "/testdata/") {
			continue
		}
		assert.True(t, slices.ContainsFunc(docs, func(d Doc) bool { return d.Path == path }),
			"%s is typed by hand: make it %s/%s.tmpl", path, TemplateDir, path)
	}
}
