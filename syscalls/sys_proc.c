/* Process calls the sentry checks or answers: exec, prctl, priorities, sysinfo, another task's
 * CPU mask (clone: sys_clone.c). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "cbox/cred.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

int64_t sys_execve(struct cbox_sysctx *c)
{
	int64_t r = cbox_exec_loader_start(c);
	if (r != CBOX_SYSRET_CONTINUE)
		return r;
	return cbox_exec(c, AT_FDCWD, ARG(0), ARG(1), ARG(2), 0);
}

int64_t sys_execveat(struct cbox_sysctx *c)
{
	return cbox_exec(c, IARG(0), ARG(1), ARG(2), ARG(3), IARG(4));
}

int64_t sys_prctl(struct cbox_sysctx *c)
{
	switch (IARG(0)) {
	case PR_SET_NAME:
	case PR_GET_NAME:
	case PR_SET_PDEATHSIG:
	case PR_GET_PDEATHSIG:
	case PR_SET_CHILD_SUBREAPER:
	case PR_GET_CHILD_SUBREAPER:
	case PR_GET_SECCOMP:
	case PR_SET_TIMERSLACK:
	case PR_GET_TIMERSLACK:
	case PR_CAP_AMBIENT:
	case PR_GET_SECUREBITS:
	case PR_SET_THP_DISABLE:
	case PR_GET_THP_DISABLE:
	case PR_SET_VMA:
		return CBOX_SYSRET_CONTINUE;
	case PR_SET_SECCOMP:
		/* As seccomp(2) (syscalls/sys_privileged.c): a filter of the guest's own can only
		 * restrict it, and this older interface has no listener flag. */
		return ARG(1) == SECCOMP_MODE_FILTER ? cbox_sys_filter_allowed(c, ARG(2))
		                                     : CBOX_SYSRET_CONTINUE;
	case PR_SET_NO_NEW_PRIVS:
		/* The guest's own flag (the host's is always set: guest_init.c), kept across exec
		 * and by every child; it can only be set, and it keeps a guest filter from needing
		 * CAP_SYS_ADMIN (cbox_sys_filter_allowed). */
		if (ARG(1) != 1 || ARG(2) || ARG(3) || ARG(4))
			return -EINVAL;
		c->task->no_new_privs = true;
		return 0;
	case PR_GET_NO_NEW_PRIVS:
		if (ARG(1) || ARG(2) || ARG(3) || ARG(4))
			return -EINVAL;
		return c->task->no_new_privs ? 1 : 0;
	case PR_GET_KEEPCAPS:
	case PR_SET_KEEPCAPS:
	case PR_CAPBSET_READ:
		return cbox_sys_prctl_caps(c); /* the sentry's credentials (sys_ident.c) */
	case PR_SET_DUMPABLE:
		/* Kept by the sentry for emulated ptrace (a guest tracer's permission), and run by
		 * the host too, whose own checks (process_vm_readv) follow it. */
		if (ARG(1) > 1)
			return -EINVAL; /* SUID_DUMP_DISABLE or SUID_DUMP_USER only */
		if (c->task->tg)
			c->task->tg->nondumpable = ARG(1) == 0;
		return CBOX_SYSRET_CONTINUE;
	case PR_GET_DUMPABLE:
		/* The sentry's flag: an emulated change of ids clears it as Linux's would, where
		 * the host's never sees one. */
		return c->task->tg && c->task->tg->nondumpable ? 0 : 1;
	case PR_SET_PTRACER:
		return -EINVAL; /* no Yama: any tracer Linux's own check allows */
	case PR_SET_MM:
		return -EPERM; /* needs CAP_SYS_RESOURCE */
	default:
		return -EINVAL;
	}
}

/* sysinfo: the machine's memory, swap and load are the host's, as /proc/meminfo and
 * /proc/loadavg show them (programs size caches and thread pools from them); the process count
 * is the sandbox's own. */
int64_t sys_sysinfo(struct cbox_sysctx *c)
{
	struct sysinfo si;
	if (sysinfo(&si) < 0)
		return -EIO;
	size_t n = cbox_sentry_ntasks(c->s);
	si.procs = (unsigned short)(n > 65535 ? 65535 : n);
	return cbox_sys_write(c, ARG(0), &si, sizeof(si));
}

/*
 * sched_setaffinity and sched_getaffinity on another task than the caller (the filter lets the
 * caller's own, pid 0, through). The sentry makes the call itself, on the task's host tid, so
 * that it happens between two of its answers and never while an fd install holds that task on
 * one CPU (platform/seccomp.c): the mask set or read is the task's own. A continued call would
 * run later, in the caller, possibly during such an install. The host lets any guest task do
 * this to any other (they are one host id), so nothing is checked beyond what the host checks;
 * a pid the sentry does not know (or pid 0 under --strict) is left to the host.
 */
/* Bytes in a CPU mask (1024 at most: 8192 CPUs, the kernel's largest NR_CPUS). */
#define AFFINITY_MAX 1024

/* The kernel's own mask size, cpumask_size(): what sched_getaffinity returns for a long buffer. */
static size_t cpumask_bytes(void)
{
	static size_t bytes;
	if (!bytes) {
		unsigned long probe[AFFINITY_MAX / sizeof(unsigned long)];
		long n = syscall(SYS_sched_getaffinity, 0, sizeof(probe), probe);
		bytes = n > 0 && (size_t)n <= sizeof(probe) ? (size_t)n : sizeof(probe);
	}
	return bytes;
}

static struct cbox_task *affinity_target(struct cbox_sysctx *c)
{
	pid_t vid = IARG(0);
	return vid > 0 ? cbox_task_by_vtid(c->s, vid) : NULL;
}

int64_t sys_sched_setaffinity(struct cbox_sysctx *c)
{
	struct cbox_task *t = affinity_target(c);
	if (!t)
		return CBOX_SYSRET_CONTINUE;
	/* As the kernel reads the mask: a shorter one is zero-filled, a longer one cut to the
	 * kernel's own size; unreadable is EFAULT, before the task is looked at. */
	unsigned long mask[AFFINITY_MAX / sizeof(unsigned long)];
	size_t len = (uint32_t)ARG(1);
	if (len > cpumask_bytes())
		len = cpumask_bytes();
	memset(mask, 0, sizeof(mask));
	int r = cbox_sys_read(c, ARG(2), mask, len);
	if (r < 0)
		return r;
	/* Linux's check_same_owner. Security: the sentry sets the mask itself, as the host tracer
	 * of every guest task; without this check a process that dropped to nobody could pin
	 * root's processes to one CPU (t_cross_user in tests/integration/test_attack.sh). */
	if (t != c->task &&
	    !(c->task->cred && t->cred && cbox_cred_same_owner(c->task->cred, t->cred)))
		return -EPERM;
	return syscall(SYS_sched_setaffinity, t->tid, cpumask_bytes(), mask) < 0 ? -errno : 0;
}

int64_t sys_sched_getaffinity(struct cbox_sysctx *c)
{
	struct cbox_task *t = affinity_target(c);
	if (!t)
		return CBOX_SYSRET_CONTINUE;
	unsigned long mask[AFFINITY_MAX / sizeof(unsigned long)];
	size_t len = (uint32_t)ARG(1);
	/* The kernel's checks come first: a length not in whole longs, or too short for the
	 * machine's CPUs (which the host call below finds for us, as len is kept), is EINVAL. */
	if (len & (sizeof(unsigned long) - 1))
		return -EINVAL;
	size_t ask = len > cpumask_bytes() ? cpumask_bytes() : len;
	long n = syscall(SYS_sched_getaffinity, t->tid, ask, mask);
	if (n < 0)
		return -errno;
	int r = cbox_sys_write(c, ARG(2), mask, (size_t)n);
	return r < 0 ? r : n;
}
