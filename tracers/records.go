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

// sumStats adds up the per-CPU copies of one function's struct stats of
// bpf/vfsread.h (Function, Missed, Pending and Unknown are the caller's).
func sumStats(perCPU [][]byte, order binary.ByteOrder) (FunctionStats, error) {
	var s FunctionStats
	for _, b := range perCPU {
		c, err := decodeValue[rawStats](b, order)
		if err != nil {
			return FunctionStats{}, err
		}
		s.Calls += c.Calls
		s.Slow += c.Slow
		s.Errors += c.Errors
		s.Dropped += c.Dropped
		s.Lost += c.Lost
		s.Overwritten += c.Overwritten
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

// entryFunction returns the function index in the cookie (a __u64, the
// index its low 32 bits, bpf/multi.h) at offset of value, one entry of
// the map "starts" (struct call_entry of bpf/calls.h); 0, the one traced
// function, where offset is negative (the entries hold no cookie).
func entryFunction(value []byte, offset int, order binary.ByteOrder) (int, error) {
	if offset < 0 {
		return 0, nil
	}
	if offset+8 > len(value) {
		return 0, fmt.Errorf("per-thread entry is %d bytes, its cookie at %d needs %d", len(value), offset, offset+8)
	}
	cookie, err := decodeValue[uint64](value[offset:offset+8], order)
	return int(uint32(cookie)), err
}
