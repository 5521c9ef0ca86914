package tracers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeSecurityFS points securityFS at a directory holding files.
func fakeSecurityFS(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	saved := securityFS
	securityFS = dir
	t.Cleanup(func() { securityFS = saved })
}

var errRefusedLoad = fmt.Errorf("fentry-fexit: load: program vfs_read_entry: %w", unix.EPERM)

// EPERM as root under an active lockdown is a failure naming EPERM and
// the lockdown, not a skip as unsupported.
func TestRefusalUnderLockdownFails(t *testing.T) {
	fakeSecurityFS(t, map[string]string{
		"lockdown": "none integrity [confidentiality]\n", "lsm": "lockdown,capability,bpf\n"})
	err := fentryFexit.refused(errRefusedLoad)
	assert.NotErrorIs(t, err, ErrUnsupported)
	assert.ErrorIs(t, err, unix.EPERM)
	var refused *RefusedError
	require.ErrorAs(t, err, &refused)
	assert.True(t, refused.LockedDown())
	assert.Regexp(t, `^fentry-fexit: kernel \S+ refused it with EPERM although running as root: a policy, not a missing `+
		`feature \(lockdown: confidentiality; LSMs: lockdown,capability,bpf\): fentry-fexit: load: program vfs_read_entry: `+
		`operation not permitted$`, err.Error())
}

// Where nothing shows the cause (this project's CI host: securityfs not
// mounted), the refusal skips as unsupported, naming EPERM and what is
// unknown.
func TestRefusalOfUnknownCauseSkipsNamingEPERM(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		cause string // regexp
	}{
		"no securityfs": {nil, `\(lockdown: unknown \(open \S+/lockdown: no such file or directory\); ` +
			`LSMs: unknown \(open \S+/lsm: no such file or directory\)\)`},
		"no lockdown": {map[string]string{"lockdown": "[none] integrity confidentiality\n", "lsm": "capability,bpf\n"},
			`\(lockdown: none; LSMs: capability,bpf\)`},
		// This host, with securityfs mounted: integrity forbids no tracing.
		"integrity lockdown": {map[string]string{"lockdown": "none [integrity] confidentiality\n",
			"lsm": "lockdown,capability,landlock,bpf\n"}, `\(lockdown: integrity; LSMs: lockdown,capability,landlock,bpf\)`},
	} {
		fakeSecurityFS(t, c.files)
		err := fentryFexit.refused(errRefusedLoad)
		assert.ErrorIs(t, err, ErrUnsupported, name)
		assert.ErrorIs(t, err, unix.EPERM, name)
		assert.Regexp(t, `^fentry-fexit: kernel \S+ refused it with EPERM although running as root: a policy, `+
			`not a missing feature `+c.cause+`: fentry-fexit: load: program vfs_read_entry: operation not permitted$`,
			err.Error(), name)
	}
}

// classify maps EPERM to a refusal only as root; without root, EPERM is
// the missing privilege and stays as it is.
func TestClassifyEPERM(t *testing.T) {
	fakeSecurityFS(t, map[string]string{"lockdown": "none integrity [confidentiality]\n"})
	err := fentryFexit.classify(errRefusedLoad)
	var refused *RefusedError
	if os.Geteuid() == 0 {
		assert.True(t, errors.As(err, &refused), "root: %v", err)
		assert.NotErrorIs(t, err, ErrUnsupported)
	} else {
		assert.Equal(t, errRefusedLoad, err)
	}
}
