package tracers

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{HistogramSlots - 2, 1 << 30, 1<<31 - 1},
		{HistogramSlots - 1, 1 << 31, math.MaxUint64},
	}
	for _, tt := range tests {
		low, high := SlotRange(tt.slot)
		assert.Equal(t, [2]uint64{tt.low, tt.high}, [2]uint64{low, high}, "slot %d", tt.slot)
	}
}

// TestSlotsCoverEveryLatency checks the slots tile the microseconds with
// neither gaps nor overlaps, as the BPF side's log2 assigns them.
func TestSlotsCoverEveryLatency(t *testing.T) {
	_, prevHigh := SlotRange(0)
	for i := 1; i < HistogramSlots; i++ {
		low, high := SlotRange(i)
		assert.Equal(t, prevHigh+1, low, "slot %d starts where slot %d ends", i, i-1)
		assert.Less(t, low, high, "slot %d", i)
		prevHigh = high
	}
}

func TestHistogramTotal(t *testing.T) {
	var h Histogram
	h[0], h[5], h[HistogramSlots-1] = 3, 4, 5
	assert.Equal(t, uint64(12), h.Total())
}

func TestSortByTotal(t *testing.T) {
	rows := []TGIDLatency{
		{TGID: 7, Total: time.Millisecond},
		{TGID: 9, Total: time.Second},
		{TGID: 3, Total: time.Millisecond},
	}
	sortByTotal(rows)
	assert.Equal(t, []uint32{9, 3, 7}, []uint32{rows[0].TGID, rows[1].TGID, rows[2].TGID})
}

// TestAggregatesInEveryObject checks that every mechanism's object carries
// the aggregates with the sizes and layout the Go side reads.
func TestAggregatesInEveryObject(t *testing.T) {
	for _, m := range bpfMechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			spec, err := m.spec()
			require.NoError(t, err)
			assertLayout(t, spec, "tgid_stats", reflect.TypeFor[rawTGIDStats]())
			require.Contains(t, spec.Maps, "latency_hist")
			assert.Equal(t, uint32(HistogramSlots), spec.Maps["latency_hist"].MaxEntries)
			require.Contains(t, spec.Maps, "tgid_latency")
			assert.Equal(t, uint32(MaxTGIDs), spec.Maps["tgid_latency"].MaxEntries)
			assert.Contains(t, spec.Maps, "tgid_overflow")
			for _, v := range []string{"count_histogram", "count_per_tgid"} {
				assert.Contains(t, spec.Variables, v)
			}
		})
	}
}

func TestConfigureAggregates(t *testing.T) {
	spec, err := fsession.spec()
	require.NoError(t, err)
	require.NoError(t, configureAggregates(spec, Config{Histogram: true}))
	var on, perTGID bool
	require.NoError(t, spec.Variables["count_histogram"].Get(&on))
	require.NoError(t, spec.Variables["count_per_tgid"].Get(&perTGID))
	assert.True(t, on)
	assert.False(t, perTGID)
	assert.Equal(t, uint32(1), spec.Maps["tgid_latency"].MaxEntries, "table shrunk when off")
}

func TestAggregatesNotCountedUnlessConfigured(t *testing.T) {
	tr := &tracer{}
	_, err := tr.Histogram()
	assert.ErrorContains(t, err, "histogram not counted")
	_, err = tr.PerTGID()
	assert.ErrorContains(t, err, "per-TGID table not counted")
	var _ Aggregator = tr
}
