// Package suite names what the overhead benchmarks measure, once, for the
// benchmarks (package bench, bench/floors) and the report (bench/report)
// alike. It holds no loading code: the report, which runs on any host,
// reads it without importing cilium/ebpf.
package suite

import "strings"

// Floors are the floors measured, in this order: each the attach kinds of
// its empty programs on vfs_read joined with "+" (as FloorOf joins a
// mechanism's kinds). Its sub-benchmark is BenchmarkVFSRead/<floor>/FloorCase.
var Floors = []string{
	"fentry", "fexit", "fentry+fexit", "fsession", "fsession.multi", "fentry.multi+fexit.multi",
	"kprobe", "kretprobe", "kprobe+kretprobe", "kprobe.session", "kprobe.multi+kretprobe.multi",
}

// FloorCase is the "case" of a floor's sub-benchmark.
const FloorCase = "floor"

// FloorOf is the floor of a mechanism whose programs attach with kinds, as
// tracers.Mechanism.AttachKinds returns them; "" for none.
func FloorOf(kinds []string) string { return strings.Join(kinds, "+") }

// FloorKeyPrefix + mechanism names, among the configuration lines, the
// mechanism's floor (FloorOf its attach kinds on the running kernel).
const FloorKeyPrefix = "tracebench-floor-"

// FloorKinds splits a floor's name into its attach kinds.
func FloorKinds(floor string) []string { return strings.Split(floor, "+") }
