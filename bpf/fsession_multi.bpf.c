// SPDX-License-Identifier: GPL-2.0
/*
 * fsession.multi (BPF_TRACE_FSESSION_MULTI, in the 7.2 kernel's BTF): one
 * fsession program, loaded against the kernel's generic bpf_multi_func and
 * attached through one tracing_multi link naming every traced function;
 * the entry time is in the session cookie (multi.h). Such a program has no
 * typed arguments: it reads them with bpf_get_func_arg and
 * bpf_get_func_ret.
 */
#include "multi.h"

SEC("fsession.multi/vfs_read")
int vfs_read_session_multi(void *ctx)
{
	return fsession_run(ctx);
}
