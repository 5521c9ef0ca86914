package workload

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestStackFunctions(t *testing.T) {
	raw := []byte("[<0>] pipe_read+0x31e/0x460\n[<0>] vfs_read+0x2b8/0x300\n[<0>] nfs_file_read+0x5a/0xa0 [nfs]\n" +
		"[<0>] entry_SYSCALL_64_after_hwframe+0x76/0x7e\n")
	assert.Equal(t, []string{"pipe_read", "vfs_read", "nfs_file_read", "entry_SYSCALL_64_after_hwframe"},
		StackFunctions(raw))
	assert.Empty(t, StackFunctions(nil))
}

// TestAsleepCountsBlockedReaders: while the readers of a blocking step
// sleep in their pipe read, Asleep finds each of them in vfs_read, and
// they are still asleep when looked at again.
func TestAsleepCountsBlockedReaders(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("/proc/PID/task/TID/stack is root's; running as euid %d", os.Geteuid())
	}
	const readers = 3
	p, err := Start(Plan{DelayedPipeReads(1, 10*time.Millisecond).OnThreads(readers)})
	require.NoError(t, err)
	defer p.Close()
	p.WhenBlocked(func(_ int, tids []int) error {
		s, err := p.Asleep(time.Now().Add(30 * time.Second))
		if errors.Is(err, ErrNoKernelStack) {
			t.Skipf("kernel %s: %v", unameRelease(t), err)
		}
		require.NoError(t, err)
		assert.Equal(t, uint64(len(tids)), s.In("vfs_read"), "readers %v, stacks %v", tids, s.stacks)
		assert.Zero(t, s.In("no_such_function"))
		still, err := p.StillAsleep(s)
		require.NoError(t, err)
		assert.True(t, still)
		return nil
	})
	_, err = p.Run(time.Minute)
	require.NoError(t, err)
}

func unameRelease(t *testing.T) string {
	var u unix.Utsname
	require.NoError(t, unix.Uname(&u))
	return unix.ByteSliceToString(u.Release[:])
}
