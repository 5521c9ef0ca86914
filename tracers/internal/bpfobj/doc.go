// Package bpfobj is the bpf2go output of the mechanisms' BPF objects,
// committed. The go:generate line of each object, in its mechanism's file
// in tracers/, compiles bpf/<mechanism>.bpf.c with internal/bpfgen
// (`make generate`) for every architecture tracebench builds for
// (*_x86_bpfel for amd64, *_arm64_bpfel for arm64, chosen by the files'
// build tags); all use the x86 bpf/vmlinux.h, whose types the programs
// read are the same on arm64 (CO-RE), plus arm64's struct user_pt_regs
// from bpf/vfsread.h.
package bpfobj
