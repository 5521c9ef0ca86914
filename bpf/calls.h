/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-call entry state of the multi-function designs that keep one in a
 * hash map. Keyed by pid_tgid alone, a traced function called inside
 * another traced one overwrites the outer call's entry (iovisor/bcc
 * #2548): every outer call is lost. So the key also holds the call's
 * frame, an address the entry and return runs of one call share and no
 * call nested in it (or re-entering it) does: the trampoline's ctx for
 * fentry/fexit (both run on the function's trampoline frame), the stack
 * pointer for kprobes, the session cookie's address for kprobe.session.
 * And the function: a tail call (__x64_sys_read jumping to ksys_read)
 * enters the callee at the caller's stack pointer, so two calls in flight
 * can share a frame but not a function; the return run knows its
 * function from the attach cookie as the entry run does.
 */
#ifndef TRACEBENCH_CALLS_H
#define TRACEBENCH_CALLS_H

#include "multi.h"

struct call_key {
	__u64 pid_tgid;
	__u64 frame;
	__u32 function; /* COOKIE_FUNCTION of the call's cookie */
	__u32 pad;      /* zeroed: part of the hashed key */
};

/* tracers counts pending calls per function by the entries' cookie. */
struct call_entry {
	__u64 ns;        /* entry time; 0 where the session cookie holds it */
	__u64 requested; /* vfs_read's count argument */
	__u64 cookie;    /* the function's (see multi.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, struct call_key);
	__type(value, struct call_entry);
} starts SEC(".maps");

/* The function whose call a kept entry is (store_entry's function_of). */
#define CALL_ENTRY_FUNCTION(entry) COOKIE_FUNCTION((entry)->cookie)

/* Keeps the entry of a call of the traced thread pid_tgid at frame;
 * false when it found no room (counted lost). */
static __always_inline bool enter_call(__u64 pid_tgid, __u64 frame, __u64 cookie, __u64 ns, __u64 requested)
{
	struct call_key key = { .pid_tgid = pid_tgid, .frame = frame, .function = COOKIE_FUNCTION(cookie) };
	struct call_entry entry = { .ns = ns, .requested = requested, .cookie = cookie };

	return store_entry(&starts, &key, &entry, COOKIE_FUNCTION(cookie), CALL_ENTRY_FUNCTION);
}

/* Takes the entry of the call of cookie's function at frame out of the map
 * into *entry; false if none was kept (filtered out, lost, or entered
 * before attach). */
static __always_inline bool take_call(__u64 frame, __u64 cookie, struct call_entry *entry)
{
	struct call_key key = { .pid_tgid = bpf_get_current_pid_tgid(), .frame = frame,
				.function = COOKIE_FUNCTION(cookie) };
	struct call_entry *kept = bpf_map_lookup_elem(&starts, &key);

	if (!kept)
		return false;
	*entry = *kept;
	bpf_map_delete_elem(&starts, &key);
	return true;
}

/* The entry run of an fentry program (one per function, or fentry.multi). */
static __always_inline void trampoline_entry(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie, count = 0;

	if (!tgid_traced(pid_tgid))
		return;
	cookie = call_cookie(ctx);
	if (reads_count(cookie))
		bpf_get_func_arg(ctx, COUNT_ARG, &count);
	enter_call(pid_tgid, (__u64)ctx, cookie, bpf_ktime_get_ns(), count);
}

/* The return run of an fexit program (one per function, or fexit.multi). */
static __always_inline void trampoline_exit(void *ctx)
{
	struct call_entry entry;
	__u64 ret = 0;

	if (!take_call((__u64)ctx, call_cookie(ctx), &entry))
		return;
	bpf_get_func_ret(ctx, &ret);
	record_function(entry.cookie, entry.ns, entry.requested, ret);
}

/*
 * A kretprobe's or kretprobe.multi's return run sees the stack pointer
 * after the function returned. On x86-64 the ret popped the return
 * address: entry sp + 8 (measured in the 7.2 guest for both). Other
 * architectures' offsets are not measured: tracers runs the designs keyed
 * by it on x86-64 alone (their probes), so builds with offset 0 are never
 * loaded.
 */
#if defined(__TARGET_ARCH_x86)
#define RETURN_SP_OFFSET 8
#else
#define RETURN_SP_OFFSET 0
#endif

/* The entry run of a kprobe program (one link per function, or
 * kprobe.multi): the call's frame is the stack pointer at entry. */
static __always_inline void kprobe_entry(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie;

	if (!tgid_traced(pid_tgid))
		return;
	cookie = call_cookie(ctx);
	enter_call(pid_tgid, PT_REGS_SP(ctx), cookie, bpf_ktime_get_ns(),
		   reads_count(cookie) ? PT_REGS_PARM3(ctx) : 0);
}

/* The return run of a kretprobe program (one link per function, or
 * kretprobe.multi). */
static __always_inline void kretprobe_return(struct pt_regs *ctx)
{
	struct call_entry entry;

	if (take_call(PT_REGS_SP(ctx) - RETURN_SP_OFFSET, call_cookie(ctx), &entry))
		record_function(entry.cookie, entry.ns, entry.requested, PT_REGS_RC(ctx));
}

#endif /* TRACEBENCH_CALLS_H */
