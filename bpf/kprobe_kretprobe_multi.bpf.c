// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe.multi + kretprobe.multi (kprobe_multi links, Linux 5.18): two
 * programs on two links naming every traced function; the entry time and
 * vfs_read's count argument are kept in a hash map keyed by pid_tgid, the
 * stack pointer at entry and the function (calls.h).
 */
#include "calls.h"

SEC("kprobe.multi/vfs_read")
int entry_kmulti(struct pt_regs *ctx)
{
	kprobe_entry(ctx);
	return 0;
}

SEC("kretprobe.multi/vfs_read")
int return_kmulti(struct pt_regs *ctx)
{
	kretprobe_return(ctx);
	return 0;
}
