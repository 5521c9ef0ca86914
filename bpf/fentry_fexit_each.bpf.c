// SPDX-License-Identifier: GPL-2.0
/*
 * fentry + fexit per function: the kernel fixes a trampoline program's
 * target at load, so tracers loads each program once per traced function
 * and attaches each with its own link, whose cookie says the function;
 * the entry time is kept in a hash map keyed by pid_tgid and the
 * trampoline frame (calls.h).
 */
#include "calls.h"

SEC("fentry/vfs_read")
int entry_each(void *ctx)
{
	trampoline_entry(ctx);
	return 0;
}

SEC("fexit/vfs_read")
int exit_each(void *ctx)
{
	trampoline_exit(ctx);
	return 0;
}
