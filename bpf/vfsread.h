/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by every vfs_read tracer in this directory, in the style of
 * libbpf-tools' per-tool header: the event and counters each mechanism
 * produces, the load-time configuration, and the return-side accounting,
 * written once so that all mechanisms count identically.
 */
#ifndef TRACEBENCH_VFSREAD_H
#define TRACEBENCH_VFSREAD_H

/*
 * vmlinux.h is x86-64's. BPF_KPROBE and PT_REGS_* (libbpf's
 * bpf_tracing.h) read another architecture's registers through the type
 * that libbpf casts a kprobe's ctx to, which is laid out as the kernel's
 * bpf_user_pt_regs_t there (a uapi layout, so no CO-RE relocation). It is
 * declared below for each architecture as its kernel's BTF has it; where
 * x86's vmlinux.h has a type of that name, with x86's registers, that one
 * is renamed out of the way first.
 */
#if defined(__TARGET_ARCH_riscv)
#define user_regs_struct user_regs_struct___x86
#elif defined(__TARGET_ARCH_powerpc)
#define pt_regs pt_regs___x86
#endif
#include "vmlinux.h"
#undef user_regs_struct
#undef pt_regs
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#if defined(__TARGET_ARCH_arm64)
/* struct user_pt_regs of asm/ptrace.h, which x86's vmlinux.h lacks. */
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
#elif defined(__TARGET_ARCH_riscv)
/* struct user_regs_struct of asm/ptrace.h: pc, then x1 to x31 by ABI name. */
struct user_regs_struct {
	__u64 pc, ra, sp, gp, tp, t0, t1, t2, s0, s1;
	__u64 a0, a1, a2, a3, a4, a5, a6, a7;
	__u64 s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
	__u64 t3, t4, t5, t6;
};
#elif defined(__TARGET_ARCH_powerpc)
/* libbpf reads struct pt_regs itself here: its first part, the uapi
 * struct user_pt_regs of asm/ptrace.h, is what a kprobe program sees.
 * PT_REGS_SP reads a member sp, which the kernel's has not: r1, the ABI's
 * stack pointer, is named so here. */
struct pt_regs {
	union {
		__u64 gpr[32];
		struct {
			__u64 r0, sp;
		};
	};
	__u64 nip, msr, orig_gpr3, ctr, link, xer, ccr, softe, trap, dar, dsisr, result;
};
#elif defined(__TARGET_ARCH_s390)
/* user_pt_regs of asm/ptrace.h, a typedef, which x86's vmlinux.h lacks. */
typedef struct {
	__u64 args[1];
	struct {
		__u64 mask;
		__u64 addr;
	} psw;
	__u64 gprs[16];
} user_pt_regs;
#endif

#define TASK_COMM_LEN 16
/* Default ring buffer size; user space may set another before load. */
#define RINGBUF_BYTES (256 * 1024)
/* Per-thread state for the two-program designs (like libbpf-tools); user
 * space may size the map otherwise before load. */
#define MAX_THREADS 10240
#define EEXIST 17 /* vmlinux.h has no errno macros */

/* One slow call of a traced function. Mirrored by tracers.rawEvent. */
struct event {
	__u32 pid;          /* thread id */
	__u32 tgid;         /* process id */
	__u64 requested;    /* vfs_read's count argument, bytes */
	__s64 result;       /* return value: bytes read or -errno */
	__u64 latency_ns;
	char comm[TASK_COMM_LEN];
	__u32 function;     /* index in tracers.Config.Functions */
};

/* Counters of one traced function, one copy per CPU. Mirrored by
 * tracers.rawStats. */
struct stats {
	__u64 calls;    /* calls that passed the TGID filter at entry and returned */
	__u64 slow;     /* of those, latency >= threshold_ns */
	__u64 errors;   /* of those, result < 0 */
	__u64 dropped;  /* slow calls whose event found the ring buffer full */
	__u64 lost;     /* calls that passed the TGID filter but whose per-call
			 * state could not be kept: see count_lost */
	__u64 overwritten; /* of lost, the entries replaced by a later call
			    * because their return was missed (store_entry);
			    * the others found no room */
};

/* Set by user space before load; .rodata lets the verifier prune. */
const volatile __u64 threshold_ns = 0;
const volatile __u32 target_tgid = 0; /* 0 = every process */
/* Optional aggregates (tracers.Config.Histogram, .PerTGID). Off, the
 * verifier prunes their code, so a mechanism's cost is unchanged. */
const volatile bool count_histogram = false;
const volatile bool count_per_tgid = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

/* Indexed by function; user space sizes it to the functions traced. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} counters SEC(".maps");

/* Log2 histogram of latency in microseconds, like biolatency/funclatency:
 * slot i counts latencies in [2^i, 2^(i+1)) us, slot 0 also those under
 * 1 us, the last slot every longer one. Mirrored by tracers.Histogram. */
#define HIST_SLOTS 32

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64); /* calls */
} latency_hist SEC(".maps");

/* Per-process aggregate; bounded so that a fork storm cannot grow it. */
#define MAX_TGIDS 4096

/* Mirrored by tracers.rawTGIDStats. */
struct tgid_stats {
	__u64 calls;
	__u64 total_ns;
	__u64 max_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TGIDS);
	__type(key, __u32); /* tgid */
	__type(value, struct tgid_stats);
} tgid_latency SEC(".maps");

/* Calls of processes that found no room in tgid_latency. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tgid_overflow SEC(".maps");

/* Keeps struct event in the object's BTF so user space can check its layout. */
const struct event *unused_event __attribute__((unused));

static __always_inline bool tgid_traced(__u64 pid_tgid)
{
	return target_tgid == 0 || (__u32)(pid_tgid >> 32) == target_tgid;
}

/* floor(log2(v)); 0 for 0 and 1. Branch per bit range, as in
 * libbpf-tools' bits.bpf.h: no loop for the verifier to bound. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8)  { v >>= 8;  r += 8; }
	if (v >> 4)  { v >>= 4;  r += 4; }
	if (v >> 2)  { v >>= 2;  r += 2; }
	if (v >> 1)  { r += 1; }
	return r;
}

static __always_inline void record_histogram(__u64 latency_ns)
{
	__u32 slot = log2_u64(latency_ns / 1000);
	__u64 *count;

	if (slot >= HIST_SLOTS)
		slot = HIST_SLOTS - 1;
	count = bpf_map_lookup_elem(&latency_hist, &slot);
	if (count)
		__sync_fetch_and_add(count, 1);
}

/* Raises *max to v. Shared between CPUs, hence compare-and-swap; each
 * failed exchange means another call raised it meanwhile, so a few tries
 * suffice and the bound only keeps the verifier's walk short. */
static __always_inline void atomic_max(__u64 *max, __u64 v)
{
	__u64 old = *max;

	for (int i = 0; i < 8 && old < v; i++) {
		__u64 seen = __sync_val_compare_and_swap(max, old, v);

		if (seen == old)
			return;
		old = seen;
	}
}

static __always_inline void record_tgid(__u32 tgid, __u64 latency_ns)
{
	struct tgid_stats *ts = bpf_map_lookup_elem(&tgid_latency, &tgid);
	struct tgid_stats zero = {};
	__u32 key = 0;
	__u64 *overflow;

	if (!ts) {
		/* NOEXIST: a concurrent first call of the same process may
		 * have inserted it; then this fails and the lookup finds it. */
		bpf_map_update_elem(&tgid_latency, &tgid, &zero, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&tgid_latency, &tgid);
	}
	if (!ts) { /* the table is full */
		overflow = bpf_map_lookup_elem(&tgid_overflow, &key);
		if (overflow)
			__sync_fetch_and_add(overflow, 1);
		return;
	}
	__sync_fetch_and_add(&ts->calls, 1);
	__sync_fetch_and_add(&ts->total_ns, latency_ns);
	atomic_max(&ts->max_ns, latency_ns);
}

/*
 * Counts a call of function that passed the TGID filter and will never
 * reach calls: its per-thread state found no room (map full or busy, no
 * task storage), or (overwritten) it was replaced by the thread's next
 * call because its return was missed. Per CPU, updated atomically as in
 * record_call.
 */
static __always_inline void count_lost(__u32 function, bool overwritten)
{
	struct stats *st = bpf_map_lookup_elem(&counters, &function);

	if (!st)
		return;
	__sync_fetch_and_add(&st->lost, 1);
	if (overwritten)
		__sync_fetch_and_add(&st->overwritten, 1);
}

/*
 * Keeps the entry state value of a call of function at key in a per-thread
 * hash map (keyed by pid_tgid, or by pid_tgid, the call's frame and its
 * function). An entry already there belongs to an earlier call whose
 * return was missed: that call is counted lost against its own function,
 * function_of(the kept entry), then replaced. Evaluates to false when the
 * map has no room for this call (counted lost against function). A macro
 * so that each map's value type says where its function is.
 */
#define store_entry(map, key, value, function, function_of)                         \
	({                                                                          \
		long err_ = bpf_map_update_elem(map, key, value, BPF_NOEXIST);      \
		if (err_ == -EEXIST) {                                              \
			typeof(value) stale_ = bpf_map_lookup_elem(map, key);       \
			if (stale_)                                                 \
				count_lost(function_of(stale_), true);              \
			err_ = bpf_map_update_elem(map, key, value, BPF_EXIST);     \
		}                                                                   \
		if (err_)                                                           \
			count_lost(function, false);                                \
		!err_;                                                              \
	})

/* function_of for the maps of objects tracing vfs_read alone (function 0). */
#define VFS_READ_ENTRY(entry) 0

/*
 * Accounts one traced call of function at its return. Counters are per
 * CPU but still updated atomically: trampoline programs run with
 * migration, not preemption, disabled, so two tasks can interleave on one
 * CPU.
 */
static __always_inline void record_call(__u32 function, __u64 start_ns, __u64 requested, __s64 result,
					bool error)
{
	__u64 latency_ns = bpf_ktime_get_ns() - start_ns;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct stats *st;
	struct event *e;

	st = bpf_map_lookup_elem(&counters, &function);
	if (!st)
		return;
	__sync_fetch_and_add(&st->calls, 1);
	/* Every call counted in calls, so each aggregate sums to calls. */
	if (count_histogram)
		record_histogram(latency_ns);
	if (count_per_tgid)
		record_tgid(pid_tgid >> 32, latency_ns);
	if (error)
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
	e->function = function;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* Accounts a return of vfs_read in an object tracing it alone (function
 * 0): an error is a negative result. */
static __always_inline void record_return(__u64 start_ns, __u64 requested, __s64 result)
{
	record_call(0, start_ns, requested, result, result < 0);
}

char LICENSE[] SEC("license") = "GPL";

#endif /* TRACEBENCH_VFSREAD_H */
