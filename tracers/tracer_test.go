package tracers

import (
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"tracebench/tracers/internal/bpfobj"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	page := os.Getpagesize()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means valid
	}{
		{"zero value", Config{}, ""},
		{"threshold and tgid", Config{Threshold: 10 * time.Millisecond, TGID: 42}, ""},
		{"one page", Config{RingBufferBytes: page}, ""},
		{"1 GiB", Config{RingBufferBytes: 1 << 30}, ""},
		{"negative threshold", Config{Threshold: -time.Nanosecond}, "threshold -1ns is negative"},
		{"max threshold", Config{Threshold: MaxThreshold}, ""},
		{"threshold above max", Config{Threshold: MaxThreshold + 1}, "threshold 1h0m0.000000001s exceeds 1h0m0s"},
		{"overflowed threshold", Config{Threshold: overflowed()}, "threshold -2562047h47m16.854775808s is negative"},
		{"maxactive", Config{KretprobeMaxActive: 1}, ""},
		{"maxactive negative", Config{KretprobeMaxActive: -1}, "kretprobe maxactive -1 is not between 0 and 4096"},
		{"maxactive above kernel max", Config{KretprobeMaxActive: 4097},
			"kretprobe maxactive 4097 is not between 0 and 4096"},
		{"thread map", Config{ThreadMapEntries: 64}, ""},
		{"thread map negative", Config{ThreadMapEntries: -1}, "per-thread map size -1 entries is not between 0 and"},
		{"thread map too large", Config{ThreadMapEntries: MaxThreadMapEntries + 1},
			"per-thread map size 4194305 entries"},
		{"ring not power of two", Config{RingBufferBytes: 3 * page}, "ring buffer size 12288 bytes"},
		{"ring below a page", Config{RingBufferBytes: page / 2}, "ring buffer size 2048 bytes"},
		{"ring above 1 GiB", Config{RingBufferBytes: 1 << 31}, "ring buffer size 2147483648 bytes"},
		{"ring negative", Config{RingBufferBytes: -page}, "ring buffer size -4096 bytes"},
		{"functions", Config{Functions: []string{"vfs_read", "anon_pipe_read", "__x64_sys_read"}}, ""},
		{"functions empty", Config{Functions: []string{}}, "function list is empty (nil traces vfs_read alone)"},
		{"function name empty", Config{Functions: []string{"vfs_read", ""}}, `function 2 of the list, "", is not a kernel function name`},
		{"function name with a blank", Config{Functions: []string{"vfs_read anon_pipe_read"}},
			`function 1 of the list, "vfs_read anon_pipe_read", is not a kernel function name`},
		{"function name with a newline", Config{Functions: []string{"vfs_read\n"}}, `"vfs_read\n", is not a kernel function name`},
		{"function twice", Config{Functions: []string{"vfs_read", "ksys_read", "vfs_read"}},
			`function "vfs_read" is given twice (items 1 and 3 of the list)`},
		{"too many functions", Config{Functions: make([]string, MaxFunctions+1)}, "65537 functions asked for, more than 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// overflowed is 2^63 ns computed the way a caller might, wrapping around.
func overflowed() time.Duration {
	d := time.Duration(1 << 62)
	return d * 2
}

func TestStartRejectsBadConfigBeforeLoading(t *testing.T) {
	for _, m := range Mechanisms() {
		_, err := m.Start(Config{Threshold: -time.Second})
		assert.ErrorContains(t, err, m.Name+": threshold -1s is negative")
	}
}

func TestLookupUnknownMechanism(t *testing.T) {
	_, err := Lookup("fentry")
	var known []string
	for _, m := range registry {
		known = append(known, m.Name)
	}
	assert.EqualError(t, err, `unknown mechanism "fentry" (known: `+strings.Join(known, ", ")+")")
	_, err = Start("nope", Config{})
	assert.ErrorContains(t, err, `unknown mechanism "nope"`)
}

func TestDecodeEvent(t *testing.T) {
	record := make([]byte, 56)
	binary.NativeEndian.PutUint32(record[0:], 1234)
	binary.NativeEndian.PutUint32(record[4:], 1200)
	binary.NativeEndian.PutUint64(record[8:], 4096)
	errno := int64(-21) // -EISDIR
	binary.NativeEndian.PutUint64(record[16:], uint64(errno))
	binary.NativeEndian.PutUint64(record[24:], 52_000_000)
	copy(record[32:], "scenarios.test\x00garbage")
	binary.NativeEndian.PutUint32(record[48:], 2)

	ev, function, err := decodeEvent(record)
	require.NoError(t, err)
	assert.Equal(t, Event{PID: 1234, TGID: 1200, Requested: 4096, Result: -21, Latency: 52 * time.Millisecond,
		Comm: "scenarios.test"}, ev)
	assert.Equal(t, uint32(2), function)

	full := make([]byte, 56)
	copy(full[32:], "0123456789abcdef") // comm without NUL uses all 16 bytes
	ev, _, err = decodeEvent(full)
	require.NoError(t, err)
	assert.Equal(t, "0123456789abcdef", ev.Comm)

	_, _, err = decodeEvent(record[:48])
	assert.EqualError(t, err, "event record is 48 bytes, want 56")
}

// TestLayoutsMatchBTF checks rawEvent and rawStats against the struct
// layouts clang emitted into every mechanism's object, so that a change to
// bpf/vfsread.h cannot silently garble decoding.
func TestLayoutsMatchBTF(t *testing.T) {
	eachObject(t, func(t *testing.T, spec *ebpf.CollectionSpec) {
		assertLayout(t, spec, "event", reflect.TypeFor[rawEvent]())
		assertLayout(t, spec, "stats", reflect.TypeFor[rawStats]())
		assert.Equal(t, uint32(DefaultRingBufferBytes), spec.Maps["events"].MaxEntries)
		for _, v := range []string{"threshold_ns", "target_tgid"} {
			assert.Contains(t, spec.Variables, v)
		}
	})
}

func assertLayout(t *testing.T, spec *ebpf.CollectionSpec, name string, goType reflect.Type) {
	t.Helper()
	var s *btf.Struct
	require.NoError(t, spec.Types.TypeByName(name, &s), "struct %s in BTF", name)
	require.Equal(t, int(s.Size), int(goType.Size()), "size of struct %s", name)
	require.Len(t, s.Members, goType.NumField(), "members of struct %s", name)
	for i, member := range s.Members {
		assert.Equal(t, uint32(goType.Field(i).Offset), member.Offset.Bytes(), "offset of %s.%s", name, member.Name)
	}
}

func TestUnsupportedErrorWrapsSentinel(t *testing.T) {
	err := fsession.unsupported("enum bpf_attach_type in kernel BTF has no BPF_TRACE_FSESSION")
	assert.True(t, errors.Is(err, ErrUnsupported))
	assert.Regexp(t,
		`^fsession needs BPF_TRACE_FSESSION \(Linux 7\.0\); this kernel is \S+: enum bpf_attach_type in kernel BTF `+
			`has no BPF_TRACE_FSESSION$`, err.Error())
}

func TestDisableEnv(t *testing.T) {
	t.Setenv(DisableEnv, fentryFexit.Name+": not today; "+kprobeSession.Name+": crashes the guest")
	err := kprobeSession.Probe()
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.EqualError(t, err, "kprobe-session disabled by TRACEBENCH_DISABLE: crashes the guest")
	_, err = Start(kprobeSession.Name, Config{})
	assert.EqualError(t, err, "kprobe-session disabled by TRACEBENCH_DISABLE: crashes the guest")
	var d *DisabledError
	assert.False(t, errors.As(fsession.Probe(), &d), "fsession is not named")
}

func bpfMechanisms() []Mechanism {
	return slices.DeleteFunc(Mechanisms(), func(m Mechanism) bool { return !m.Can.BPF })
}

// eachObject runs check on every BPF mechanism's object, a subtest each.
func eachObject(t *testing.T, check func(t *testing.T, spec *ebpf.CollectionSpec)) {
	for _, m := range bpfMechanisms() {
		t.Run(m.Name, func(t *testing.T) {
			spec, err := m.object()
			require.NoError(t, err)
			check(t, spec)
		})
	}
}

// TestKprobeSessionBuildsAgree: the pre-7.0 build of kprobe_session.bpf.c
// has the programs, maps and layouts of the 7.0 one.
func TestKprobeSessionBuildsAgree(t *testing.T) {
	withCtx, err := bpfobj.LoadKprobeSession()
	require.NoError(t, err)
	noCtx, err := bpfobj.LoadKprobeSessionNoCtx()
	require.NoError(t, err)
	assert.Equal(t, sortedKeys(withCtx.Programs), sortedKeys(noCtx.Programs))
	assert.Equal(t, sortedKeys(withCtx.Maps), sortedKeys(noCtx.Maps))
	assertLayout(t, noCtx, "event", reflect.TypeFor[rawEvent]())
	assertLayout(t, noCtx, "stats", reflect.TypeFor[rawStats]())
}
