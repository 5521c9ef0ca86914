// SPDX-License-Identifier: GPL-2.0
/*
 * fentry + fexit with task local storage (Linux 5.11): the entry time is
 * kept in storage attached to the thread's task_struct instead of a hash
 * map, so the kernel frees it with the thread and no map can fill up.
 * The entry is zeroed at return rather than deleted, to avoid an
 * allocation per call.
 */
#include "vfsread.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64); /* entry time, ns; 0 = no call pending */
} task_starts SEC(".maps");

SEC("fentry/vfs_read")
int BPF_PROG(vfs_read_entry)
{
	__u64 *start;

	if (!tgid_traced(bpf_get_current_pid_tgid()))
		return 0;
	start = bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* NULL: no storage could be had; non-zero: the thread's previous
	 * call never reached fexit. Either way a call is lost. */
	if (!start || *start)
		count_lost(0, start != NULL);
	if (start)
		*start = bpf_ktime_get_ns();
	return 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(vfs_read_exit, struct file *file, char *buf, size_t count,
	     loff_t *pos, ssize_t ret)
{
	__u64 *start = bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(), 0, 0);
	__u64 start_ns;

	if (!start || !*start)
		return 0;
	start_ns = *start;
	*start = 0;
	record_return(start_ns, count, ret);
	return 0;
}

/*
 * Writes the thread ID of every task with a call pending, so that user
 * space can count what a map iteration cannot enumerate (Linux 5.8).
 */
/*
 * Only pid is read: a local type with just that member (CO-RE matches it
 * to task_struct) keeps the whole task_struct out of the object's BTF,
 * whose pointer members clang-19 would emit as forward declarations in an
 * order that varies between compiles.
 */
struct task_struct___pid {
	pid_t pid;
} __attribute__((preserve_access_index));

SEC("iter/task")
int count_pending(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 *start;
	__u32 tid;

	if (!task)
		return 0;
	start = bpf_task_storage_get(&task_starts, task, 0, 0);
	if (!start || !*start)
		return 0;
	tid = ((struct task_struct___pid *)task)->pid;
	bpf_seq_write(ctx->meta->seq, &tid, sizeof(tid));
	return 0;
}
