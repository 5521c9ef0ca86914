// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe + kretprobe per function: one program of each, attached to every
 * traced function by a perf-event link of its own whose cookie names the
 * function (Linux 5.15); the entry time and vfs_read's count argument are
 * kept in a hash map keyed by pid_tgid, the stack pointer at entry and
 * the function (calls.h).
 */
#include "calls.h"

SEC("kprobe/vfs_read")
int entry_keach(struct pt_regs *ctx)
{
	kprobe_entry(ctx);
	return 0;
}

SEC("kretprobe/vfs_read")
int return_keach(struct pt_regs *ctx)
{
	kretprobe_return(ctx);
	return 0;
}
