package tracers

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// graphReturn matches function_graph's line for a function's return with
// funcgraph-proc and funcgraph-tail, " 1)  cat-309  | ! 50123.45 us |  } /* vfs_read */",
// or, when the entry is still in the buffer (threshold 0) and it called no
// traced function, the leaf form "vfs_read();". Groups: comm, pid, whole
// µs, fraction of a µs, then the function of the one form or the other.
var graphReturn = regexp.MustCompile(`^\s*(?:\d+\)\s+)?(.+)-(\d+)\s+\|\s*[+!#*@$]?\s*(\d+)(?:\.(\d+))?\s+us\s+\|` +
	`\s*(?:\}\s*/\*\s*([\w.$]+)\s*\*/|([\w.$]+)\(\);)\s*$`)

// parseGraphLine parses a function's return line; other lines (entries,
// context-switch markers, headers) give false. The comm is the one
// function_graph prints, cut to 7 bytes.
func parseGraphLine(line string) (Event, bool) {
	m := graphReturn.FindStringSubmatch(line)
	if m == nil {
		return Event{}, false
	}
	pid, err := strconv.ParseUint(m[2], 10, 32)
	if err != nil {
		return Event{}, false
	}
	latency, err := parseGraphDuration(m[3], m[4])
	if err != nil {
		return Event{}, false
	}
	return Event{Function: m[5] + m[6], PID: uint32(pid), Latency: latency, Comm: strings.TrimSpace(m[1])}, true
}

// parseGraphDuration reads ftrace's "µs.fraction" duration, which keeps at
// most 7 digits: 3 decimals below 10 ms, fewer above, none from 1 s on.
func parseGraphDuration(us, fraction string) (time.Duration, error) {
	whole, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return 0, err
	}
	ns := whole * 1000
	if fraction != "" {
		f, err := strconv.ParseInt((fraction + "00")[:3], 10, 64)
		if err != nil {
			return 0, err
		}
		ns += f
	}
	return time.Duration(ns), nil
}
