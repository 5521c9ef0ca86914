package scenarios

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
	"tracebench/workload"
)

// coverageCase is a system call path that reads a regular file.
type coverageCase struct {
	op   workload.Op
	path string
}

// coverageCases are system call paths that read a regular file, each with
// the kernel path it takes (fs/read_write.c, fs/splice.c, mm/filemap.c,
// io_uring/rw.c). Each becomes a scenario row, coverage-<op>.
var coverageCases = []coverageCase{
	{workload.PreadRead, "ksys_pread64 -> vfs_read"},
	{workload.ReadvRead, "do_readv -> vfs_readv -> ->read_iter, not vfs_read"},
	{workload.SendfileRead, "do_sendfile -> do_splice_direct -> ->splice_read, not vfs_read"},
	{workload.MmapRead, "page fault -> filemap_fault / filemap_map_pages, no read call at all"},
	{workload.IoUringRead, "io_read -> ->read_iter, not vfs_read"},
}

// viaVFSRead are the coverage ops whose path calls vfs_read.
var viaVFSRead = opSet{workload.FileRead: true, workload.PreadRead: true}

// throughVFSRead reports whether op's system call calls vfs_read: every
// op but the coverage cases whose path avoids it.
func throughVFSRead(op workload.Op) bool { return readSyscall(op) || viaVFSRead[op] }

// readSyscall reports whether op is a read(2) call: every op but the
// coverage cases' other system calls.
func readSyscall(op workload.Op) bool {
	return !slices.ContainsFunc(coverageCases, func(c coverageCase) bool { return c.op == op })
}

// opSet is a set of workload ops.
type opSet map[workload.Op]bool

// The coverage step's reads are told apart from the control read(2)s by
// their size.
const (
	coverageReads = 4
	coverageSize  = 3 * 4096
	controlReads  = 2
	controlSize   = 4096
)

// coverageScenarios returns a row per coverage case: the case's reads and,
// as a control that the tracer sees the thread at all, plain read(2)s,
// all from the helper's main thread, every call reported (threshold 0).
func coverageScenarios() []scenario {
	var rows []scenario
	for _, c := range coverageCases {
		rows = append(rows, scenario{
			name: "coverage-" + string(c.op),
			doc: fmt.Sprintf("%d %s reads of %d bytes (%s) and %d read(2)s of %d: the reading thread's calls are the "+
				"read(2)s, plus the %s reads where the mechanism counts them",
				coverageReads, c.op, coverageSize, c.path, controlReads, controlSize, c.op),
			plan: workload.Plan{
				workload.FileReadsBy(c.op, coverageReads, coverageSize),
				workload.FileReads(controlReads, controlSize),
			},
			config: helperOnly(0),
			check:  checkCoverage(c.op),
		})
	}
	return rows
}

// anySize keys the reading thread's calls when the mechanism does not
// observe their requested size: they are counted in total.
const anySize = 0

// checkCoverage compares the reading thread's vfs_read calls, by size,
// with what the mechanism is expected to count. The main thread makes no
// read(2) between the ready line and its last read but the planned ones,
// so its calls are exactly those.
func checkCoverage(op workload.Op) func(t *testing.T, r run) {
	return func(t *testing.T, r run) {
		for _, rd := range r.truth.Of(op) {
			assert.Equal(t, int64(coverageSize), rd.Result, "the %s read read the file: %+v", op, rd)
		}
		if r.knows(t, tracers.FieldDropped, "dropped == 0: every call must be an event") {
			assert.Zero(t, r.stats.Dropped, "dropped: every call must be an event")
		}
		bySize := r.knows(t, tracers.FieldRequested, "calls by requested bytes; counted in total instead")
		reader := r.truth.Reads[0].TID
		want := map[uint64]int{controlSize: controlReads}
		if viaVFSRead[op] { // every mechanism attaches to vfs_read
			want[coverageSize] = coverageReads
		}
		got := map[uint64]int{}
		for _, ev := range r.events {
			switch {
			case int(ev.PID) == reader && bySize:
				got[ev.Requested]++
			case int(ev.PID) == reader:
				got[anySize]++
			case bySize && ev.Requested == coverageSize: // e.g. an io_uring worker thread
				t.Errorf("another helper thread called vfs_read with the %s size: %+v", op, ev)
			}
		}
		seen := got[coverageSize]
		if !bySize {
			want = map[uint64]int{anySize: want[controlSize] + want[coverageSize]}
			seen = got[anySize] - controlReads
		}
		assert.Equal(t, want, got, "the reading thread's vfs_read calls, count by requested bytes (%d: any)", anySize)
		t.Logf("%s: %d of %d reads seen in vfs_read", op, seen, coverageReads)
	}
}
