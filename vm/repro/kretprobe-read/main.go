// Command kretprobe-read is the guest side of vm/repro/kretprobe-read.sh:
// a reproduction, without BPF and without tracebench's tracers, of the
// kernel panic that tracebench's kprobe-kretprobe mechanism caused on
// Debian's 7.2.13 ppc64el kernels ("stack-protector: Kernel stack is
// corrupted in: ksys_read+0x150/0x160").
//
// It defines one tracefs kprobe event on vfs_read (-probe kretprobe: an
// "r:" return probe; kprobe: a "p:" entry probe; none: no probe, the
// control), enables it and runs the phases of -phases for -iterations
// rounds, each phase with -threads OS threads blocked in read(2) of a
// pipe (a blocking one: no O_NONBLOCK, no Go poller):
//
//	kill:   a child process (this program re-executed) whose threads
//	        sleep in read(2) is SIGKILLed by this process;
//	wake:   this process's threads sleep in read(2) and are woken by
//	        writes from another thread, then read what is left;
//	unregister: like wake, but the probe is disabled and deleted while
//	        the threads sleep, and defined and enabled again after they
//	        returned (a return probe then has return instances pending
//	        while it is unregistered, as when a tracer holding it through
//	        a perf event is killed and the kernel closes that event).
//
// It prints one line per phase and round (the console shows how far it
// got when the kernel dies), then the probe's hit and miss counts from
// kprobe_profile, and "RESULT: survived ..." at the end; the script
// reports a panic from the guest's console. Must run as root in a guest
// with tracefs at /sys/kernel/tracing.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	tracing = "/sys/kernel/tracing"
	group   = "tbrepro"
	// childEnv makes the re-executed program the killed child of "kill".
	childEnv = "KRETPROBE_READ_CHILD"
)

func main() {
	if n := os.Getenv(childEnv); n != "" {
		child(n)
		return
	}
	probe := flag.String("probe", "kretprobe", "kretprobe, kprobe or none")
	phases := flag.String("phases", "kill,wake,unregister", "comma-separated phases: kill, wake, unregister")
	iterations := flag.Int("iterations", 500, "rounds of the phases")
	threads := flag.Int("threads", 4, "threads blocked in read(2) per phase")
	loglevel := flag.String("loglevel", "8", "console log level to set (/proc/sys/kernel/printk), so that a panic's call trace reaches the console; empty: leave it")
	optimize := flag.String("optimize", "", "write this (0 or 1) to /proc/sys/debug/kprobes-optimization first: 0 keeps every kprobe a trap, the kretprobe trampoline's too; empty: leave it")
	pin := flag.Bool("pin", false, "bind every thread of this process (and so of its children) to CPU 0 first: no thread migrates between CPUs")
	flag.Parse()
	if *pin {
		if err := pinToCPU0(); err != nil {
			fmt.Println("RESULT: error: pin:", err)
			os.Exit(1)
		}
	}
	if *optimize != "" {
		if err := os.WriteFile("/proc/sys/debug/kprobes-optimization", []byte(*optimize), 0); err != nil {
			fmt.Println("RESULT: error: kprobes-optimization:", err)
			os.Exit(1)
		}
	}
	if *loglevel != "" {
		if err := os.WriteFile("/proc/sys/kernel/printk", []byte(*loglevel), 0); err != nil {
			fmt.Println("RESULT: error: console log level:", err)
			os.Exit(1)
		}
	}
	if err := run(*probe, strings.Split(*phases, ","), *iterations, *threads); err != nil {
		fmt.Println("RESULT: error:", err)
		os.Exit(1)
	}
}

func run(probe string, phases []string, iterations, threads int) error {
	p, err := define(probe)
	if err != nil {
		return err
	}
	fmt.Printf("probe %s: %q, enabled; %d CPUs; phases %v x %d, %d threads\n",
		probe, p.def, runtime.NumCPU(), phases, iterations, threads)
	opt, _ := os.ReadFile("/proc/sys/debug/kprobes-optimization")
	list, _ := os.ReadFile("/sys/kernel/debug/kprobes/list")
	aff, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(aff), "\n") {
		if strings.HasPrefix(l, "Cpus_allowed_list:") {
			fmt.Println(strings.Join(strings.Fields(l), " "))
		}
	}
	fmt.Printf("kprobes-optimization %s; /sys/kernel/debug/kprobes/list:\n%s", strings.TrimSpace(string(opt)), list)
	start := time.Now()
	for i := 1; i <= iterations; i++ {
		for _, ph := range phases {
			var err error
			switch ph {
			case "kill":
				err = killPhase(threads)
			case "wake":
				err = wakePhase(threads, nil)
			case "unregister":
				err = wakePhase(threads, p)
			default:
				err = fmt.Errorf("unknown phase %q", ph)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", i, ph, err)
			}
			fmt.Printf("round %d %s ok\n", i, ph)
		}
	}
	fmt.Printf("profile: %s\n", p.profile())
	if err := p.remove(); err != nil {
		return fmt.Errorf("remove the probe: %w", err)
	}
	fmt.Printf("RESULT: survived %d rounds of %v with probe %s in %v\n",
		iterations, phases, probe, time.Since(start).Round(time.Millisecond))
	return nil
}

// probe is the tracefs kprobe event of the run; nothing for "none".
// hits and misses add up kprobe_profile's counts of the event's earlier
// definitions (removing it drops them).
type probe struct {
	def, name    string
	hits, misses uint64
}

func define(kind string) (*probe, error) {
	p := &probe{}
	switch kind {
	case "none":
		return p, nil
	case "kretprobe":
		p.name, p.def = "vfs_read_ret", "r:"+group+"/vfs_read_ret vfs_read ret=$retval"
	case "kprobe":
		p.name, p.def = "vfs_read_ent", "p:"+group+"/vfs_read_ent vfs_read count=$arg3"
	default:
		return nil, fmt.Errorf("unknown probe %q", kind)
	}
	return p, p.add()
}

// add defines the event and enables it.
func (p *probe) add() error {
	if p.name == "" {
		return nil
	}
	if err := appendFile(filepath.Join(tracing, "kprobe_events"), p.def); err != nil {
		return fmt.Errorf("define %q: %w", p.def, err)
	}
	return p.enable(true)
}

func (p *probe) enable(on bool) error {
	if p.name == "" {
		return nil
	}
	v := map[bool]string{true: "1", false: "0"}[on]
	return os.WriteFile(filepath.Join(tracing, "events", group, p.name, "enable"), []byte(v), 0)
}

// counts reads the event's hits and misses from kprobe_profile.
func (p *probe) counts() (hits, misses uint64, err error) {
	b, err := os.ReadFile(filepath.Join(tracing, "kprobe_profile"))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && strings.HasSuffix(f[0], p.name) {
			_, err := fmt.Sscan(f[1]+" "+f[2], &hits, &misses)
			return hits, misses, err
		}
	}
	return 0, 0, errors.New("not in kprobe_profile")
}

// profile says how often the probe fired and missed, all definitions.
func (p *probe) profile() string {
	if p.name == "" {
		return "no probe"
	}
	h, m, err := p.counts()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s hit %d times, missed %d", p.name, p.hits+h, p.misses+m)
}

// remove disables and deletes the event (the kernel unregisters the probe).
func (p *probe) remove() error {
	if p.name == "" {
		return nil
	}
	if err := p.enable(false); err != nil {
		return err
	}
	if h, m, err := p.counts(); err == nil {
		p.hits, p.misses = p.hits+h, p.misses+m
	}
	return appendFile(filepath.Join(tracing, "kprobe_events"), "-:"+group+"/"+p.name)
}

func appendFile(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// blockedReaders starts n OS threads, each in read(2) of the blocking pipe
// r until it returns; done is closed when all have returned.
func blockedReaders(r, n int) (done chan struct{}) {
	done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread() // one thread per reader; never unlocked, so it exits with the goroutine
			defer wg.Done()
			var buf [1]byte // one byte: one write wakes one reader
			for {
				if _, err := syscall.Read(r, buf[:]); !errors.Is(err, syscall.EINTR) {
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// sleepingInRead waits until n threads of process pid are in the read
// system call (per /proc/PID/task/*/syscall), for up to 5 s.
func sleepingInRead(pid, n int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		in := 0
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err == nil && strings.HasPrefix(string(b), fmt.Sprintf("%d ", syscall.SYS_READ)) {
				in++
			}
		}
		if in >= n {
			// The syscall file shows entry; give the threads time to get
			// through vfs_read's entry into pipe_read's sleep.
			time.Sleep(5 * time.Millisecond)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d threads of %d in read(2) after 5s", in, n, pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// pinToCPU0 sets the CPU affinity of each thread of this process to CPU
// 0; threads started later inherit it from the thread starting them.
func pinToCPU0() error {
	mask := [16]uint64{1} // 1024 CPUs, CPU 0 set
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		var tid int
		fmt.Sscan(filepath.Base(t), &tid)
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid),
			unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask))); errno != 0 {
			return fmt.Errorf("sched_setaffinity(%d): %w", tid, errno)
		}
	}
	return nil
}

// stacks returns the kernel stacks of pid's threads in read(2).
func stacks(pid int) string {
	var b strings.Builder
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, t := range tasks {
		sc, _ := os.ReadFile(t + "/syscall")
		if !strings.HasPrefix(string(sc), fmt.Sprintf("%d ", syscall.SYS_READ)) {
			continue
		}
		st, _ := os.ReadFile(t + "/stack")
		fmt.Fprintf(&b, "%s:\n%s", t, st)
	}
	return b.String()
}

// killPhase: a child with threads sleeping in read(2), SIGKILLed.
func killPhase(threads int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, threads))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := sleepingInRead(cmd.Process.Pid, threads); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return fmt.Errorf("child: %v, want killed by SIGKILL", err)
	}
	return nil
}

// child is the process killPhase kills: its threads sleep in read(2) of a
// pipe nobody writes to (the write end is held open) until it is killed.
func child(n string) {
	var threads int
	fmt.Sscan(n, &threads)
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		fmt.Println("child: pipe:", err)
		os.Exit(1)
	}
	<-blockedReaders(p[0], threads)
	fmt.Println("child: readers returned before the kill")
	os.Exit(1)
}

// wakePhase: threads sleeping in read(2) woken by writes from another
// thread; with p, p is disabled while they sleep and enabled after. Each
// reader gets one byte; then a few plain reads of available data.
func wakePhase(threads int, p *probe) error {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return err
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	done := blockedReaders(fds[0], threads)
	if err := sleepingInRead(os.Getpid(), threads); err != nil {
		syscall.Close(fds[1])
		<-done
		return err
	}
	if p != nil {
		if err := p.remove(); err != nil {
			return fmt.Errorf("unregister: %w", err)
		}
	}
	wrote := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range threads {
			if _, err := syscall.Write(fds[1], []byte{'x'}); err != nil {
				wrote <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		wrote <- nil
	}()
	if err := <-wrote; err != nil {
		return err
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("readers not woken within 10s; kernel stacks:\n%s", stacks(os.Getpid()))
	}
	if p != nil {
		if err := p.add(); err != nil {
			return fmt.Errorf("register again: %w", err)
		}
	}
	buf := make([]byte, 16)
	for range 8 { // plain reads, data already there
		if _, err := syscall.Write(fds[1], buf); err != nil {
			return err
		}
		if _, err := syscall.Read(fds[0], buf); err != nil {
			return err
		}
	}
	return nil
}
