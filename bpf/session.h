/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session kfuncs of fsession and kprobe.session programs. From 6.10 to
 * 6.19 they took no argument; 7.0 gave them ctx (pt_regs for kprobes) for
 * fsession. A kfunc call must match the kernel's prototype, so a
 * kprobe.session object is built for both forms (tracers loads the one
 * the kernel's BTF asks for); fsession exists in the ctx form only.
 */
#ifndef TRACEBENCH_SESSION_H
#define TRACEBENCH_SESSION_H

#ifdef SESSION_KFUNCS_WITHOUT_CTX
extern __u64 *bpf_session_cookie(void) __ksym;
extern bool bpf_session_is_return(void) __ksym;
#define session_cookie(ctx) bpf_session_cookie()
#define session_is_return(ctx) bpf_session_is_return()
#else
extern __u64 *bpf_session_cookie(void *ctx) __ksym;
extern bool bpf_session_is_return(void *ctx) __ksym;
#define session_cookie(ctx) bpf_session_cookie(ctx)
#define session_is_return(ctx) bpf_session_is_return(ctx)
#endif

#endif /* TRACEBENCH_SESSION_H */
