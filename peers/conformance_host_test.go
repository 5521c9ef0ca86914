package peers

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/workload"
)

const ms = time.Millisecond

func spans(n int, s Span) Truth {
	t := make(Truth, n)
	for i := range t {
		t[i] = s
	}
	return t
}

// bucket is one log2 µs bucket [low, 2*low) holding n calls; low 0 is [0, 1).
func bucket(low, n uint64) Bucket {
	return Bucket{LowUS: low, HighUS: max(2*low, 1), Count: n}
}

func TestClassify(t *testing.T) {
	quick := spans(10, Span{Max: 20 * time.Microsecond})
	blocked := spans(4, Span{Min: 50 * ms, Max: 60 * ms})
	for _, tt := range []struct {
		name  string
		truth Truth
		res   Result
		want  Cell
	}{
		{"exact", quick, Result{Calls: 10, Buckets: []Bucket{bucket(8, 6), bucket(16, 4)}},
			Cell{Class: Exact, Calls: 10, Counted: 10}},
		{"silent loss", blocked, Result{Calls: 3, Buckets: []Bucket{bucket(32768, 3)}},
			Cell{Class: SilentLoss, Calls: 4, Counted: 3, Lost: 1, Silent: 1}},
		{"visible loss", blocked, Result{Calls: 2, Buckets: []Bucket{bucket(32768, 2)}, Notices: []Notice{{"lost 2 events", 2}}},
			Cell{Class: VisibleLoss, Calls: 4, Counted: 2, Lost: 2, Notices: []Notice{{"lost 2 events", 2}}}},
		// Two calls lost, the tool told of one: the other is silent.
		{"partly told", blocked, Result{Calls: 2, Buckets: []Bucket{bucket(32768, 2)}, Notices: []Notice{{"map full", 1}}},
			Cell{Class: SilentLoss, Calls: 4, Counted: 2, Lost: 2, Silent: 1, Notices: []Notice{{"map full", 1}}}},
		// A notice that does not say how many makes the whole loss told.
		{"told without a count", blocked, Result{Calls: 1, Buckets: []Bucket{bucket(32768, 1)}, Notices: []Notice{{"drops", 0}}},
			Cell{Class: VisibleLoss, Calls: 4, Counted: 1, Lost: 3, Notices: []Notice{{"drops", 0}}}},
		// A stale start: one call of at most 20 µs reported at 1-2 ms.
		{"too long", quick, Result{Calls: 10, Buckets: []Bucket{bucket(8, 9), bucket(1024, 1)}},
			Cell{Class: WrongValue, Calls: 10, Counted: 10, TooLong: 1}},
		// Calls that blocked 50 ms reported below 32 ms, beyond the one lost.
		{"too short", blocked, Result{Calls: 3, Buckets: []Bucket{bucket(16384, 2), bucket(32768, 1)}},
			Cell{Class: WrongValue, Calls: 4, Counted: 3, Lost: 1, Silent: 1, TooShort: 2}},
		{"extra", quick, Result{Calls: 12, Buckets: []Bucket{bucket(8, 12)}},
			Cell{Class: WrongValue, Calls: 10, Counted: 12, Extra: 2}},
		// 60 ms is in [32768, 65536) µs; the open-ended bucket may hold anything.
		{"open-ended top bucket", blocked, Result{Calls: 4, Buckets: []Bucket{bucket(32768, 3),
			{LowUS: 1 << 20, HighUS: math.MaxUint64, Count: 1}}},
			Cell{Class: WrongValue, Calls: 4, Counted: 4, TooLong: 1}},
		{"notices without a loss", quick, Result{Calls: 10, Buckets: []Bucket{bucket(8, 10)}, Notices: []Notice{{"map full", 1}}},
			Cell{Class: Exact, Calls: 10, Counted: 10, Notices: []Notice{{"map full", 1}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Classify(tt.truth, tt.res))
		})
	}
}

// TestClassifyToleratesClocks: a 4.5 s read the tool timed 0.5% longer
// than user space (another clock's rate) is not too long.
func TestClassifyToleratesClocks(t *testing.T) {
	truth := Truth{{Min: 4500 * ms, Max: 4504 * ms}}
	c := Classify(truth, Result{Calls: 1, Buckets: []Bucket{{LowUS: 4526000, HighUS: 4526001, Count: 1}}})
	assert.Equal(t, Exact, c.Class, "%+v", c)
	c = Classify(truth, Result{Calls: 1, Buckets: []Bucket{{LowUS: 4600000, HighUS: 4600001, Count: 1}}})
	assert.Equal(t, WrongValue, c.Class, "2%% longer than user space is not a clock's rate: %+v", c)
}

func TestTruthOf(t *testing.T) {
	plan := workload.Plan{workload.FileReads(2, 64), workload.DelayedPipeReads(1, 50*ms)}
	res := workload.Result{Reads: []workload.Read{{Step: 0, Op: workload.FileRead, Duration: 10 * time.Microsecond},
		{Step: 0, Op: workload.FileRead, Duration: 12 * time.Microsecond},
		{Step: 1, Op: workload.DelayedPipeRead, Duration: 51 * ms}}}
	truth, err := TruthOf(plan, res)
	require.NoError(t, err)
	file, pipe := workload.FileRead, workload.DelayedPipeRead
	assert.Equal(t, Truth{{Max: 10 * time.Microsecond, Op: file}, {Max: 12 * time.Microsecond, Op: file},
		{Min: 50 * ms, Max: 51 * ms, Op: pipe}}, truth)
	assert.Equal(t, truth[:2], truth.Observed(func(op workload.Op) bool { return op == file }))
	assert.Equal(t, truth, truth.Observed(nil))
	_, err = TruthOf(plan, workload.Result{Reads: []workload.Read{{Step: 2}}})
	assert.ErrorContains(t, err, "read of step 2, the plan has 2")
}

func TestCellString(t *testing.T) {
	for _, tt := range []struct {
		c    Cell
		want string
	}{
		{Cell{Class: Exact, Calls: 5}, "exact (5)"},
		{Cell{Class: SilentLoss, Calls: 12, Lost: 2, Silent: 2}, "silent loss: 2 of 12"},
		{Cell{Class: SilentLoss, Calls: 4200, Lost: 4190, Silent: 4086}, "silent loss: 4086 of 4200 (104 more told)"},
		{Cell{Class: VisibleLoss, Calls: 4200, Lost: 104}, "loss visible: 104 of 4200"},
		{Cell{Class: WrongValue, Calls: 3200, TooLong: 7, Lost: 5}, "wrong value: 7 too long, 5 lost of 3200"},
		{Cell{Class: CannotObserve, Reason: "no -b"}, "cannot observe"},
		{Cell{Class: Class(9)}, "Class(9)"},
	} {
		assert.Equal(t, tt.want, tt.c.String())
	}
}

func TestReportMarkdown(t *testing.T) {
	r := Report{Kernel: "7.2.13+deb14-amd64", CPUs: "2", Clock: "icount", Date: "2026-12-01", Versions: []string{"tracebench-peer-bpftrace: 0.27.1-1"},
		Rows: []RowReport{{Name: "kretprobe-maxactive", What: "12 threads blocked at once", Calls: 12,
			Notes: []string{"12 threads read"},
			Peers: []PeerCell{
				{Peer: "funclatency-kprobe", Cell: Cell{Class: SilentLoss, Calls: 12, Counted: 10, Lost: 2, Silent: 2},
					Kernel: Kernel{Attached: []string{"perf link of Kprobe program dummy_kretprobe: kretprobe vfs_read"},
						Missed: 89, Maps: []MapFill{{Name: "starts", Entries: 2, MaxEntries: 102400}}}},
				{Peer: "perf-ftrace-bpf", Cell: Cell{Class: CannotObserve, Calls: 12, Reason: "built without BPF skeletons"}},
				{Peer: "bpftrace-fentry", Error: "exited before it was attached"},
				{Peer: "a-mechanism", Own: true, Cell: Cell{Class: VisibleLoss, Calls: 12, Counted: 10, Lost: 2,
					Notices: []Notice{{Line: "2 calls entered and did not return while attached", Calls: 2}}}},
			}}}}
	md := r.Markdown()
	assert.Contains(t, md, "Linux 7.2.13+deb14-amd64, 2 CPUs, guest clock icount, 2026-12-01; tracebench-peer-bpftrace: 0.27.1-1\n")
	assert.Contains(t, md, "| row | calls | funclatency-kprobe | perf-ftrace-bpf | bpftrace-fentry | tracebench a-mechanism |\n"+
		"|---|---|---|---|---|---|\n")
	assert.Contains(t, md, "| kretprobe-maxactive | 12 | silent loss: 2 of 12 | cannot observe | not measured | loss visible: 2 of 12 |\n")
	assert.Contains(t, md, "- **tracebench a-mechanism**: loss visible; counted 10 of 12; lost 2; the tool printed 1 lines about lost calls (telling of 2)")
	assert.Contains(t, md, "12 threads blocked at once (12 calls; 12 threads read)")
	assert.Contains(t, md, "- **funclatency-kprobe**: silent loss; counted 10 of 12; lost 2; of them untold 2; the tool printed nothing about lost calls; "+
		"kernel (system-wide, over the workload): missed 89, recursion misses 0, ring buffer dropped 0; hash maps starts 2/102400; "+
		"attached: perf link of Kprobe program dummy_kretprobe: kretprobe vfs_read\n")
	assert.Contains(t, md, "- **perf-ftrace-bpf**: cannot observe: built without BPF skeletons\n")
	assert.Equal(t, "| row | funclatency-kprobe | perf-ftrace-bpf | bpftrace-fentry | tracebench a-mechanism |\n"+
		"|---|---|---|---|---|\n| kretprobe-maxactive | silent loss | cannot observe | not measured | loss visible |\n", r.SummaryTable())
	assert.Equal(t, []string{"kretprobe-maxactive/bpftrace-fentry: exited before it was attached"}, r.Unmeasured())
}
