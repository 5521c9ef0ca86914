package peers

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// funclatency-libbpf (libbpf-tools) times a kernel function with an entry
// and a return program keyed by thread in a hash map, into a log2
// histogram in BPF; -p filters by TGID at entry, -u counts microseconds,
// -k uses kprobe/kretprobe instead of fentry/fexit. It prints the
// histogram when interrupted.
var (
	funclatencyFentry = funclatency("funclatency-fentry",
		"libbpf-tools funclatency: fentry + fexit, entry time in a hash map by thread, log2 µs histogram in BPF")
	funclatencyKprobe = funclatency("funclatency-kprobe",
		"libbpf-tools funclatency -k: kprobe + kretprobe, entry time in a hash map by thread, log2 µs histogram in BPF",
		"-k")
)

func funclatency(name, design string, flags ...string) Peer {
	return Peer{
		Name:    name,
		Package: "libbpf-tools",
		Design:  design,
		command: func(pid int) []string {
			// stdbuf: the tool's stdout is a file, which libc would buffer
			// fully, hiding the line that says it is attached.
			args := []string{"stdbuf", "-oL", "funclatency-libbpf", "-u", "-p", strconv.Itoa(pid)}
			return append(append(args, flags...), "vfs_read")
		},
		// Printed once the programs are attached.
		ready: func(out []byte, _ int) (bool, error) {
			return bytes.Contains(out, []byte("Tracing vfs_read.")), nil
		},
		parse: parseFunclatency,
	}
}

// funclatencyRow is one histogram line: "   2 -> 3   : 531  |****|",
// both ends included.
var funclatencyRow = regexp.MustCompile(`^\s*(\d+) -> (\d+)\s*: (\d+)\s*\|`)

// funclatencyEnd is the line funclatency prints after the histogram.
const funclatencyEnd = "Exiting trace of "

// parseFunclatency reads the µs histogram funclatency printed on exit; it
// prints no separate count, so Calls is the histogram's sum. An output
// without the closing line is cut short and refused.
func parseFunclatency(out []byte) (Result, error) {
	var res Result
	header := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "usec") && strings.Contains(line, ": count") {
			header = true
			continue
		}
		m := funclatencyRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		low, _ := strconv.ParseUint(m[1], 10, 64)
		high, _ := strconv.ParseUint(m[2], 10, 64)
		n, _ := strconv.ParseUint(m[3], 10, 64)
		res.Buckets = append(res.Buckets, Bucket{LowUS: low, HighUS: high + 1, Count: n})
		res.Calls += n
	}
	if !header {
		return res, fmt.Errorf("no µs histogram (\"usec : count\" header) in the output")
	}
	if !bytes.Contains(out, []byte(funclatencyEnd)) {
		return res, fmt.Errorf("output cut short: no %q line after the histogram", funclatencyEnd)
	}
	return res, nil
}
