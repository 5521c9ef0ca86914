// Package hostload tells how busy the host is for a guest run: other QEMU
// guests (CPU-bound TCG emulators that slow ours down on a small host) and
// the load average. cmd/matrix and cmd/bench wait for quiet with it, and
// sample it while their guests run, so that their reports can say so.
package hostload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"tracebench/internal/poll"
)

// quietPollInterval bounds how often WaitQuiet reads /proc.
const quietPollInterval = 10 * time.Second

// OtherGuests counts running QEMU system emulators that this process did
// not start (directly or through vng or a script).
func OtherGuests() int {
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

// Release is the host kernel's release (uname -r), "unknown" if unreadable.
func Release() string { return kernelValue("osrelease") }

// kernelValue is /proc/sys/kernel/NAME, trimmed; "unknown" if unreadable.
func kernelValue(name string) string {
	raw, err := os.ReadFile("/proc/sys/kernel/" + name)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(raw))
}

// CPUModel is the host CPU's model name from /proc/cpuinfo (e.g. "AMD
// EPYC"): wall-clock guest times under TCG follow it. Where cpuinfo
// names none (arm64), the machine's architecture (uname -m).
func CPUModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(raw), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" && strings.TrimSpace(value) != "" {
			return strings.TrimSpace(value)
		}
	}
	return kernelValue("arch")
}

// Averages are /proc/loadavg's 1, 5 and 15-minute load averages, as
// printed there ("0.52 0.58 0.59"); "unknown" if unreadable.
func Averages() string {
	raw, err := os.ReadFile("/proc/loadavg")
	fields := strings.Fields(string(raw))
	if err != nil || len(fields) < 3 {
		return "unknown"
	}
	return strings.Join(fields[:3], " ")
}

// load1 is the 1-minute load average, -1 if unreadable.
func load1() float64 {
	first, _, _ := strings.Cut(Averages(), " ")
	v, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return -1
	}
	return v
}

// WaitQuiet polls for other guests to end, at most limit; waiting, if it
// does, is announced with their number first. It returns how long it
// waited and how many were running when it stopped waiting.
func WaitQuiet(limit time.Duration, announce func(others int)) (time.Duration, int) {
	start := time.Now()
	n := OtherGuests()
	if n > 0 && limit > 0 {
		announce(n)
	}
	for n > 0 && time.Since(start) < limit {
		time.Sleep(quietPollInterval) // polling the condition, bounded by limit
		n = OtherGuests()
	}
	return time.Since(start), n
}

// Summary describes the host over a sampled period.
type Summary struct {
	OtherGuestsMax    int     // most other guests seen at once
	LoadMean, LoadMax float64 // mean and highest 1-minute load average
	Samples           int
}

// Sampler samples the host at an interval until stopped.
type Sampler struct {
	stop func()
	mu   sync.Mutex
	sum  Summary
	load float64 // the loads' sum
}

// Start takes a sample now and then one every interval.
func Start(interval time.Duration) *Sampler {
	s := &Sampler{}
	s.sample()
	s.stop = poll.Every(interval, func() bool { s.sample(); return true })
	return s
}

func (s *Sampler) sample() {
	others, load := OtherGuests(), load1()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.OtherGuestsMax = max(s.sum.OtherGuestsMax, others)
	s.sum.LoadMax = max(s.sum.LoadMax, load)
	s.load += load
	s.sum.Samples++
}

// Stop ends the sampling and returns the summary.
func (s *Sampler) Stop() Summary {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.LoadMean = s.load / float64(s.sum.Samples)
	return s.sum
}
