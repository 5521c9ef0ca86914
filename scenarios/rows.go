package scenarios

import (
	"fmt"
	"os"
	"slices"
	"time"

	"tracebench/tracers"
	"tracebench/workload"
)

// A Row is what a scenario declares besides its checks: its name, what it
// asserts, the helper's workload and the tracer's configuration for the
// helper's TGID. The tests join each row with its checks by name; the
// documentation renders the same rows.
type Row struct {
	Name   string
	Doc    string
	Plan   workload.Plan
	Config func(helperTGID uint32) tracers.Config
}

// Rows are the scenario rows that trace a workload, in the order they run
// for each mechanism (the cleanup and bad-config rows are tests of their
// own).
func Rows() []Row { return slices.Concat(vfsReadRows(), coverageRows(), manyFunctionRows()) }

// seedPlan is the workload of the seed scenarios: fast page-cache reads and
// one pipe read answered DefaultPipeDelay after the reader blocked.
var seedPlan = workload.Plan{
	workload.FileReads(64, 4096),
	workload.DelayedPipeReads(1, workload.DefaultPipeDelay),
}

// errorPlan injects 6 failing reads among ordinary ones.
var errorPlan = workload.Plan{
	workload.DirReads(3),
	workload.EmptyPipeReads(2),
	workload.InterruptedReads(1, workload.DefaultPipeDelay),
	workload.FileReads(16, 4096),
}

// agreementPlan mixes every kind of read whose outcome does not depend on
// timing: fast successes, fast failures, slow successes, a slow failure.
var agreementPlan = workload.Plan{
	workload.FileReads(32, 4096),
	workload.DirReads(2),
	workload.EmptyPipeReads(2),
	workload.DelayedPipeReads(2, agreementDelay),
	workload.InterruptedReads(1, agreementDelay),
}

// agreementDelay is how long agreementPlan's delayed reads block.
const agreementDelay = 30 * time.Millisecond

// missThreads is how many readers block at once in kretprobe-misses and
// in each wave of stale-entries.
const missThreads = 4

// map-full blocks more readers at once than its per-thread map holds.
const (
	mapFullEntries = 64
	mapFullThreads = 100
)

// helperOnly traces the workload helper's process with threshold.
func helperOnly(threshold time.Duration) func(uint32) tracers.Config {
	return func(helper uint32) tracers.Config {
		return tracers.Config{TGID: helper, Threshold: threshold}
	}
}

func vfsReadRows() []Row {
	return []Row{
		{
			Name:   "pid-filter-miss",
			Doc:    "TGID filter matches no process: nothing counted, nothing reported",
			Plan:   seedPlan,
			Config: func(uint32) tracers.Config { return tracers.Config{TGID: workload.NoProcess} },
		},
		{
			Name:   "high-threshold",
			Doc:    "10 s threshold: every read counted, none slow",
			Plan:   seedPlan,
			Config: helperOnly(10 * time.Second),
		},
		{
			Name:   "slow-pipe-read",
			Doc:    "10 ms threshold: the 50 ms pipe read is reported with a bounded latency, fast reads are not",
			Plan:   seedPlan,
			Config: helperOnly(10 * time.Millisecond),
		},
		{
			Name:   "zero-threshold",
			Doc:    "0 threshold: every call is slow and reported or dropped",
			Plan:   seedPlan,
			Config: helperOnly(0),
		},
		{
			Name: "drops",
			Doc: "one-page ring buffer, 0 threshold, 4 threads reading flat out, consumer paused: drops are counted " +
				"exactly",
			Plan: workload.Plan{workload.FileReads(1000, 64).OnThreads(4)},
			Config: func(helper uint32) tracers.Config {
				return tracers.Config{TGID: helper, RingBufferBytes: os.Getpagesize()}
			},
		},
		{
			Name: "errors",
			Doc: "EISDIR, EAGAIN and EINTR reads, 0 threshold: errors == injected, each event carries vfs_read's " +
				"negative errno",
			Plan:   errorPlan,
			Config: helperOnly(0),
		},
		{
			Name: "slow-eintr",
			Doc: "10 ms threshold: the read interrupted after 50 ms is both an error and slow; the fast failures are " +
				"errors only",
			Plan:   errorPlan,
			Config: helperOnly(10 * time.Millisecond),
		},
		{
			Name: "threads",
			Doc: "TGID filter, 4 threads of file reads and 3 of delayed pipe reads: every thread's reads count, events " +
				"carry thread pid and process tgid",
			Plan: workload.Plan{
				workload.FileReads(50, 4096).OnThreads(4),
				workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(3),
			},
			Config: helperOnly(0),
		},
		{
			Name: "killed-reader",
			Doc: "SIGKILL of a process whose 2 threads are blocked in a pipe read: the reads still return through " +
				"vfs_read (-ERESTARTSYS), no state is left",
			Plan:   workload.Plan{workload.KilledReads(2, workload.DefaultPipeDelay)},
			Config: helperOnly(10 * time.Millisecond),
		},
		{
			Name: "kretprobe-misses",
			Doc: "maxactive 1, 4 threads blocked in pipe reads at once: kretprobe misses the returns beyond maxactive, " +
				"kprobe-session on a rethook pool (6.12) may miss whole calls, the others miss none",
			Plan: workload.Plan{workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads)},
			Config: func(helper uint32) tracers.Config {
				return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, KretprobeMaxActive: 1}
			},
		},
		{
			Name: "map-full",
			Doc: fmt.Sprintf("per-thread map of %d entries, %d threads blocked in pipe reads at once: the hash-map "+
				"designs count the %d that find no room as lost, the others lose none", mapFullEntries, mapFullThreads,
				mapFullThreads-mapFullEntries),
			Plan: workload.Plan{workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(mapFullThreads)},
			Config: func(helper uint32) tracers.Config {
				return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, ThreadMapEntries: mapFullEntries,
					KretprobeMaxActive: 2 * mapFullThreads}
			},
		},
		{
			Name: "stale-entries",
			Doc: fmt.Sprintf("per-thread map of %d entries, kretprobe maxactive 1; %d threads blocked in pipe reads "+
				"at once exit, then %d new ones do the same: the returns missed leave entries of exited threads in a "+
				"hash map for good, and the later threads find no room", missThreads, missThreads, missThreads),
			Plan: workload.Plan{
				workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads),
				workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(missThreads),
			},
			Config: func(helper uint32) tracers.Config {
				return tracers.Config{TGID: helper, Threshold: 10 * time.Millisecond, ThreadMapEntries: missThreads,
					KretprobeMaxActive: 1}
			},
		},
		{
			Name:   "agreement",
			Doc:    "the same deterministic workload gives every mechanism the same calls, errors and slow reads",
			Plan:   agreementPlan,
			Config: helperOnly(10 * time.Millisecond),
		},
		{
			Name: "socket-read",
			Doc: "10 ms threshold: a TCP read(2) on loopback in a private network namespace, answered 50 ms after the " +
				"reader blocked, is the one slow read, its latency between the delay and the user-space duration",
			Plan:   workload.Plan{workload.FileReads(16, 4096), workload.DelayedSocketReads(1, workload.DefaultPipeDelay)},
			Config: helperOnly(10 * time.Millisecond),
		},
	}
}

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

// The coverage step's reads are told apart from the control read(2)s by
// their size.
const (
	coverageReads = 4
	coverageSize  = 3 * 4096
	controlReads  = 2
	controlSize   = 4096
)

// coverageRow names the row of a coverage op.
func coverageRow(op workload.Op) string { return "coverage-" + string(op) }

// coverageRows returns a row per coverage case: the case's reads and, as a
// control that the tracer sees the thread at all, plain read(2)s, all from
// the helper's main thread, every call reported (threshold 0).
func coverageRows() []Row {
	var rows []Row
	for _, c := range coverageCases {
		rows = append(rows, Row{
			Name: coverageRow(c.op),
			Doc: fmt.Sprintf("%d %s reads of %d bytes (%s) and %d read(2)s of %d: the reading thread's calls are the "+
				"read(2)s, plus the %s reads where the mechanism counts them",
				coverageReads, c.op, coverageSize, c.path, controlReads, controlSize, c.op),
			Plan: workload.Plan{
				workload.FileReadsBy(c.op, coverageReads, coverageSize),
				workload.FileReads(controlReads, controlSize),
			},
			Config: helperOnly(0),
		})
	}
	return rows
}

// detachReaders is how many readers block in the pipe when
// detach-in-flight detaches.
const detachReaders = 4

// coldCompanions is how many functions vfs-read-in-set traces beside
// vfs_read: drawn away from the hot path, so that the set's program runs
// seldom elsewhere (the readpath set's hot functions, mutex_lock and
// fput among them, made the trampolines' recursion guard skip runs
// system-wide in every attempt: 1, 2 and 153 in the 7.2.13 guest).
const coldCompanions = 99

// ownPathRing is own-path's ring buffer, bytes: the row is about re-entry,
// not drops. ftrace-graph, which cannot count dropped calls at threshold
// 0, gave 36297 events but only 5 of vfs_read's 65 calls with its default
// buffer (1.4 MiB per CPU) in a busy 7.2 guest, most likely records
// dropped once it filled; 12013 events and all 65 in a quiet one.
const ownPathRing = 16 << 20

// ownPathMost is how many of the functions one event's life runs own-path
// traces, the least called first: those an event's own path runs once or
// a few times (the program's helpers, the ring buffer's wakeup, the
// consumer's return from its wait), not the kernel's hot paths. All of
// them (about 500) took fentry-fexit-each over 12 minutes under TCG, the
// 128 most called over 11 (about 5·10^5 events at threshold 0).
const ownPathMost = 64

// manyFunctionRows are the rows of many functions, for every mechanism
// that traces many (Capabilities.Functions.Many); the tests choose their
// functions from what the running kernel runs.
func manyFunctionRows() []Row {
	return []Row{
		{
			Name: "nested-calls",
			Doc: "vfs_read and the pipe's f_op->read it calls, 0 threshold: file reads, filled pipe reads, reads " +
				"of an empty pipe (EAGAIN) and one answered 50 ms after the reader blocked: one event per call of " +
				"each function, its errors the failed reads through it, each pipe read's inner latency <= its " +
				"vfs_read latency <= the user-space duration, the delayed read slow in both",
			Plan: workload.Plan{workload.FileReads(4, 64), workload.PipeReads(8), workload.EmptyPipeReads(2),
				workload.DelayedPipeReads(1, workload.DefaultPipeDelay)},
			Config: helperOnly(0),
		},
		{
			Name: "refused-in-set",
			Doc: "the readpath set and a function on the paths the kernel runs that the mechanism's attach kinds " +
				"cannot attach (for exit kinds, one a thread's exit never returns from), else one the kernel's lists " +
				"refuse to its kind alone (kprobe: a name kallsyms shares, or the kprobes blacklist): Start fails " +
				"naming it with the kernel's reason, nothing stays attached; the set without it starts",
			Config: func(uint32) tracers.Config { return tracers.Config{} },
		},
		{
			Name: "untraceable-in-set",
			Doc: "the readpath set and a function of the kernel's BTF that ftrace cannot patch: Start fails naming " +
				"it with the kernel's reason, nothing stays attached; the set without it starts",
			Config: func(uint32) tracers.Config { return tracers.Config{} },
		},
		{
			Name: "own-path",
			Doc: fmt.Sprintf("0 threshold, a consumer reading events as the workload runs, the readpath set and "+
				"the %d functions one event's life runs least with the mechanism attached (its helpers, the ring "+
				"buffer, the consumer's poll): the nested runs are missed and counted, nothing hangs, every read "+
				"is counted", ownPathMost),
			Plan: seedPlan,
			Config: func(helper uint32) tracers.Config {
				return tracers.Config{TGID: helper, RingBufferBytes: ownPathRing}
			},
		},
		{
			Name: "detach-in-flight",
			Doc: fmt.Sprintf("the readpath set; detach while %d threads sleep in a pipe read: their calls are pending "+
				"in each function they are inside, where the mechanism keeps entries, and counted nowhere else; "+
				"the calls before are counted exactly", detachReaders),
			Plan: workload.Plan{workload.FileReads(4, 64), workload.PipeReads(4),
				workload.DelayedPipeReads(1, 20*time.Millisecond).OnThreads(detachReaders)},
			Config: helperOnly(0),
		},
		{
			Name: "vfs-read-in-set",
			Doc: fmt.Sprintf("the agreement workload with vfs_read and %d functions drawn away from the hot path: "+
				"vfs_read's counters are those of vfs_read alone", coldCompanions),
			Plan:   agreementPlan,
			Config: helperOnly(10 * time.Millisecond),
		},
	}
}
