package tracefs

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Pipe reads an instance's trace_pipe, opened non-blocking (it is
// pollable, so the runtime poller serves deadlines and Close interrupts a
// read), and hands out whole lines.
type Pipe struct {
	file       *os.File
	raw        syscall.RawConn
	chunk, buf []byte // read buffer; bytes read but not yet handed out
}

// OpenPipe opens the instance's trace_pipe.
func (in Instance) OpenPipe() (*Pipe, error) {
	f, err := os.OpenFile(in.Path("trace_pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Pipe{file: f, raw: raw, chunk: make([]byte, 64<<10)}, nil
}

// Next returns the next whole line read so far.
func (p *Pipe) Next() (string, bool) {
	line, rest, ok := bytes.Cut(p.buf, []byte{'\n'})
	if !ok {
		return "", false
	}
	p.buf = rest
	return string(line), true
}

// Read appends what trace_pipe has, waiting until deadline (a past one
// takes what is there). It returns os.ErrDeadlineExceeded when nothing
// came, also at end of file: once tracing is off, nothing can come.
func (p *Pipe) Read(deadline time.Time) error {
	var n int
	var readErr error
	read := func(fd uintptr) bool {
		n, readErr = unix.Read(int(fd), p.chunk)
		return readErr != unix.EAGAIN
	}
	var err error
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		err = p.raw.Control(func(fd uintptr) { read(fd) })
	} else if err = p.file.SetReadDeadline(deadline); err == nil {
		err = p.raw.Read(read)
	}
	switch {
	case err != nil:
		return err
	case readErr == unix.EAGAIN || readErr == nil && n == 0:
		return os.ErrDeadlineExceeded
	case readErr != nil:
		return fmt.Errorf("read trace_pipe: %w", readErr)
	}
	p.buf = append(p.buf, p.chunk[:n]...)
	return nil
}

// Close closes trace_pipe, interrupting a blocked Read.
func (p *Pipe) Close() error { return p.file.Close() }
