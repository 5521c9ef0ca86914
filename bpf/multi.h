/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the mechanisms that trace many functions at once (one program
 * on a multi link, or one program per function): which function a run is
 * for, how its return register reads, and the fsession body. A run learns
 * its function from the attach cookie tracers gives each function; with
 * one function traced the cookie is a load-time constant, so the verifier
 * prunes what a single function does not need.
 */
#ifndef TRACEBENCH_MULTI_H
#define TRACEBENCH_MULTI_H

#include "vfsread.h"
#include "session.h"

/*
 * A function's cookie (tracers.functionTable): its index in
 * tracers.Config.Functions in the low 32 bits; above, how its return
 * register reads (from its BTF return type).
 */
#define COOKIE_FUNCTION(c) ((__u32)(c))
#define RESULT_SIZE(c) (((c) >> 32) & 0xff) /* bytes; 0: no integer or pointer */
#define RESULT_SIGNED (1ULL << 40)          /* sign-extended from its size */
#define RESULT_ERRNO (1ULL << 41)           /* -4095..-1 is -errno (IS_ERR_VALUE) */
#define MAX_ERRNO 4095

/* vfs_read(file, buf, count, pos): count is argument 2. */
#define COUNT_ARG 2
#define NO_FUNCTION 0xffffffff

/* Set by user space before load. */
const volatile __u32 functions_traced = 1;
const volatile __u64 only_cookie = 0;               /* the cookie when one function is traced */
const volatile __u32 count_function = NO_FUNCTION;  /* vfs_read's index, if traced */

static __always_inline __u64 call_cookie(void *ctx)
{
	if (functions_traced == 1)
		return only_cookie;
	return bpf_get_attach_cookie(ctx);
}

/* Whether the call's function is vfs_read, whose count argument is read. */
static __always_inline bool reads_count(__u64 cookie)
{
	return COOKIE_FUNCTION(cookie) == count_function;
}

/* Reads the return register ret as the function's return type: 0 where it
 * has no integer or pointer; *error tells -errno. */
static __always_inline __s64 call_result(__u64 cookie, __u64 ret, bool *error)
{
	__u32 size = RESULT_SIZE(cookie);
	__s64 result = ret;

	if (size == 0) {
		result = 0;
	} else if (size < 8) {
		__u32 shift = 64 - 8 * size;

		if (cookie & RESULT_SIGNED)
			result = (__s64)(ret << shift) >> shift;
		else
			result = (ret << shift) >> shift;
	}
	*error = (cookie & RESULT_ERRNO) && (__u64)result >= (__u64)-MAX_ERRNO;
	return result;
}

/* Accounts the return of a call whose function's cookie is cookie. */
static __always_inline void record_function(__u64 cookie, __u64 start_ns, __u64 requested, __u64 ret)
{
	bool error;
	__s64 result = call_result(cookie, ret, &error);

	record_call(COOKIE_FUNCTION(cookie), start_ns, requested, result, error);
}

/*
 * One fsession run of a call (an fsession.multi program, or an fsession
 * program per function): the entry time in the session cookie, 0 for a
 * call filtered out (the verifier accepts only 0 at entry, so the return
 * half runs regardless); arguments and result through the helpers, which
 * need no typed prototype.
 */
static __always_inline int fsession_run(void *ctx)
{
	__u64 *start = session_cookie(ctx);
	__u64 cookie, count = 0, ret = 0;

	if (!session_is_return(ctx)) {
		*start = tgid_traced(bpf_get_current_pid_tgid()) ? bpf_ktime_get_ns() : 0;
		return 0;
	}
	if (!*start)
		return 0;
	cookie = call_cookie(ctx);
	if (reads_count(cookie))
		bpf_get_func_arg(ctx, COUNT_ARG, &count);
	bpf_get_func_ret(ctx, &ret);
	record_function(cookie, *start, count, ret);
	return 0;
}

#endif /* TRACEBENCH_MULTI_H */
