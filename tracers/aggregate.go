package tracers

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"tracebench/histogram"
)

// MaxTGIDs is how many processes a TGIDTable holds (MAX_TGIDS in
// bpf/vfsread.h); calls of further processes are counted as overflow.
const MaxTGIDs = 4096

// TGIDLatency is what the calls of one process added up to.
type TGIDLatency struct {
	TGID  uint32        // process ID (thread group)
	Calls uint64        // calls counted in Stats.Calls
	Total time.Duration // sum of their latencies
	Max   time.Duration // the longest of them
}

// TGIDTable is the per-process aggregate of the calls in Stats.Calls.
type TGIDTable struct {
	// Processes has one row per process, by Total descending (TGID
	// ascending among equals).
	Processes []TGIDLatency
	// Overflow counts calls of processes that found the table full
	// (MaxTGIDs processes already in it): they are in Stats.Calls but in
	// no row, so the rows' Calls plus Overflow sum to Stats.Calls.
	Overflow uint64
}

// Aggregator is implemented by the Tracer of every mechanism whose BPF
// object counts through bpf/vfsread.h's record_return, i.e. every BPF
// mechanism; a Tracer that does not count in the kernel lacks it. Read
// after Drain, each aggregate sums to Stats.Calls; read while attached, it
// may lag behind the counters by the calls returning meanwhile.
type Aggregator interface {
	// Histogram returns the log2 latency histogram; Config.Histogram
	// must have been set.
	Histogram() (histogram.Log2, error)
	// PerTGID returns the per-process table; Config.PerTGID must have
	// been set.
	PerTGID() (TGIDTable, error)
}

// rawTGIDStats is struct tgid_stats of bpf/vfsread.h.
type rawTGIDStats struct {
	Calls, TotalNS, MaxNS uint64
}

// configureAggregates turns the aggregates cfg asks for on. The table is
// shrunk when off, since a hash map preallocates all its entries.
func configureAggregates(spec *ebpf.CollectionSpec, cfg Config) error {
	if !cfg.PerTGID {
		spec.Maps["tgid_latency"].MaxEntries = 1
	}
	return errors.Join(
		spec.Variables["count_histogram"].Set(cfg.Histogram),
		spec.Variables["count_per_tgid"].Set(cfg.PerTGID),
	)
}

var errNotCounted = errors.New("not counted: enable it in Config before Start")

func (t *tracer) Histogram() (histogram.Log2, error) {
	var h histogram.Log2
	if !t.cfg.Histogram {
		return h, fmt.Errorf("histogram %w", errNotCounted)
	}
	for i := range h {
		n, err := t.sumPerCPU("latency_hist", uint32(i))
		if err != nil {
			return h, fmt.Errorf("read histogram slot %d: %w", i, err)
		}
		h[i] = n
	}
	return h, nil
}

func (t *tracer) PerTGID() (TGIDTable, error) {
	var table TGIDTable
	if !t.cfg.PerTGID {
		return table, fmt.Errorf("per-TGID table %w", errNotCounted)
	}
	var key, value []byte
	it := t.objects.Maps["tgid_latency"].Iterate()
	for it.Next(&key, &value) {
		row, err := decodeTGIDRow(key, value, t.order)
		if err != nil {
			return table, fmt.Errorf("read per-TGID table: %w", err)
		}
		table.Processes = append(table.Processes, row)
	}
	if err := it.Err(); err != nil {
		return table, fmt.Errorf("read per-TGID table: %w", err)
	}
	sortByTotal(table.Processes)
	var err error
	if table.Overflow, err = t.sumPerCPU("tgid_overflow", 0); err != nil {
		return table, fmt.Errorf("read per-TGID overflow: %w", err)
	}
	return table, nil
}

func sortByTotal(rows []TGIDLatency) {
	slices.SortFunc(rows, func(a, b TGIDLatency) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.TGID, b.TGID))
	})
}

// sumPerCPU returns the sum over CPUs of the u64 at key of the object's
// per-CPU array name.
func (t *tracer) sumPerCPU(name string, key uint32) (uint64, error) {
	perCPU, err := lookupPerCPU(t.objects.Maps[name], key)
	if err != nil {
		return 0, err
	}
	return sumCounts(perCPU, t.order)
}
