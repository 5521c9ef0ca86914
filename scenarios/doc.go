// Package scenarios checks every tracing mechanism against controlled
// vfs_read workloads: `sudo go test -v ./scenarios` on a Linux 7.x kernel,
// or `make check` in a guest. The scenarios are a table: the rows' data
// (Rows, rows.go), which the documentation renders too, joined with their
// checks by name (scenarios_test.go); each row runs for every mechanism
// in tracers' registry.
// A mechanism the kernel lacks is skipped with the missing feature; after
// the run a table of outcomes per mechanism and scenario is printed.
package scenarios
