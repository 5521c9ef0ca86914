package tracers

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byteOrder writes and appends in one byte order.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// byteOrders are the orders BPF objects are built in: little-endian for
// most architectures, big-endian for s390x.
var byteOrders = []byteOrder{binary.LittleEndian, binary.BigEndian}

func otherOrder(order binary.ByteOrder) binary.ByteOrder {
	if order == binary.BigEndian {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// u64s writes vs in order, as the BPF programs lay out a struct of __u64s.
func u64s(order byteOrder, vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = order.AppendUint64(b, v)
	}
	return b
}

// TestSumStats adds up two CPUs' struct stats written in either order.
func TestSumStats(t *testing.T) {
	for _, order := range byteOrders {
		t.Run(order.String(), func(t *testing.T) {
			perCPU := [][]byte{u64s(order, 100, 7, 3, 1, 2, 1), u64s(order, 1<<33, 1, 0, 0, 5, 4)}
			s, err := sumStats(perCPU, order)
			require.NoError(t, err)
			assert.Equal(t, FunctionStats{Calls: 100 + 1<<33, Slow: 8, Errors: 3, Dropped: 1, Lost: 7, Overwritten: 5}, s)
			swapped, err := sumStats(perCPU, otherOrder(order))
			require.NoError(t, err)
			assert.NotEqual(t, s.Calls, swapped.Calls, "the order given decides")

			_, err = sumStats([][]byte{u64s(order, 1, 2, 3, 4, 5)}, order)
			assert.ErrorContains(t, err, "decode a tracers.rawStats")
		})
	}
}

// TestSumCounts adds up the per-CPU copies of a histogram slot or the
// per-TGID overflow written in either order.
func TestSumCounts(t *testing.T) {
	for _, order := range byteOrders {
		n, err := sumCounts([][]byte{u64s(order, 3), u64s(order, 1<<40), u64s(order, 0)}, order)
		require.NoError(t, err)
		assert.Equal(t, uint64(3+1<<40), n, "%s", order)
		_, err = sumCounts([][]byte{u64s(order, 3, 4)}, order)
		assert.ErrorContains(t, err, "16 bytes", "%s: a value larger than a __u64", order)
	}
}

// TestDecodeTGIDRow decodes a tgid_latency entry written in either order.
func TestDecodeTGIDRow(t *testing.T) {
	for _, order := range byteOrders {
		key := order.AppendUint32(nil, 4321)
		row, err := decodeTGIDRow(key, u64s(order, 25, 267181000, 85415000), order)
		require.NoError(t, err)
		assert.Equal(t, TGIDLatency{TGID: 4321, Calls: 25, Total: 267181 * time.Microsecond, Max: 85415 * time.Microsecond},
			row, "%s", order)
		_, err = decodeTGIDRow(key, u64s(order, 25, 267181000), order)
		assert.Error(t, err, "%s: a value short of struct tgid_stats", order)
		_, err = decodeTGIDRow(key[:2], u64s(order, 25, 267181000, 85415000), order)
		assert.Error(t, err, "%s: a key short of a __u32", order)
	}
}

// TestEntryFunction reads the function index from the cookie of a
// per-thread entry (struct call_entry: ns, requested, cookie) written in
// either order.
func TestEntryFunction(t *testing.T) {
	for _, order := range byteOrders {
		entry := u64s(order, 123456789, 4096, 1<<41|8<<32|5) // errno, 8 bytes, index 5
		f, err := entryFunction(entry, 16, order)
		require.NoError(t, err)
		assert.Equal(t, 5, f, "%s", order)
		swapped, err := entryFunction(entry, 16, otherOrder(order))
		require.NoError(t, err)
		assert.NotEqual(t, f, swapped, "%s: the order given decides", order)

		f, err = entryFunction(entry[:16], -1, order)
		require.NoError(t, err)
		assert.Equal(t, 0, f, "%s: entries without a cookie are the one function's", order)
		_, err = entryFunction(entry[:20], 16, order)
		assert.ErrorContains(t, err, "per-thread entry is 20 bytes", "%s", order)
	}
}

// goarchOrders is each architecture's byte order, as the hardware has it.
var goarchOrders = map[string]binary.ByteOrder{
	"386": binary.LittleEndian, "amd64": binary.LittleEndian, "arm64": binary.LittleEndian,
	"ppc64le": binary.LittleEndian, "riscv64": binary.LittleEndian, "s390x": binary.BigEndian,
}

// buildConstraint is the GOARCHes of a bpf2go Go file, "a || b".
var buildConstraint = regexp.MustCompile(`(?m)^//go:build (.+)$`)

// TestEveryArchObject: every architecture's BPF objects, not only the
// host's, are in that architecture's byte order (the records are decoded
// in it) and lay out the event, counters and per-TGID rows as the Go
// side decodes them.
func TestEveryArchObject(t *testing.T) {
	sources, err := filepath.Glob("internal/bpfobj/*_bpfe[lb].go")
	require.NoError(t, err)
	require.NotEmpty(t, sources)
	for _, source := range sources {
		t.Run(filepath.Base(source), func(t *testing.T) {
			code, err := os.ReadFile(source)
			require.NoError(t, err)
			m := buildConstraint.FindSubmatch(code)
			require.NotNil(t, m, "the build constraint of %s", source)
			var want binary.ByteOrder
			for _, goarch := range strings.Split(string(m[1]), " || ") {
				order, ok := goarchOrders[goarch]
				require.True(t, ok, "%s is built for %s, whose byte order goarchOrders lacks", source, goarch)
				require.True(t, want == nil || want == order, "%s is built for both byte orders", source)
				want = order
			}

			spec, err := ebpf.LoadCollectionSpec(source[:len(source)-len(".go")] + ".o")
			require.NoError(t, err)
			assert.Equal(t, want, spec.ByteOrder, "byte order of the object for %s", m[1])
			assertLayout(t, spec, "event", reflect.TypeFor[rawEvent]())
			assertLayout(t, spec, "stats", reflect.TypeFor[rawStats]())
			assertLayout(t, spec, "tgid_stats", reflect.TypeFor[rawTGIDStats]())
		})
	}
}
