package funcset

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracebench/internal/tracefs"
)

// functionSettings make the function tracer print one "name" per call
// after the timestamp, whatever the top level's options.
var functionSettings = slices.Concat(tracefs.TextOutput, []tracefs.Setting{
	{File: "options/print-parent", Value: "0"},
	{File: "options/overwrite", Value: "0"},
})

// functionOptional are options older kernels lack (func-args; 7.2 has it).
var functionOptional = []tracefs.Setting{{File: "options/func-args", Value: "0"}}

// MeasureQuiet counts the calls of every function the system makes in
// window while this process sleeps, with ftrace's function tracer in a
// private tracefs instance of bufferKB KiB per CPU. It fails, rather than
// return a partial count, when the buffer lost events. Needs root and
// tracefs with the function tracer; the instance is removed before it
// returns.
func MeasureQuiet(window time.Duration, bufferKB int) (*Quiet, error) {
	if window <= 0 || bufferKB <= 0 {
		return nil, fmt.Errorf("quiet window %v, buffer %d KiB: want both positive", window, bufferKB)
	}
	var raw []byte
	err := traceWith("function", functionSettings, functionOptional,
		[]tracefs.Setting{{File: "buffer_size_kb", Value: strconv.Itoa(bufferKB)}},
		func(in tracefs.Instance) (err error) {
			raw, err = traceWindow(in, window)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("quiet system: %w", err)
	}
	calls, err := parseFunctionTrace(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("quiet system: %w", err)
	}
	return &Quiet{Window: window, Calls: calls}, nil
}

// traceWindow records window of in's tracer, all of it or an error.
func traceWindow(in tracefs.Instance, window time.Duration) ([]byte, error) {
	if err := in.WriteAll([]tracefs.Setting{{File: "trace", Value: ""}, {File: "tracing_on", Value: "1"}}); err != nil {
		return nil, err
	}
	time.Sleep(window)
	if err := in.Write("tracing_on", "0"); err != nil {
		return nil, err
	}
	if err := noLostEvents(in); err != nil {
		return nil, fmt.Errorf("%w in %v: a larger buffer or a shorter window", err, window)
	}
	return os.ReadFile(in.Path("trace"))
}

// functionLine matches a function tracer line up to the function:
// "comm-pid [cpu] flags timestamp: name".
var functionLine = regexp.MustCompile(`\[\d+\]\s+(?:\S+\s+)?\d+\.\d+: (.+)$`)

// parseFunctionTrace counts the calls per vmlinux function in function
// tracer output (print-parent off or on); module functions are left out
// (sets hold vmlinux functions). An error names the first line of
// another shape, a lost-events marker included.
func parseFunctionTrace(r io.Reader) (map[string]uint64, error) {
	calls := map[string]uint64{}
	err := eachLine(r, func(n int, line string) error {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			return nil
		}
		m := functionLine.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("function trace line %d: %q is not \"comm-pid [cpu] flags timestamp: function\"", n, line)
		}
		fn, _, _ := strings.Cut(m[1], " <-")
		name, module, err := nameAndModule(fn)
		if err != nil {
			return fmt.Errorf("function trace line %d: %w", n, err)
		}
		if module == "" {
			calls[name]++
		}
		return nil
	})
	return calls, err
}
