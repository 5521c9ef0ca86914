// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe.multi + kretprobe.multi (kprobe_multi links, Linux 5.18): two
 * programs on two links naming every traced function; the entry time and
 * vfs_read's count argument are kept in a hash map keyed by pid_tgid, the
 * stack pointer at entry and the function (calls.h).
 */
#include "calls.h"

/*
 * The return run sees the stack pointer after the function returned. On
 * x86-64 the ret popped the return address: entry sp + 8 (measured in the
 * 7.2 guest). Other architectures' offsets are not measured: tracers runs
 * the mechanism on x86-64 alone (kprobeKretprobeMulti's probe), so their
 * builds, with offset 0, are never loaded.
 */
#if defined(__TARGET_ARCH_x86)
#define RETURN_SP_OFFSET 8
#else
#define RETURN_SP_OFFSET 0
#endif

SEC("kprobe.multi/vfs_read")
int entry_kmulti(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie;

	if (!tgid_traced(pid_tgid))
		return 0;
	cookie = call_cookie(ctx);
	enter_call(pid_tgid, PT_REGS_SP(ctx), cookie, bpf_ktime_get_ns(),
		   reads_count(cookie) ? PT_REGS_PARM3(ctx) : 0);
	return 0;
}

SEC("kretprobe.multi/vfs_read")
int return_kmulti(struct pt_regs *ctx)
{
	struct call_entry entry;

	if (take_call(PT_REGS_SP(ctx) - RETURN_SP_OFFSET, call_cookie(ctx), &entry))
		record_function(entry.cookie, entry.ns, entry.requested, PT_REGS_RC(ctx));
	return 0;
}
