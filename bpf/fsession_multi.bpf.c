// SPDX-License-Identifier: GPL-2.0
/*
 * fsession.multi (BPF_TRACE_FSESSION_MULTI, in the 7.2 kernel's BTF): the
 * fsession program of fsession.bpf.c, loaded against the kernel's generic
 * bpf_multi_func and attached through a tracing_multi link that can name
 * many functions (here one). Such a program has no typed arguments: it
 * reads them with bpf_get_func_arg and bpf_get_func_ret.
 */
#include "vfsread.h"

extern __u64 *bpf_session_cookie(void *ctx) __ksym;
extern bool bpf_session_is_return(void *ctx) __ksym;

/* vfs_read(file, buf, count, pos): count is argument 2. */
#define COUNT_ARG 2

SEC("fsession.multi/vfs_read")
int vfs_read_session_multi(void *ctx)
{
	__u64 *cookie = bpf_session_cookie(ctx);
	__u64 count = 0, ret = 0;

	if (!bpf_session_is_return(ctx)) {
		*cookie = tgid_traced(bpf_get_current_pid_tgid()) ? bpf_ktime_get_ns() : 0;
		return 0;
	}
	if (!*cookie)
		return 0;
	bpf_get_func_arg(ctx, COUNT_ARG, &count);
	bpf_get_func_ret(ctx, &ret);
	record_return(*cookie, count, (__s64)ret);
	return 0;
}
