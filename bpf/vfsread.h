/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by every vfs_read tracer in this directory, in the style of
 * libbpf-tools' per-tool header: the event and counters each mechanism
 * produces, the load-time configuration, and the return-side accounting,
 * written once so that all mechanisms count identically.
 */
#ifndef TRACEBENCH_VFSREAD_H
#define TRACEBENCH_VFSREAD_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define TASK_COMM_LEN 16
/* Default ring buffer size; user space may set another before load. */
#define RINGBUF_BYTES (256 * 1024)
/* Per-thread state for the two-program designs (like libbpf-tools). */
#define MAX_THREADS 10240

/* One slow vfs_read call. Mirrored by tracers.rawEvent. */
struct event {
	__u32 pid;          /* thread id */
	__u32 tgid;         /* process id */
	__u64 requested;    /* count argument, bytes */
	__s64 result;       /* return value: bytes read or -errno */
	__u64 latency_ns;
	char comm[TASK_COMM_LEN];
};

/* Counters, one copy per CPU. Mirrored by tracers.Stats. */
struct stats {
	__u64 calls;    /* calls that passed the TGID filter at entry and returned */
	__u64 slow;     /* of those, latency >= threshold_ns */
	__u64 errors;   /* of those, result < 0 */
	__u64 dropped;  /* slow calls whose event found the ring buffer full */
};

/* Set by user space before load; .rodata lets the verifier prune. */
const volatile __u64 threshold_ns = 0;
const volatile __u32 target_tgid = 0; /* 0 = every process */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} counters SEC(".maps");

/* Keeps struct event in the object's BTF so user space can check its layout. */
const struct event *unused_event __attribute__((unused));

static __always_inline bool tgid_traced(__u64 pid_tgid)
{
	return target_tgid == 0 || (__u32)(pid_tgid >> 32) == target_tgid;
}

/*
 * Accounts one traced call at its return. Counters are per CPU but still
 * updated atomically: trampoline programs run with migration, not
 * preemption, disabled, so two tasks can interleave on one CPU.
 */
static __always_inline void record_return(__u64 start_ns, __u64 requested, __s64 result)
{
	__u64 latency_ns = bpf_ktime_get_ns() - start_ns;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct stats *st;
	struct event *e;

	st = bpf_map_lookup_elem(&counters, &zero);
	if (!st)
		return;
	__sync_fetch_and_add(&st->calls, 1);
	if (result < 0)
		__sync_fetch_and_add(&st->errors, 1);
	if (latency_ns < threshold_ns)
		return;
	__sync_fetch_and_add(&st->slow, 1);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&st->dropped, 1);
		return;
	}
	e->pid = (__u32)pid_tgid;
	e->tgid = pid_tgid >> 32;
	e->requested = requested;
	e->result = result;
	e->latency_ns = latency_ns;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

char LICENSE[] SEC("license") = "GPL";

#endif /* TRACEBENCH_VFSREAD_H */
