// SPDX-License-Identifier: GPL-2.0
/*
 * Floors of the overhead benchmark, not a mechanism: one empty program per
 * attach kind on vfs_read. What such a program costs per call is the
 * kind's dispatch (trampoline, kprobe, fprobe/rethook, session); a
 * mechanism's overhead is that floor plus its programs' bodies. The
 * kernel's selftests/bpf trigger benchmarks measure the same way.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL"; /* the session kinds need it */

SEC("fentry/vfs_read")
int floor_fentry(void *ctx) { return 0; }

SEC("fexit/vfs_read")
int floor_fexit(void *ctx) { return 0; }

/* Returns 0 at entry too: the verifier accepts nothing else there. */
SEC("fsession/vfs_read")
int floor_fsession(void *ctx) { return 0; }

SEC("fsession.multi/vfs_read")
int floor_fsession_multi(void *ctx) { return 0; }

SEC("fentry.multi/vfs_read")
int floor_fentry_multi(void *ctx) { return 0; }

SEC("fexit.multi/vfs_read")
int floor_fexit_multi(void *ctx) { return 0; }

SEC("kprobe/vfs_read")
int floor_kprobe(void *ctx) { return 0; }

SEC("kretprobe/vfs_read")
int floor_kretprobe(void *ctx) { return 0; }

SEC("kprobe.multi/vfs_read")
int floor_kprobe_multi(void *ctx) { return 0; }

SEC("kretprobe.multi/vfs_read")
int floor_kretprobe_multi(void *ctx) { return 0; }

/* 0: run the return half too, as the mechanisms' session programs do. */
SEC("kprobe.session/vfs_read")
int floor_kprobe_session(void *ctx) { return 0; }
