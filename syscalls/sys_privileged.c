/*
 * Calls that need privilege or change the sandbox's shape. Most the guest may not make (it has
 * no capabilities, and the clock and namespaces belong to the host); they are answered with Linux's
 * own order of checks: the arguments Linux validates before the privilege check get their
 * EINVAL/EBADF/EFAULT first, so that a program probing for a feature learns what it would learn
 * from an unprivileged process on Linux, and only then EPERM. Nothing here reaches the host.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

/* The namespace flags unshare(2) knows; other bits are EINVAL. */
#define UNSHARE_KNOWN                                                                              \
	(CLONE_FILES | CLONE_FS | CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS |    \
	 CLONE_NEWPID | CLONE_NEWTIME | CLONE_NEWUSER | CLONE_NEWUTS | CLONE_SYSVSEM |             \
	 CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

int64_t sys_unshare(struct cbox_sysctx *c)
{
	uint64_t flags = ARG(0);
	if (flags & ~(uint64_t)UNSHARE_KNOWN)
		return -EINVAL;
	/* Nothing to unshare is a success on Linux. Anything else would change what the sentry
	 * tracks (the fd table, the fs context) or need capabilities the guest lacks. */
	return flags == 0 ? 0 : -EPERM;
}

int64_t sys_setns(struct cbox_sysctx *c)
{
	int fd = cbox_task_getfd(c->task, IARG(0));
	if (fd < 0)
		return fd == -EBADF ? -EBADF : -EPERM;
	close(fd);
	return -EPERM;
}

/* A timespec Linux would accept for setting the clock. */
static bool settable(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

int64_t sys_clock_settime(struct cbox_sysctx *c)
{
	clockid_t id = (clockid_t)IARG(0);
	struct timespec ts;
	/* Only CLOCK_REALTIME can be set; the other clocks (and unknown or dynamic ids) say
	 * EINVAL whoever asks. */
	if (id != CLOCK_REALTIME)
		return -EINVAL;
	int r = cbox_sys_read(c, ARG(1), &ts, sizeof(ts));
	if (r < 0)
		return r;
	return settable(&ts) ? -EPERM : -EINVAL;
}

int64_t sys_settimeofday(struct cbox_sysctx *c)
{
	if (ARG(0)) {
		struct timeval tv;
		int r = cbox_sys_read(c, ARG(0), &tv, sizeof(tv));
		if (r < 0)
			return r;
		if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
			return -EINVAL;
	}
	if (ARG(1)) {
		struct timezone tz;
		int r = cbox_sys_read(c, ARG(1), &tz, sizeof(tz));
		if (r < 0)
			return r;
		if (tz.tz_minuteswest < -15 * 60 || tz.tz_minuteswest > 15 * 60)
			return -EINVAL;
	}
	return -EPERM; /* CAP_SYS_TIME */
}

/*
 * seccomp: a guest may restrict itself further, as on Linux, but never take over its own
 * syscalls. Whatever a guest filter returns can only make a call fail or be more restricted:
 * KILL, TRAP and ERRNO outrank the sentry's USER_NOTIF/TRACE; ALLOW and LOG rank below them, so
 * the sentry still sees every call it traps; a USER_NOTIF or TRACE of the guest's own, with no
 * listener attached, makes the call fail with ENOSYS (or reach the sentry's tracer, which answers
 * it from its table). The one thing that would hand the guest the sentry's role is a listener
 * fd of its own (SECCOMP_FILTER_FLAG_NEW_LISTENER): that flag is a register argument, checked
 * here race-free, and refused. The BPF program itself is left to the kernel's checks.
 */
int64_t sys_seccomp(struct cbox_sysctx *c)
{
	unsigned op = (unsigned)ARG(0);
	uint64_t flags = ARG(1);
	if (op == SECCOMP_SET_MODE_FILTER && (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
		return -EPERM;
	return CBOX_SYSRET_CONTINUE;
}
