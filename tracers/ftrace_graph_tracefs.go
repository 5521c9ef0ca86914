package tracers

import (
	"fmt"
	"path/filepath"
	"slices"

	"tracebench/internal/tracefs"
)

// checkGlobalTracefs refuses to touch tracing_thresh, which is global: it
// applies to function_graph in every instance and to the top-level latency
// tracers, so it must be unset and, when this tracer sets it, the top
// level must not be tracing.
func checkGlobalTracefs(root string, thresholdUS int64) error {
	thresh, err := tracefs.Read(filepath.Join(root, "tracing_thresh"))
	if err != nil {
		return err
	}
	if thresh != "0" {
		return fmt.Errorf("tracing_thresh is %s µs, set by another tracer (another ftrace-graph with a threshold, or "+
			"any tracefs user); ftrace-graph needs it 0 and does not change it", thresh)
	}
	if thresholdUS == 0 {
		return nil
	}
	current, err := tracefs.Read(filepath.Join(root, "current_tracer"))
	if err != nil {
		return err
	}
	if current != "nop" {
		return fmt.Errorf("the top-level tracer is %s; setting the global tracing_thresh would change what it records",
			current)
	}
	return requireNoGraphInstance(root)
}

// requireNoGraphInstance refuses when an instance (of anyone, tracebench
// included) runs function_graph, which the global tracing_thresh would
// change.
func requireNoGraphInstance(root string) error {
	tracers, err := filepath.Glob(filepath.Join(root, "instances", "*", "current_tracer"))
	if err != nil {
		return err
	}
	for _, path := range tracers {
		if current, err := tracefs.Read(path); err == nil && current == "function_graph" {
			return fmt.Errorf("instance %s runs function_graph; setting the global tracing_thresh would change what "+
				"it records", filepath.Base(filepath.Dir(path)))
		}
	}
	return nil
}

// graphOptions make function_graph print what parseGraphLine reads
// (comm-pid, the duration including sleep, the function name on the
// closing brace) and drop new records rather than overwrite old ones when
// the buffer is full, so that every lost record is counted. Close writes
// back each option's old value: before 7.x the funcgraph-* and sleep-time
// options are one set shared by all instances (6.12).
var graphOptions = slices.Concat(tracefs.TextOutput, []tracefs.Setting{
	{File: "options/funcgraph-proc", Value: "1"},
	{File: "options/funcgraph-duration", Value: "1"},
	{File: "options/funcgraph-tail", Value: "1"},
	{File: "options/sleep-time", Value: "1"},
	{File: "options/overwrite", Value: "0"},
})

// instanceSettings live and die with the instance, as its
// set_ftrace_filter (filterFunctions).
var instanceSettings = []tracefs.Setting{
	{File: "buffer_percent", Value: "0"}, // wake trace_pipe readers on every record
	// trace_pipe merges the CPUs' buffers by record time. The default
	// "local" clock is per CPU: a thread whose reads return on different
	// CPUs could see a later call's records merged before an earlier
	// one's (seen in the 7.2 guest, TCG). mono is one clock for all CPUs.
	{File: "trace_clock", Value: "mono"},
}
