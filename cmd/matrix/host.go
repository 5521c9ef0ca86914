package main

import (
	"os/exec"
	"strings"
	"time"

	"tracebench/internal/hostload"
	"tracebench/matrix"
)

// Guests are CPU-bound TCG emulators: other guests on the 2-core host slow
// ours down, so the report says how many there were and how loaded the
// host was, sampled at this interval.
const sampleInterval = 10 * time.Second

// waitQuiet waits up to limit for other guests to end (hostload.WaitQuiet).
func waitQuiet(limit time.Duration) (time.Duration, int) {
	return hostload.WaitQuiet(limit, func(n int) {
		progressf("waiting up to %s for %d other QEMU guests to end", limit, n)
	})
}

// sampler records the host's load and other guests while a kernel runs.
type sampler struct{ *hostload.Sampler }

func startSampling() sampler { return sampler{hostload.Start(sampleInterval)} }

// stop ends the sampling and returns the summary.
func (s sampler) stop() matrix.HostLoad {
	sum := s.Stop()
	return matrix.HostLoad{OtherGuestsMax: sum.OtherGuestsMax, LoadMean: sum.LoadMean, Samples: sum.Samples}
}

func qemuVersion() string {
	out, err := exec.Command("qemu-system-x86_64", "--version").Output()
	if err != nil {
		return "QEMU not found"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}
