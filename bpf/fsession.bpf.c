// SPDX-License-Identifier: GPL-2.0
/*
 * fsession (Linux 7.0, BPF_TRACE_FSESSION): one program runs at both entry
 * and return of vfs_read; the entry timestamp lives in the per-call session
 * cookie, so no map holds per-thread state.
 */
#include "vfsread.h"
#include "session.h"

SEC("fsession/vfs_read")
int BPF_PROG(vfs_read_session, struct file *file, char *buf, size_t count,
	     loff_t *pos, ssize_t ret)
{
	__u64 *cookie = session_cookie(ctx);

	if (!session_is_return(ctx)) {
		/* 0 marks a call filtered out at entry. The verifier only
		 * accepts 0 here, so the return half runs regardless. */
		*cookie = tgid_traced(bpf_get_current_pid_tgid()) ? bpf_ktime_get_ns() : 0;
		return 0;
	}
	if (*cookie)
		record_return(*cookie, count, ret);
	return 0;
}
