package tracers

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// pipeThread runs every read of trace_pipe on one OS thread whose TID is
// in the instance's set_ftrace_notrace_pid: those reads are vfs_read calls
// too, and at threshold 0 the tracer would otherwise trace its own reads,
// each record read by the next read, for as long as it runs.
type pipeThread struct {
	tid   int
	calls chan func()
	quit  chan struct{}
}

func startPipeThread() *pipeThread {
	p := &pipeThread{calls: make(chan func()), quit: make(chan struct{})}
	tid := make(chan int)
	go func() {
		// Never unlocked: the thread exits with the goroutine.
		runtime.LockOSThread()
		tid <- unix.Gettid()
		for {
			select {
			case f := <-p.calls:
				f()
			case <-p.quit:
				return
			}
		}
	}()
	p.tid = <-tid
	return p
}

// run runs f on the thread and waits for it; false if the thread stopped.
func (p *pipeThread) run(f func()) bool {
	done := make(chan struct{})
	select {
	case p.calls <- func() { f(); close(done) }:
		<-done
		return true
	case <-p.quit:
		return false
	}
}

func (p *pipeThread) stop() { close(p.quit) }
