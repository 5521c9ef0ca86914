package main

// Transcripts of CLI runs, as a terminal shows them, for README.md's
// samples: the host goldens in testdata/ hold the runs whose output is the
// same on any machine (help, bad command lines); the guest tests write
// theirs to -transcripts DIR (make cli-samples).

import (
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var (
	update         = flag.Bool("update", false, "rewrite the golden transcripts in testdata/ with what the CLI prints now")
	transcriptsDir = flag.String("transcripts", "", "directory the guest tests write the transcripts of their CLI runs to, one file per test")
)

// The prompts: what needs no privilege, and a traced run (root).
const (
	userPrompt = "$"
	rootPrompt = "#"
)

// transcript is one CLI run: its command line, then its stdout and stderr
// lines in the order they came. Safe for concurrent use.
type transcript struct {
	mu     sync.Mutex
	text   strings.Builder
	stdout []byte // stdout after its last newline
}

// newTranscript starts the transcript of tracebench args.
func newTranscript(prompt string, args []string) *transcript {
	tr := &transcript{}
	tr.text.WriteString(prompt + " " + commandLine(args) + "\n")
	return tr
}

// Write takes stdout, line by line, so that a stderr line never splits one.
func (tr *transcript) Write(p []byte) (int, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.stdout = append(tr.stdout, p...)
	if i := strings.LastIndexByte(string(tr.stdout), '\n'); i >= 0 {
		tr.text.Write(tr.stdout[:i+1])
		tr.stdout = tr.stdout[i+1:]
	}
	return len(p), nil
}

// stderrLine takes one stderr line, without its newline.
func (tr *transcript) stderrLine(line string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.text.WriteString(line + "\n")
}

// String is the run's transcript, its last stdout line ended.
func (tr *transcript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	text := tr.text.String()
	if len(tr.stdout) > 0 {
		text += string(tr.stdout) + "\n"
	}
	return text
}

// runTranscript runs tracebench args as runCLI does and returns its
// transcript (stdout, then stderr: a run in-process writes one or the
// other here) besides what runCLI returns.
func runTranscript(prompt string, args ...string) (run string, code int, stdout, stderr string) {
	code, stdout, stderr = runCLI(args...)
	tr := newTranscript(prompt, args)
	tr.Write([]byte(stdout))
	for line := range strings.Lines(stderr) {
		tr.stderrLine(strings.TrimSuffix(line, "\n"))
	}
	return tr.String(), code, stdout, stderr
}

// shellSafe are arguments a shell takes as they are.
var shellSafe = regexp.MustCompile(`^[\w@%+=:,./-]+$`)

// commandLine is "tracebench args" as typed into a shell.
func commandLine(args []string) string {
	words := []string{"tracebench"}
	for _, a := range args {
		if !shellSafe.MatchString(a) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// testTranscripts are the transcripts of each test's CLI runs, by test.
var testTranscripts sync.Map // *testing.T -> *strings.Builder

// testTempDir is a directory t.TempDir made: a transcript shows the
// files in it by name.
var testTempDir = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/Test[^/\s]*/\d+/`)

// record adds a finished run's transcript to t's; with -transcripts, t's
// are written to DIR/<test name>.txt once t passed, the test's temporary
// directories left out of paths.
func record(t *testing.T, run string) {
	if *transcriptsDir == "" {
		return
	}
	b, loaded := testTranscripts.LoadOrStore(t, &strings.Builder{})
	b.(*strings.Builder).WriteString(run)
	if loaded {
		return
	}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		path := filepath.Join(*transcriptsDir, strings.ReplaceAll(t.Name(), "/", "-")+".txt")
		text := testTempDir.ReplaceAllString(b.(*strings.Builder).String(), "")
		assert.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	})
}

// runCLIRecorded is runCLI as root whose transcript record keeps.
func runCLIRecorded(t *testing.T, args ...string) (code int, stdout, stderr string) {
	run, code, stdout, stderr := runTranscript(rootPrompt, args...)
	record(t, run)
	return code, stdout, stderr
}

// missingPID is the largest PID --pid takes, PID_MAX_LIMIT-1.
const missingPID = pidMaxLimit - 1

// goldenRuns are the runs whose output is the same on any machine, by
// golden file in testdata/: README.md includes them.
var goldenRuns = map[string][][]string{
	"trace-help.txt": {{"trace", "-h"}},
	"list-help.txt":  {{"list", "-h"}},
	"usage-errors.txt": {
		{"trace", "--threshold-us", "-5"}, {"trace", "--mechanism", "nope"},
		{"trace", "--duration", "0"}, {"trace", "--pid", "abc"}, {"trace", "--histogram", "extra"},
	},
	"no-such-process.txt": {{"trace", "--pid", fmt.Sprint(missingPID)}},
}

// goldens are testdata/ as built into the test binary, which also runs in
// guests without the source tree.
//
//go:embed testdata/*.txt
var goldens embed.FS

// TestGoldenTranscripts: the goldens are what the CLI prints now; -update
// rewrites them in the package's directory (make docs does).
func TestGoldenTranscripts(t *testing.T) {
	require.ErrorIs(t, unix.Kill(missingPID, 0), unix.ESRCH, "a process has PID %d", missingPID)
	for name, runs := range goldenRuns {
		var b strings.Builder
		for _, args := range runs {
			run, _, _, _ := runTranscript(userPrompt, args...)
			b.WriteString(run)
		}
		path := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
			continue
		}
		golden, err := goldens.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(golden), b.String(), "%s is stale: go test ./cmd/tracebench -run TestGoldenTranscripts -update", path)
	}
}

func TestCommandLine(t *testing.T) {
	assert.Equal(t, `tracebench trace --functions 'vfs_*' --pid 42 @list.txt 'it'\''s'`,
		commandLine([]string{"trace", "--functions", "vfs_*", "--pid", "42", "@list.txt", "it's"}))
}

func TestTranscriptKeepsLinesWhole(t *testing.T) {
	tr := newTranscript(rootPrompt, []string{"list"})
	tr.Write([]byte("EVENT a"))
	tr.stderrLine("warning")
	tr.Write([]byte("=1\nSUMMARY"))
	assert.Equal(t, "# tracebench list\nwarning\nEVENT a=1\nSUMMARY\n", tr.String())
	assert.Equal(t, "@nested.set", testTempDir.ReplaceAllString("@"+filepath.Join(t.TempDir(), "nested.set"), ""))
}
