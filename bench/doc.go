// Package bench measures what each tracing mechanism adds to a vfs_read call.
//
// It holds only benchmarks, one file per benchmark (vfsread_test.go,
// bpfstats_test.go, peers_test.go) beside the parts they share (cases,
// the timed loop, rounds, costs, the events' consumer); `make bench`
// (cmd/bench) builds them into a static test binary, runs it round after
// round in a Linux 7.x guest (see bench/rounds.sh) and turns the output
// into a report under results/<kernel>/ with bench/report, whose Families
// say which benchmarks belong together. See bench/README.md for how to
// read that report.
//
// Two independent figures are produced:
//
//   - BenchmarkVFSRead/<mechanism>/<case> and BenchmarkVFSRead/baseline:
//     ns/op of a 1-byte read(2) from /dev/zero with the mechanism attached
//     (or nothing, for baseline). The difference to baseline is the
//     mechanism's cost per call, trampoline or kprobe dispatch included.
//   - BenchmarkBPFStats/<mechanism>/<case>: the kernel's BPF run-time
//     statistics for the same loop: time spent in the program bodies per
//     read (bpf-ns/op) and per program run, which excludes the dispatch.
//     Statistics are on only during this benchmark; their own clock reads
//     make its ns/op unfit for comparison with BenchmarkVFSRead.
package bench
