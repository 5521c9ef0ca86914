package peers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// bpftrace runs a script written here the way an operator would write it:
// the entry time in a map keyed by thread id, hist() of the latency in µs
// at return, count() of the calls. -p filters the probes' actions by PID
// (TGID). -f json -B line: one JSON object per line, flushed at once,
// since bpftrace buffers its output when stdout is not a terminal.
var (
	bpftraceFentry = bpftrace("bpftrace-fentry", "fentry:vfs_read", "fexit:vfs_read",
		"bpftrace fentry + fexit script: entry time in a map by tid, hist() of µs, count()")
	// bpftrace merges a kprobe and a kretprobe on one function into one
	// kprobe.session program where the kernel has them (6.10).
	bpftraceKprobe = bpftrace("bpftrace-kprobe", "kprobe:vfs_read", "kretprobe:vfs_read",
		"bpftrace kprobe + kretprobe script (merged into kprobe.session by bpftrace): entry time in a map by tid, hist() of µs, count()")
	bpftraceNoSession = bpftrace("bpftrace-kprobe-nosession", "kprobe:vfs_read", "kretprobe:vfs_read",
		"bpftrace --no-feature kprobe_session, the same kprobe + kretprobe script as two programs",
		"--no-feature", "kprobe_session")
)

func bpftrace(name, entry, exit, design string, flags ...string) Peer {
	// END clears the entry map so that only @us and @calls are printed.
	script := fmt.Sprintf(`%s { @start[tid] = nsecs; }
%s /@start[tid]/ { @us = hist((nsecs - @start[tid]) / 1000); @calls = count(); delete(@start, tid); }
END { clear(@start); }`, entry, exit)
	return Peer{
		Name:    name,
		Package: "bpftrace",
		Design:  design,
		command: func(pid int) []string {
			args := append([]string{"bpftrace", "-f", "json", "-B", "line", "-p", strconv.Itoa(pid)}, flags...)
			return append(args, "-e", script)
		},
		ready: bpftraceAttached,
		parse: parseBpftrace,
	}
}

// bpftraceAttached: bpftrace says how many probes it attached once they
// are.
func bpftraceAttached(out []byte, _ int) (bool, error) {
	_, ok := bpftraceProbes(out)
	return ok, nil
}

// bpftraceProbes returns the number of probes bpftrace said it attached.
func bpftraceProbes(out []byte) (probes int, ok bool) {
	for _, m := range bpftraceMessages(out) {
		if m.Type == "attached_probes" {
			json.Unmarshal(m.Data["probes"], &probes) // 0 if it says none
			return probes, true
		}
	}
	return 0, false
}

// bpftraceMessage is one line of bpftrace's JSON output.
type bpftraceMessage struct {
	Type string                     `json:"type"`
	Data map[string]json.RawMessage `json:"data"`
}

// bpftraceMessages decodes the complete JSON lines of out; other lines
// (warnings on stderr) are skipped.
func bpftraceMessages(out []byte) []bpftraceMessage {
	var msgs []bpftraceMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m bpftraceMessage
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// bpftraceBucket is one bucket of hist() in JSON: min and max included;
// bpftrace's log2 buckets are [0], [1], [2, 3], [4, 7], ...
type bpftraceBucket struct {
	Min   *int64 `json:"min"`
	Max   *int64 `json:"max"`
	Count uint64 `json:"count"`
}

func parseBpftrace(out []byte) (Result, error) {
	var res Result
	var sawHist, sawCount bool
	for _, m := range bpftraceMessages(out) {
		if raw, ok := m.Data["@us"]; ok && m.Type == "hist" {
			var buckets []bpftraceBucket
			if err := json.Unmarshal(raw, &buckets); err != nil {
				return res, fmt.Errorf("hist @us: %w", err)
			}
			for _, b := range buckets {
				if b.Count == 0 {
					continue
				}
				bucket, err := b.toBucket()
				if err != nil {
					return res, err
				}
				res.Buckets = append(res.Buckets, bucket)
			}
			sawHist = true
		}
		if raw, ok := m.Data["@calls"]; ok {
			if err := json.Unmarshal(raw, &res.Calls); err != nil {
				return res, fmt.Errorf("count @calls: %w", err)
			}
			sawCount = true
		}
	}
	if !sawHist || !sawCount {
		return res, fmt.Errorf("no @us histogram or no @calls count in bpftrace's JSON output (hist %v, count "+
			"%v)", sawHist, sawCount)
	}
	return res, nil
}

func (b bpftraceBucket) toBucket() (Bucket, error) {
	switch {
	case b.Min == nil && b.Max == nil:
		return Bucket{}, fmt.Errorf("hist bucket without min or max")
	case b.Min != nil && *b.Min < 0 || b.Max != nil && *b.Max < 0:
		// A negative latency: the clock went backwards between probes.
		return Bucket{}, fmt.Errorf("hist bucket below 0 (min %v, max %v) with %d calls", b.Min, b.Max, b.Count)
	case b.Max == nil:
		return Bucket{LowUS: uint64(*b.Min), HighUS: math.MaxUint64, Count: b.Count}, nil
	case b.Min == nil:
		return Bucket{LowUS: 0, HighUS: uint64(*b.Max) + 1, Count: b.Count}, nil
	}
	return Bucket{LowUS: uint64(*b.Min), HighUS: uint64(*b.Max) + 1, Count: b.Count}, nil
}
