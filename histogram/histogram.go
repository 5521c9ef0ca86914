// Package histogram is the log2 latency histogram that tracebench's BPF
// objects count (HIST_SLOTS and log2_u64 in bpf/vfsread.h), the CLI prints
// and the peer tools' histograms are summed into. It imports nothing of
// tracebench, so that tracers, peers and the CLI share it.
package histogram

import (
	"math"
	"math/bits"
)

// Slots is the number of slots of a Log2 (HIST_SLOTS in bpf/vfsread.h).
const Slots = 32

// Log2 counts calls by latency in log2 slots of microseconds, like
// biolatency and funclatency: slot i counts latencies in [2^i, 2^(i+1)) µs,
// slot 0 also those under 1 µs, and the last slot every latency of
// 2^(Slots-1) µs or more. See SlotRange.
type Log2 [Slots]uint64

// SlotRange returns the latencies slot i counts, in microseconds, both
// ends included; high is math.MaxUint64 for the last, open-ended slot.
func SlotRange(i int) (lowUS, highUS uint64) {
	if i == 0 {
		return 0, 1
	}
	low := uint64(1) << i
	if i == Slots-1 {
		return low, math.MaxUint64
	}
	return low, 2*low - 1
}

// SlotOf returns the slot that counts a latency of us microseconds, the
// inverse of SlotRange.
func SlotOf(us uint64) int {
	if us < 2 {
		return 0
	}
	return min(bits.Len64(us)-1, Slots-1)
}

// Total returns the number of calls in h.
func (h Log2) Total() uint64 {
	var n uint64
	for _, c := range h {
		n += c
	}
	return n
}
