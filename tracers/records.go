package tracers

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
)

// The BPF programs write their events, counters and aggregates in the
// kernel's byte order, which is their object's: bpf2go builds bpfeb
// objects for big-endian s390x and bpfel ones for the other
// architectures. Every value read from a map or the ring buffer is
// decoded here in the object's order (ebpf.CollectionSpec.ByteOrder),
// never assumed little-endian.

// decodeValue decodes b, one map value, into a T in order; an error
// unless b is exactly T's size.
func decodeValue[T any](b []byte, order binary.ByteOrder) (T, error) {
	var v T
	n, err := binary.Decode(b, order, &v)
	if err == nil && n != len(b) {
		err = fmt.Errorf("%d of its %d bytes decoded", n, len(b))
	}
	if err != nil {
		return v, fmt.Errorf("decode a %T: %w", v, err)
	}
	return v, nil
}

// lookupPerCPU returns each possible CPU's value at key of a per-CPU map,
// undecoded.
func lookupPerCPU(m *ebpf.Map, key uint32) ([][]byte, error) {
	var perCPU [][]byte
	err := m.Lookup(key, &perCPU)
	return perCPU, err
}

// sumStats adds up the per-CPU copies of struct stats of bpf/vfsread.h.
func sumStats(perCPU [][]byte, order binary.ByteOrder) (Stats, error) {
	var s Stats
	for _, b := range perCPU {
		c, err := decodeValue[rawStats](b, order)
		if err != nil {
			return Stats{}, err
		}
		s.Calls += c.Calls
		s.Slow += c.Slow
		s.Errors += c.Errors
		s.Dropped += c.Dropped
		s.Lost += c.Lost
	}
	return s, nil
}

// sumCounts adds up the per-CPU copies of a __u64 count.
func sumCounts(perCPU [][]byte, order binary.ByteOrder) (uint64, error) {
	var n uint64
	for _, b := range perCPU {
		v, err := decodeValue[uint64](b, order)
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

// decodeTGIDRow decodes one entry of tgid_latency (key: the __u32 TGID,
// value: struct tgid_stats).
func decodeTGIDRow(key, value []byte, order binary.ByteOrder) (TGIDLatency, error) {
	tgid, err := decodeValue[uint32](key, order)
	if err != nil {
		return TGIDLatency{}, err
	}
	raw, err := decodeValue[rawTGIDStats](value, order)
	if err != nil {
		return TGIDLatency{}, err
	}
	return TGIDLatency{TGID: tgid, Calls: raw.Calls, Total: time.Duration(raw.TotalNS), Max: time.Duration(raw.MaxNS)}, nil
}
