#pragma once
/*
 * A seccomp allowlist: the listed x86_64 syscalls are allowed, each optionally only when its
 * first argument equals one value; another syscall raises SIGSYS (SECCOMP_RET_TRAP: the call
 * does not run, and the crash handler names it before the process dies of it), and another
 * architecture or an x32 call kills the process. Built and loaded by hand: libseccomp takes about
 * 0.3 ms to compile and load a list of this size on the development VM, on the critical path of
 * every sandbox start (the sentry's and the gofer's own filters), where building this takes a few
 * microseconds. The program is a binary search over the numbers, which the kernel's install
 * takes less time over (seccomp_allow.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "cbox/compiler.h"

struct cbox_allow {
	int nr;
	int arg0; /* only with this first argument (compared as 64 bits); CBOX_ALLOW_ANY: any */
};
#define CBOX_ALLOW_ANY (-1)

struct sock_filter;
/* The program for rules[0..n) (any order; a syscall may appear twice, with different arg0).
 * Fills *prog (malloc'd, the caller's) and *len. Returns 0, -ENOMEM, or -E2BIG when the
 * program would exceed the kernel's BPF_MAXINSNS. */
CBOX_API int cbox_allow_build(const struct cbox_allow *rules, size_t n, struct sock_filter **prog,
                              unsigned short *len);
/* Build and install it (SECCOMP_SET_MODE_FILTER) for the calling thread. The caller has set
 * no_new_privs, or holds CAP_SYS_ADMIN. Returns 0 or -errno. */
CBOX_API int cbox_allow_load(const struct cbox_allow *rules, size_t n);
/* The same for a plain list of syscall numbers, each allowed with any arguments. */
CBOX_API int cbox_allow_load_nrs(const int *nrs, size_t n);
