// Package procgroup starts the guest runners (vm/run.sh,
// vm/run-initramfs.sh) so that a Go program interrupted by SIGINT or
// SIGTERM stops them: each in a process group of its own, sent SIGTERM
// once a context is done. The runners pass it on to their guest; a runner
// killed alone would leave QEMU running.
package procgroup

import (
	"context"
	"os/exec"
	"syscall"
)

// Start starts cmd in a process group of its own and sends the group
// SIGTERM once ctx is done. It returns ctx's error, without starting cmd,
// if ctx is done already. Call release after cmd.Wait.
func Start(ctx context.Context, cmd *exec.Cmd) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) })
	return func() { stop() }, nil
}
