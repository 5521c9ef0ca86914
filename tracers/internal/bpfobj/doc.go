// Package bpfobj is the bpf2go output of the mechanisms' BPF objects,
// committed. The go:generate line in each mechanism's file in tracers/
// compiles its bpf/<mechanism>.bpf.c with clang-19 (`make generate`):
// -mcpu=v3 for atomics and 32-bit jumps; -Wno-missing-declarations hides
// bpftool 7.1 misdumping unused anonymous members of 7.2 types.
package bpfobj
