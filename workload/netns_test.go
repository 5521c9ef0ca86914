package workload

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/internal/poll"
	"tracebench/internal/testenv"
)

// parentEnv makes this test binary, re-executed, play a test process that
// is interrupted mid-run: it starts a helper whose socket read it never
// answers and prints the namespace, the helper's pid and socket fd.
const parentEnv = "TRACEBENCH_WORKLOAD_TEST_PARENT"

func runParentIfRequested() {
	if _, ok := os.LookupEnv(parentEnv); !ok {
		return
	}
	p, err := Start(Plan{DelayedSocketReads(1, time.Hour)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		os.Exit(1)
	}
	fmt.Println(p.NetNS(), p.TGID(), p.sockFD)
	_, err = p.Run(2 * time.Hour) // sleeps the hour-long delay with the reader blocked
	fmt.Fprintln(os.Stderr, "parent not interrupted:", err)
	os.Exit(1)
}

// TestNetNSGoneAfterInterrupt: whatever ends the process that owns the
// namespace while its helper is blocked reading the socket, nothing holds
// the namespace afterwards. No handler closes anything: the kernel closes
// the process's descriptors and sockets, and Pdeathsig kills the helper.
func TestNetNSGoneAfterInterrupt(t *testing.T) {
	testenv.NetNS.Require(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { interruptParent(t, sig) })
	}
}

func interruptParent(t *testing.T, sig syscall.Signal) {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var ino uint64
	var helper, fd int
	_, err = fmt.Fscan(bufio.NewReader(stdout), &ino, &helper, &fd)
	require.NoError(t, err, "parent's line")

	deadline := time.Now().Add(StartTimeout)
	task := fmt.Sprintf("/proc/%d/task/%d/", helper, helper)
	require.NoError(t, poll.Until(deadline, pollInterval, "helper blocked in its socket read", func() (bool,
		error) {
		return blockedInRead(task, fd)
	}))
	holders, err := NetNSHolders(ino)
	require.NoError(t, err)
	require.NotEmpty(t, holders, "the live namespace is seen held")

	require.NoError(t, cmd.Process.Signal(sig))
	err = cmd.Wait()
	assert.ErrorContains(t, err, "signal: ", "parent died of %v", sig)
	holders, err = WaitNetNSReleased(ino, deadline)
	assert.NoError(t, err, "still held by %v", holders)
}
