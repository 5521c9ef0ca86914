package tracers

import (
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
)

// cookieProbeFunction is the function the cookie probe attaches to, and
// cookieProbeValue the cookie it gives it.
const (
	cookieProbeFunction = DefaultFunction
	cookieProbeValue    = 1
	cookieNotSeen       = ^uint64(0) // the probe's program did not run
)

// kprobeMultiCookies checks, once per process, that a kprobe_multi program
// reads the cookie its link gave the function: the kernel looks it up by
// the address the call entered at. On ppc64el (7.2.13) it gives 0 for
// nearly every function, so runs of every function read as the set's
// first: a mechanism naming functions by cookie cannot count there.
var kprobeMultiCookies = sync.OnceValues(probeKprobeMultiCookie)

// requireKprobeMultiCookies fails m as unsupported where kprobeMultiCookies
// saw a wrong cookie; an error that is no verdict is returned as is.
func requireKprobeMultiCookies(m Mechanism) error {
	seen, err := kprobeMultiCookies()
	switch {
	case err != nil:
		return m.classify(fmt.Errorf("%s: checking kprobe_multi cookies: %w", m.Name, err))
	case seen == cookieNotSeen:
		return fmt.Errorf("%s: checking kprobe_multi cookies: a kprobe.multi program on %s did not run in a read(2) of "+
			"/dev/zero", m.Name, cookieProbeFunction)
	case seen != cookieProbeValue:
		return m.unsupported(fmt.Sprintf("bpf_get_attach_cookie() in a kprobe.multi program on %s read %d where its "+
			"kprobe_multi link gave %d: the kernel does not find the cookie of the address the call entered at",
			cookieProbeFunction, seen, cookieProbeValue))
	}
	return nil
}

// probeKprobeMultiCookie attaches a kprobe.multi program to
// cookieProbeFunction with cookieProbeValue, reads a byte of /dev/zero
// and returns the cookie the program read in this process's call
// (cookieNotSeen if none ran).
func probeKprobeMultiCookie() (uint64, error) {
	seen, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return 0, err
	}
	defer seen.Close()
	if err := seen.Put(uint32(0), cookieNotSeen); err != nil {
		return 0, err
	}
	prog, err := kernelbtf.NewProgram(&ebpf.ProgramSpec{Name: "probe_kcookie", Type: ebpf.Kprobe,
		AttachType: ebpf.AttachTraceKprobeMulti, License: "GPL", Instructions: cookieProgram(seen, uint32(os.Getpid()))})
	if err != nil {
		return 0, err
	}
	defer prog.Close()
	l, err := link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{cookieProbeFunction},
		Cookies: []uint64{cookieProbeValue}})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	if err := readZero(); err != nil {
		return 0, err
	}
	var cookie uint64
	return cookie, seen.Lookup(uint32(0), &cookie)
}

// cookieProgram stores the attach cookie in seen[0] when a thread of tgid
// runs it.
func cookieProgram(seen *ebpf.Map, tgid uint32) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(tgid), "exit"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.StoreImm(asm.R10, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, seen.FD()),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.StoreMem(asm.R0, 0, asm.R7, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	}
}

// readZero reads one byte of /dev/zero.
func readZero() error {
	fd, err := unix.Open("/dev/zero", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Read(fd, make([]byte, 1))
	return err
}
