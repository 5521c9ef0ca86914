// SPDX-License-Identifier: GPL-2.0
/*
 * fentry.multi + fexit.multi (BPF_TRACE_FENTRY_MULTI, _FEXIT_MULTI, in the
 * 7.2 kernel's BTF): two programs on two tracing_multi links naming every
 * traced function; the entry time is kept in a hash map keyed by pid_tgid
 * and the trampoline frame (calls.h).
 */
#include "calls.h"

SEC("fentry.multi/vfs_read")
int entry_multi(void *ctx)
{
	trampoline_entry(ctx);
	return 0;
}

SEC("fexit.multi/vfs_read")
int exit_multi(void *ctx)
{
	trampoline_exit(ctx);
	return 0;
}
