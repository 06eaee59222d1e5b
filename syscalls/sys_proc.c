/* Process calls the sentry checks or answers: exec, prctl, priorities, sysinfo (clone:
 * sys_clone.c). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

int64_t sys_execve(struct cbox_sysctx *c)
{
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
	case PR_SET_NO_NEW_PRIVS:
	case PR_GET_NO_NEW_PRIVS:
	case PR_SET_DUMPABLE:
	case PR_GET_DUMPABLE:
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
		return CBOX_SYSRET_CONTINUE;
	case PR_GET_KEEPCAPS:
	case PR_SET_KEEPCAPS:
	case PR_CAPBSET_READ:
		return cbox_sys_prctl_caps(c); /* the sentry's credentials (sys_ident.c) */
	case PR_SET_PTRACER:
		return -EINVAL;
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
