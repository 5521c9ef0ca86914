package tracers

import (
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/stretchr/testify/assert"
)

// bpf_link_info's shape since 6.7: perf_event holds an anonymous union
// with a kprobe struct, inside the struct's own anonymous union.
func TestHasMemberPath(t *testing.T) {
	u64 := &btf.Int{Name: "__u64", Size: 8}
	kprobe := func(members ...string) *btf.Struct {
		s := &btf.Struct{Size: 8 * uint32(len(members))}
		for _, name := range members {
			s.Members = append(s.Members, btf.Member{Name: name, Type: u64})
		}
		return s
	}
	info := func(k *btf.Struct) *btf.Struct {
		events := &btf.Union{Members: []btf.Member{{Name: "kprobe", Type: k}}}
		perfEvent := &btf.Struct{Members: []btf.Member{{Name: "type", Type: u64}, {Type: events}}}
		all := &btf.Union{Members: []btf.Member{{Name: "perf_event", Type: perfEvent}}}
		return &btf.Struct{Name: "bpf_link_info", Members: []btf.Member{{Name: "type", Type: u64}, {Type: all}}}
	}
	assert.True(t, hasMemberPath(info(kprobe("func_name", "addr", "missed")), "perf_event", "kprobe", "missed"))
	assert.False(t, hasMemberPath(info(kprobe("func_name", "addr")), "perf_event", "kprobe", "missed"), "6.6")
	assert.False(t, hasMemberPath(info(kprobe("missed")), "kprobe", "missed"), "kprobe is not a direct member")
}
