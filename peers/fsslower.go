package peers

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"tracebench/workload"
)

// fsslower-libbpf (libbpf-tools) times one file system's read, write,
// open and fsync operations (for ext4: ext4_file_read_iter, ...) with an
// entry and a return program keyed by thread in a hash map (deleted at
// return), and prints each operation above -m ms (0: every one) through
// a perf buffer; -p filters by TGID. It times no vfs_read: it observes
// only the rows' reads of a regular file on that file system.
var fsslower = Peer{
	Name:    "fsslower-ext4",
	Package: "libbpf-tools",
	Design:  "libbpf-tools fsslower -t ext4 -m 0: ext4_file_read_iter timed by kprobe + kretprobe (perf links: fsslower's fallback where its fentry check fails, as it did for the 7.2 guest's ext4 module), entry time in a hash map by thread, one perf buffer event per call",
	command: func(pid int) []string {
		// stdbuf: its stdout is a file, which libc would buffer fully.
		return []string{"stdbuf", "-oL", "fsslower-libbpf", "-t", "ext4", "-m", "0", "-p", strconv.Itoa(pid)}
	},
	ready: func(out []byte, _ int) (bool, error) {
		return bytes.Contains(out, []byte("Tracing ext4 operations")), nil
	},
	parse: parseFsslower,
	// Reads of a regular file only: the rows' data file is on ext4.
	observes: func(op workload.Op) bool { return op == workload.FileRead },
}

// fsslowerRow is one operation: "TIME COMM PID T BYTES OFF_KB LAT(ms)
// FILENAME", e.g. "09:28:01 peers.test 412 R 4096 0 0.03 data".
var fsslowerRow = regexp.MustCompile(`^\d\d:\d\d:\d\d\s+.*?\s+(\d+)\s+([RWOF])\s+(-?\d+)\s+(\d+)\s+(\d+\.\d\d)\s+(\S.*)$`)

// parseFsslower counts the read operations fsslower printed, each in a
// bucket of its latency: printed in ms rounded to 10 µs, from a count of
// whole µs. It prints nothing at exit, so an output cut at a line
// boundary parses to fewer calls: Run.Stop takes it only from a tool that
// exited cleanly once its output had settled.
func parseFsslower(out []byte) (Result, error) {
	var res Result
	counts := map[Bucket]uint64{}
	header := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "LAT(ms)") {
			header = true
			continue
		}
		m := fsslowerRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || m[2] != "R" {
			continue
		}
		whole, frac, _ := strings.Cut(m[5], ".")
		w, _ := strconv.ParseUint(whole, 10, 64)
		f, _ := strconv.ParseUint(frac, 10, 64)
		us := w*1000 + f*10
		counts[Bucket{LowUS: sat(us, 5), HighUS: us + 6}]++
		res.Calls++
	}
	if !header {
		return res, fmt.Errorf("no \"LAT(ms)\" header in fsslower's output")
	}
	for b, n := range counts {
		b.Count = n
		res.Buckets = append(res.Buckets, b)
	}
	slices.SortFunc(res.Buckets, func(a, b Bucket) int { return cmp.Compare(a.LowUS, b.LowUS) })
	return res, nil
}
