// Package bpfobj is the bpf2go output of the mechanisms' BPF objects,
// committed. The go:generate lines in each mechanism's file in tracers/
// compile its bpf/<mechanism>.bpf.c with clang-19 (`make generate`), once
// per architecture (*_x86_bpfel for amd64, *_arm64_bpfel for arm64, chosen
// by the files' build tags); both use the x86 bpf/vmlinux.h, whose types
// the programs read are the same on arm64 (CO-RE), plus arm64's
// struct user_pt_regs from bpf/vfsread.h:
// -mcpu=v3 for atomics and 32-bit jumps; -Wno-missing-declarations hides
// bpftool 7.1 misdumping unused anonymous members of 7.2 types.
package bpfobj
