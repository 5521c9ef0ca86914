// SPDX-License-Identifier: GPL-2.0
/*
 * fentry + fexit (Linux 5.5): two trampoline programs; the entry timestamp
 * is kept per thread in a hash map keyed by pid_tgid.
 */
#include "vfsread.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u64);   /* pid_tgid */
	__type(value, __u64); /* entry time, ns */
} starts SEC(".maps");

SEC("fentry/vfs_read")
int BPF_PROG(vfs_read_entry)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 now;

	if (!tgid_traced(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	store_entry(&starts, &pid_tgid, &now, 0, VFS_READ_ENTRY);
	return 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(vfs_read_exit, struct file *file, char *buf, size_t count,
	     loff_t *pos, ssize_t ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 *start = bpf_map_lookup_elem(&starts, &pid_tgid);
	__u64 start_ns;

	if (!start)
		return 0;
	start_ns = *start;
	bpf_map_delete_elem(&starts, &pid_tgid);
	record_return(start_ns, count, ret);
	return 0;
}
