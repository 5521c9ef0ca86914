package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
	"tracebench/workload"
)

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

// coverageChecks are the checks of coverageRows, by name.
func coverageChecks() map[string]scenario {
	checks := map[string]scenario{}
	for _, c := range coverageCases {
		checks[coverageRow(c.op)] = scenario{check: checkCoverage(c.op)}
	}
	return checks
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
