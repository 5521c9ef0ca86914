package tracers

import (
	"reflect"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/histogram"
)

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
	eachObject(t, func(t *testing.T, spec *ebpf.CollectionSpec) {
		assertLayout(t, spec, "tgid_stats", reflect.TypeFor[rawTGIDStats]())
		require.Contains(t, spec.Maps, "latency_hist")
		assert.Equal(t, uint32(histogram.Slots), spec.Maps["latency_hist"].MaxEntries)
		require.Contains(t, spec.Maps, "tgid_latency")
		assert.Equal(t, uint32(MaxTGIDs), spec.Maps["tgid_latency"].MaxEntries)
		assert.Contains(t, spec.Maps, "tgid_overflow")
		for _, v := range []string{"count_histogram", "count_per_tgid"} {
			assert.Contains(t, spec.Variables, v)
		}
	})
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
