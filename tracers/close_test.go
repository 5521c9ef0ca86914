package tracers

import (
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloseInterruptsReadEvent holds the Tracer contract that Close may be
// called while ReadEvent blocks (run with -race to see a data race).
func TestCloseInterruptsReadEvent(t *testing.T) {
	events, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(os.Getpagesize())})
	if err != nil {
		t.Skipf("creating a BPF ring buffer map needs root and Linux 5.8: %v", err)
	}
	defer events.Close()
	reader, err := ringbuf.NewReader(events)
	require.NoError(t, err)
	tr := &tracer{events: reader}

	done := make(chan error, 1)
	go func() {
		_, err := tr.ReadEvent(time.Time{})
		done <- err
	}()
	require.NoError(t, tr.Close())
	select {
	case err := <-done:
		assert.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("ReadEvent still blocked 10 s after Close")
	}
	_, err = tr.ReadEvent(time.Now())
	assert.ErrorIs(t, err, os.ErrClosed, "ReadEvent after Close")
	assert.NoError(t, tr.Close(), "second Close")
}
