package histogram

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSlotRange(t *testing.T) {
	tests := []struct {
		slot      int
		low, high uint64
	}{
		{0, 0, 1},
		{1, 2, 3},
		{2, 4, 7},
		{10, 1024, 2047},
		{Slots - 2, 1 << 30, 1<<31 - 1},
		{Slots - 1, 1 << 31, math.MaxUint64},
	}
	for _, tt := range tests {
		low, high := SlotRange(tt.slot)
		assert.Equal(t, [2]uint64{tt.low, tt.high}, [2]uint64{low, high}, "slot %d", tt.slot)
	}
}

// TestSlotsCoverEveryLatency checks the slots tile the microseconds with
// neither gaps nor overlaps, as the BPF side's log2 assigns them, and that
// SlotOf puts both ends of each slot in it.
func TestSlotsCoverEveryLatency(t *testing.T) {
	_, prevHigh := SlotRange(0)
	for i := 1; i < Slots; i++ {
		low, high := SlotRange(i)
		assert.Equal(t, prevHigh+1, low, "slot %d starts where slot %d ends", i, i-1)
		assert.Less(t, low, high, "slot %d", i)
		prevHigh = high
	}
	for i := range Slots {
		low, high := SlotRange(i)
		assert.Equal(t, i, SlotOf(low), "low end of slot %d", i)
		assert.Equal(t, i, SlotOf(high), "high end of slot %d", i)
	}
}

func TestTotal(t *testing.T) {
	var h Log2
	h[0], h[5], h[Slots-1] = 3, 4, 5
	assert.Equal(t, uint64(12), h.Total())
}
