package workload

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/poll"
)

// Busy readers are processes of their own that keep reading until Stop,
// which leaves none behind.
func TestStartBusy(t *testing.T) {
	b, err := StartBusy(2)
	require.NoError(t, err)
	pids := b.PIDs()
	require.Len(t, pids, 2)
	for _, pid := range pids {
		assert.NotEqual(t, os.Getpid(), pid)
		first := readCalls(t, pid)
		assert.NoError(t, poll.Until(time.Now().Add(StartTimeout), time.Millisecond, "the reader's next reads",
			func() (bool, error) { return readCalls(t, pid) > first+100, nil }))
	}
	require.NoError(t, b.Stop())
	for _, pid := range pids {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		assert.True(t, os.IsNotExist(err), "reader %d gone after Stop", pid)
	}
}

func TestStartBusyRefusesNoReaders(t *testing.T) {
	_, err := StartBusy(0)
	assert.ErrorContains(t, err, "busy readers: 0")
}

// readCalls returns pid's read system calls (syscr of /proc/PID/io).
func readCalls(t *testing.T, pid int) uint64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	require.FailNow(t, "no syscr in /proc/PID/io")
	return 0
}
