// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe.session (Linux 6.10, BPF_TRACE_KPROBE_SESSION): one kprobe_multi
 * program runs at entry and return of vfs_read; the entry time lives in
 * the per-call session cookie. The return run sees only the return
 * registers and the cookie holds 8 bytes, so the count argument still
 * goes through a per-thread map. A call filtered out at entry skips the
 * return run (the entry returns 1).
 */
#include "vfsread.h"
#include "session.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u64);   /* pid_tgid */
	__type(value, __u64); /* count argument, bytes */
} starts SEC(".maps");

SEC("kprobe.session/vfs_read")
int vfs_read_session(struct pt_regs *ctx)
{
	__u64 *cookie = session_cookie(ctx);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 *count, requested;

	if (!session_is_return(ctx)) {
		if (!tgid_traced(pid_tgid))
			return 1;
		requested = PT_REGS_PARM3(ctx);
		if (!store_entry(&starts, &pid_tgid, &requested, 0, VFS_READ_ENTRY))
			return 1; /* lost: no return run without its count */
		*cookie = bpf_ktime_get_ns();
		return 0;
	}
	count = bpf_map_lookup_elem(&starts, &pid_tgid);
	if (!count)
		return 0;
	requested = *count;
	bpf_map_delete_elem(&starts, &pid_tgid);
	record_return(*cookie, requested, PT_REGS_RC(ctx));
	return 0;
}
