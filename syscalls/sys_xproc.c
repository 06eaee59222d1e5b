/*
 * Calls that read or change another process: process_vm_readv and process_vm_writev, pidfd_getfd,
 * kcmp, get_robust_list, move_pages and migrate_pages (Linux's ptrace_may_access), and prlimit64
 * (check_prlimit_permission). The host runs them, on the guest's pids.
 *
 * Security: every guest task is the one host id, so the host's own permission check passes
 * between any two of them: a process that dropped to nobody could read and write the memory of
 * root's processes, take their open files (a token's file, a socket) or change their limits. So
 * the sentry first makes Linux's check on the ids it keeps (cbox_task_may_access, as for ptrace
 * and /proc/PID) and answers EPERM where Linux would; then the host runs the call, so that every
 * other answer stays the host's. Linux's answers that come before its permission check (EINVAL,
 * EFAULT, ESRCH) come first here too: a refused call is left to the host whenever the host would
 * refuse it for another reason without looking at the target. As for kill (sys_kill.c), the
 * target is the pid's task when the sentry looks; the host resolves the pid again when it runs
 * the call. Tried by t_cross_user in tests/integration/test_attack.sh.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "cbox/cred.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

#define MPOL_MF_MOVE     (1 << 1)
#define MPOL_MF_MOVE_ALL (1 << 2)
/* get_nodes refuses a mask longer than a page of bits (EINVAL). */
#define NODEMASK_MAX_BITS (4096UL * 8)

/* The task a pid argument names (0 is the caller: the filter lets that through), or NULL when
 * the sentry does not know it (the host's ESRCH, or the tiny init, which the host refuses). */
static struct cbox_task *target_of(struct cbox_sysctx *c, int i)
{
	return cbox_task_by_vtid(c->s, IARG(i));
}

/* PTRACE_MODE_READ_REALCREDS or ATTACH_REALCREDS (the same test without an LSM): EPERM when
 * refused, else the host's call. */
static int64_t check_access(struct cbox_sysctx *c, struct cbox_task *t)
{
	if (!t || cbox_task_may_access(c->task, t, false))
		return CBOX_SYSRET_CONTINUE;
	return -EPERM;
}

/* Whether the host would refuse the n iovecs at addr before looking at the target (import_iovec
 * and iovec_from_user: EFAULT, a negative length's EINVAL), or copy nothing at all (local: a total
 * of 0, answered 0): 1, else 0, or -ENOMEM. */
static int iovecs_fail_first(struct cbox_sysctx *c, uint64_t addr, uint64_t n, bool local)
{
	if (n == 0)
		return local;
	struct iovec *v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int first = cbox_sys_read(c, addr, v, n * sizeof(*v)) < 0;
	size_t total = 0;
	for (uint64_t i = 0; i < n && !first; i++) {
		if ((ssize_t)v[i].iov_len < 0)
			first = 1;
		total += v[i].iov_len;
	}
	free(v);
	return first || (local && total == 0);
}

static int64_t vm_rw(struct cbox_sysctx *c)
{
	uint64_t liovcnt = ARG(2), riovcnt = ARG(4);
	if (ARG(5) != 0 || liovcnt > IOV_MAX || riovcnt > IOV_MAX)
		return CBOX_SYSRET_CONTINUE; /* EINVAL */
	int64_t r = check_access(c, target_of(c, 0));
	if (r == CBOX_SYSRET_CONTINUE)
		return r;
	int f = iovecs_fail_first(c, ARG(1), liovcnt, true);
	if (f == 0)
		f = iovecs_fail_first(c, ARG(3), riovcnt, false);
	return f < 0 ? f : f ? CBOX_SYSRET_CONTINUE : r;
}

int64_t sys_process_vm_readv(struct cbox_sysctx *c)
{
	return vm_rw(c);
}

int64_t sys_process_vm_writev(struct cbox_sysctx *c)
{
	return vm_rw(c);
}

int64_t sys_pidfd_getfd(struct cbox_sysctx *c)
{
	if (ARG(2) != 0)
		return CBOX_SYSRET_CONTINUE; /* EINVAL */
	int64_t r = check_access(c, cbox_sys_pidfd_task(c, IARG(0)));
	/* The ptrace platform's install socket looks closed, in other processes too (as close
	 * and fcntl answer in sys_file.c): taken, it would give its holder the fds the sentry
	 * opens for that process from then on. */
	if (r == CBOX_SYSRET_CONTINUE && cbox_sentry_platform(c->s)->ops->needs_install_fd &&
	    IARG(1) == CBOX_PTRACE_INSTALL_FD)
		return -EBADF;
	return r;
}

int64_t sys_kcmp(struct cbox_sysctx *c)
{
	struct cbox_task *a = target_of(c, 0), *b = target_of(c, 1);
	if (!a || !b)
		return CBOX_SYSRET_CONTINUE; /* ESRCH first */
	int64_t r = check_access(c, a);
	return r == CBOX_SYSRET_CONTINUE ? check_access(c, b) : r;
}

int64_t sys_get_robust_list(struct cbox_sysctx *c)
{
	return check_access(c, target_of(c, 0));
}

int64_t sys_move_pages(struct cbox_sysctx *c)
{
	uint64_t flags = ARG(5);
	/* Unknown flags (EINVAL), and MPOL_MF_MOVE_ALL, which needs CAP_SYS_NICE on the host
	 * (EPERM), come before the target. */
	if ((flags & ~(uint64_t)(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL)) || (flags & MPOL_MF_MOVE_ALL))
		return CBOX_SYSRET_CONTINUE;
	return check_access(c, target_of(c, 0));
}

/* Whether get_nodes would refuse the node mask at addr for maxnode (EINVAL, EFAULT): 1, else 0,
 * or -ENOMEM. */
static int nodemask_fails(struct cbox_sysctx *c, uint64_t addr, uint64_t maxnode)
{
	uint64_t bits = maxnode - 1; /* (get_nodes counts so: 0 wraps, and is too long) */
	if (bits == 0 || addr == 0)
		return 0;
	if (bits > NODEMASK_MAX_BITS)
		return 1;
	size_t bytes = (size_t)((bits + 63) / 64) * 8;
	void *buf = malloc(bytes);
	if (!buf)
		return -ENOMEM;
	int fails = cbox_sys_read(c, addr, buf, bytes) < 0;
	free(buf);
	return fails;
}

int64_t sys_migrate_pages(struct cbox_sysctx *c)
{
	uint64_t maxnode = ARG(1);
	int64_t r = check_access(c, target_of(c, 0));
	if (r == CBOX_SYSRET_CONTINUE)
		return r;
	int f = nodemask_fails(c, ARG(2), maxnode);
	if (f == 0)
		f = nodemask_fails(c, ARG(3), maxnode);
	return f < 0 ? f : f ? CBOX_SYSRET_CONTINUE : r; /* (the host's EINVAL or EFAULT first) */
}

int64_t sys_prlimit64(struct cbox_sysctx *c)
{
	struct cbox_task *t = target_of(c, 0);
	/* The caller's own thread is always allowed (current == task). */
	if (!t || t == c->task)
		return CBOX_SYSRET_CONTINUE;
	struct rlimit lim;
	if (ARG(2) && cbox_sys_read(c, ARG(2), &lim, sizeof(lim)) < 0)
		return CBOX_SYSRET_CONTINUE; /* EFAULT first */
	/* Reading another user's limits is refused too, as Linux does. (A task not yet linked
	 * has no ids to compare: refused rather than let through unchecked.) */
	if (c->task->cred && t->cred && cbox_cred_may_prlimit(c->task->cred, t->cred))
		return CBOX_SYSRET_CONTINUE;
	return -EPERM;
}
