// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe.session on one kprobe_multi link naming every traced function
 * (Linux 6.10): one program at entry and return, the entry time in the
 * session cookie. vfs_read's count argument, which the return run cannot
 * read, is kept in a hash map keyed by pid_tgid and the session cookie's
 * address, which is the call's own (calls.h); other functions keep
 * nothing. A call filtered out at entry skips its return run (the entry
 * returns 1).
 */
#include "calls.h"

SEC("kprobe.session/vfs_read")
int session_kmulti(struct pt_regs *ctx)
{
	__u64 *start = session_cookie(ctx);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct call_entry entry = {};
	__u64 cookie;

	if (!session_is_return(ctx)) {
		if (!tgid_traced(pid_tgid))
			return 1;
		cookie = call_cookie(ctx);
		if (reads_count(cookie) && !enter_call(pid_tgid, (__u64)start, cookie, 0, PT_REGS_PARM3(ctx)))
			return 1; /* lost: no return run without its count */
		*start = bpf_ktime_get_ns();
		return 0;
	}
	cookie = call_cookie(ctx);
	if (reads_count(cookie) && !take_call((__u64)start, cookie, &entry))
		return 0;
	record_function(cookie, *start, entry.requested, PT_REGS_RC(ctx));
	return 0;
}
