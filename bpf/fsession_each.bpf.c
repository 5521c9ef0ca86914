// SPDX-License-Identifier: GPL-2.0
/*
 * fsession per function (BPF_TRACE_FSESSION, Linux 7.0): the kernel fixes
 * the program's target at load, so tracers loads it once per traced
 * function and attaches each with its own link, whose cookie says the
 * function; the entry time is in the session cookie (multi.h).
 */
#include "multi.h"

SEC("fsession/vfs_read")
int session_each(void *ctx)
{
	return fsession_run(ctx);
}
