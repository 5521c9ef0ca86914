// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe + kretprobe: two programs; entry time and the count argument are
 * kept per thread in a hash map keyed by pid_tgid, since a kretprobe sees
 * only the return value.
 */
#include "vfsread.h"

struct start {
	__u64 ns;
	__u64 requested;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct start);
} starts SEC(".maps");

SEC("kprobe/vfs_read")
int BPF_KPROBE(vfs_read_entry, struct file *file, char *buf, size_t count)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct start s;

	if (!tgid_traced(pid_tgid))
		return 0;
	s.ns = bpf_ktime_get_ns();
	s.requested = count;
	store_entry(&starts, &pid_tgid, &s, 0, VFS_READ_ENTRY);
	return 0;
}

SEC("kretprobe/vfs_read")
int BPF_KRETPROBE(vfs_read_return, ssize_t ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct start *s = bpf_map_lookup_elem(&starts, &pid_tgid);
	struct start copy;

	if (!s)
		return 0;
	copy = *s;
	bpf_map_delete_elem(&starts, &pid_tgid);
	record_return(copy.ns, copy.requested, ret);
	return 0;
}
