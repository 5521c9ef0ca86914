package peers

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/workload"
)

// plannedCalls is how many vfs_read calls a row's plan makes.
func plannedCalls(r row) int {
	n := 0
	for _, s := range r.plan {
		n += s.Count * max(1, s.Threads)
	}
	return n
}

// spinTime is the user-space busy time of a row's plan, summed over its
// threads.
func spinTime(r row) time.Duration {
	var d time.Duration
	for _, s := range r.plan {
		d += time.Duration(s.Count*max(1, s.Threads)) * s.Gap
	}
	return d
}

var reproCalls = regexp.MustCompile(`(?m)^(\d+) vfs_read calls`)

// TestReproMatchesRows runs repro.py, the rows as a maintainer's workload,
// for every row (its wait cut to 0) and holds the vfs_read calls it says
// it made to the row's plan; the script knows exactly the rows' names.
func TestReproMatchesRows(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("repro.py needs python3: %v", err)
	}
	out, _ := exec.Command(python, "repro.py", "no-such-row").CombinedOutput()
	m := regexp.MustCompile(`rows: ([^)]*)\)`).FindSubmatch(out)
	require.NotNil(t, m, "repro.py's answer to an unknown row: %s", out)
	var names []string
	for _, r := range rows() {
		names = append(names, r.name)
	}
	assert.Equal(t, names, strings.Split(string(m[1]), ", "), "repro.py's rows")
	// The rows sleep rather than spin: all run at once, more than
	// t.Parallel's GOMAXPROCS would let run on a 2-CPU host.
	started := map[string]*reproRun{}
	for _, r := range rows() {
		if skipRepro(r) == "" {
			started[r.name] = startRepro(t, python, r.name)
		}
	}
	for _, r := range rows() {
		t.Run(r.name, func(t *testing.T) {
			if why := skipRepro(r); why != "" {
				t.Skip(why)
			}
			run := started[r.name]
			err := run.cmd.Wait()
			if slices.ContainsFunc(r.plan, func(s workload.Step) bool { return s.Op == workload.KilledRead }) {
				require.Error(t, err, "the killed reader's process dies of SIGKILL")
			} else {
				require.NoError(t, err, "%s", run.stderr.String())
			}
			m := reproCalls.FindSubmatch(run.stderr.Bytes())
			require.NotNil(t, m, "no call count in %q", run.stderr.String())
			n, _ := strconv.Atoi(string(m[1]))
			assert.Equal(t, plannedCalls(r), n, "%s: repro.py's calls vs the row's plan", r.name)
		})
	}
}

// skipRepro says why a row is not run through repro.py here ("": it is).
func skipRepro(r row) string {
	if r.pidMax > 0 {
		return fmt.Sprintf("%d threads one after another take minutes in Python", plannedCalls(r))
	}
	if spin := spinTime(r); spin > time.Second {
		return fmt.Sprintf("the row spins %v in user space, one thread at a time under Python's GIL", spin)
	}
	return ""
}

// reproRun is repro.py running one row.
type reproRun struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startRepro starts repro.py on the row called name (its wait cut to 0);
// the test's end kills it if it still runs.
func startRepro(t *testing.T, python, name string) *reproRun {
	run := &reproRun{cmd: exec.Command(python, "repro.py", name)}
	run.cmd.Env = append(run.cmd.Environ(), "WAIT=0", "TMPDIR="+t.TempDir())
	run.cmd.Stderr = &run.stderr
	require.NoError(t, run.cmd.Start())
	t.Cleanup(func() { run.cmd.Process.Kill() })
	return run
}
