package workload

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stepsFD is where the helper finds the step word (ExtraFiles[1]).
const stepsFD = pipeFD + 1

// stepWord is a word of memory the helper and its parent share: the
// helper stores 1 + the index of each blocking step it starts, so that
// the parent, which looks for the step's sleeping readers in /proc (each
// look a read(2)), starts looking only then. Reads of the parent's while
// the helper's other steps run would meet the helper's in the traced
// programs: a run preempted on one CPU makes the trampoline skip (count
// missed) every other run of the program on that CPU, 129 of them in one
// zero-threshold run in the 7.2 guest. A plain store and load: no system
// call, nothing a tracer of the read path sees.
type stepWord struct {
	mem []byte
}

// newStepWord creates the word in a memfd and returns the file to hand
// the helper.
func newStepWord() (stepWord, *os.File, error) {
	fd, err := unix.MemfdCreate("tracebench-steps", unix.MFD_CLOEXEC)
	if err != nil {
		return stepWord{}, nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "tracebench-steps")
	if err := unix.Ftruncate(fd, int64(os.Getpagesize())); err != nil {
		f.Close()
		return stepWord{}, nil, fmt.Errorf("ftruncate the step word: %w", err)
	}
	w, err := mapStepWord(fd)
	if err != nil {
		f.Close()
		return stepWord{}, nil, err
	}
	return w, f, nil
}

// mapStepWord maps the word at fd, writing it once so that later loads
// and stores take no page fault (the helper's would be traced calls).
func mapStepWord(fd int) (stepWord, error) {
	mem, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return stepWord{}, fmt.Errorf("mmap the step word: %w", err)
	}
	w := stepWord{mem: mem}
	w.word().Store(w.word().Load())
	return w, nil
}

func (w stepWord) word() *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&w.mem[0])) }

// started records that the blocking step index starts.
func (w stepWord) started(index int) { w.word().Store(uint32(index) + 1) }

// reached reports whether the helper started blocking step index or a
// later one.
func (w stepWord) reached(index int) bool { return w.word().Load() > uint32(index) }

func (w stepWord) unmap() error {
	if w.mem == nil {
		return nil
	}
	return unix.Munmap(w.mem)
}
