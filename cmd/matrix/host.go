package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"tracebench/matrix"
)

// Guests are CPU-bound TCG emulators: other guests on the 2-core host slow
// ours down, so the report says how many there were and how loaded the
// host was. These intervals bound how often /proc is read for that.
const (
	sampleInterval    = 10 * time.Second
	quietPollInterval = 10 * time.Second
)

// otherGuests counts running QEMU system emulators that this process did
// not start (directly or through vng).
func otherGuests() int {
	n := 0
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || !isQEMU(pid) || descendsFrom(pid, os.Getpid()) {
			continue
		}
		n++
	}
	return n
}

func isQEMU(pid int) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	argv0, _, _ := strings.Cut(string(cmdline), "\x00")
	return strings.HasPrefix(filepath.Base(argv0), "qemu-system")
}

// descendsFrom follows pid's parents up to ancestor or init.
func descendsFrom(pid, ancestor int) bool {
	for pid > 1 {
		if pid == ancestor {
			return true
		}
		pid = parentOf(pid)
	}
	return false
}

// parentOf reads the ppid from /proc/PID/stat, whose second field (the
// command name) may hold spaces and parentheses: the fields after the last
// ')' are "state ppid ...". 0 if the process is gone.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	fields := strings.Fields(rest)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// load1 is the host's 1-minute load average, -1 if unreadable.
func load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	first, _, _ := strings.Cut(string(raw), " ")
	v, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return -1
	}
	return v
}

// waitQuiet polls for other guests to end, at most limit; it returns how
// long it waited and how many were running when it stopped waiting.
func waitQuiet(limit time.Duration) (time.Duration, int) {
	start := time.Now()
	n := otherGuests()
	if n > 0 && limit > 0 {
		progressf("waiting up to %s for %d other QEMU guests to end", limit, n)
	}
	for n > 0 && time.Since(start) < limit {
		time.Sleep(quietPollInterval) // polling the condition, bounded by limit
		n = otherGuests()
	}
	return time.Since(start), n
}

// sampler records the host's load and other guests while a kernel runs.
type sampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	load matrix.HostLoad
	sum  float64
}

func startSampling() *sampler {
	s := &sampler{done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		tick := time.NewTicker(sampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *sampler) sample() {
	others, load := otherGuests(), load1()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load.OtherGuestsMax = max(s.load.OtherGuestsMax, others)
	s.sum += load
	s.load.Samples++
}

// stop ends the sampling and returns the summary.
func (s *sampler) stop() matrix.HostLoad {
	close(s.done)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load.LoadMean = s.sum / float64(s.load.Samples)
	return s.load
}

func hostRelease() string {
	raw, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(raw))
}

func qemuVersion() string {
	out, err := exec.Command("qemu-system-x86_64", "--version").Output()
	if err != nil {
		return "QEMU not found"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}
