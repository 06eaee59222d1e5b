/*
 * Calls that need privilege or change the sandbox's shape. Most the guest may not make (it has
 * no capabilities, and the clock and namespaces belong to the host); they are answered with Linux's
 * own order of checks: the arguments Linux validates before the privilege check get their
 * EINVAL/EBADF/EFAULT first, so that a program probing for a feature learns what it would learn
 * from an unprivileged process on Linux, and only then EPERM. Nothing here reaches the host.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/bpf.h>
#include <linux/nsfs.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cbox/cred.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

/* The namespace flags unshare(2) knows; other bits are EINVAL. */
#define UNSHARE_KNOWN                                                                              \
	(CLONE_FILES | CLONE_FS | CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS |    \
	 CLONE_NEWPID | CLONE_NEWTIME | CLONE_NEWUSER | CLONE_NEWUTS | CLONE_SYSVSEM |             \
	 CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

/* unshare(CLONE_FS): the task's own copy of cwd, root and umask. */
static int unshare_fs(struct cbox_sysctx *c)
{
	struct cbox_fs_ctx *old = c->task->fs;
	if (old->refs == 1)
		return 0;
	struct cbox_fs_ctx *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	*fs = (struct cbox_fs_ctx){.refs = 1,
	                           .cwd = cbox_dentry_get(old->cwd),
	                           .root = cbox_dentry_get(old->root),
	                           .umask = old->umask};
	old->refs--; /* still held by the tasks it is shared with */
	c->task->fs = fs;
	return 0;
}

int64_t sys_unshare(struct cbox_sysctx *c)
{
	uint64_t flags = ARG(0);
	if (flags & ~(uint64_t)UNSHARE_KNOWN)
		return -EINVAL;
	/* What a process may unshare without privilege, and what the sentry mirrors: its fd table
	 * and its fs context (cwd, root, umask) become its own, and System V semaphore undo
	 * lists, which are the host kernel's alone. The host unshares the same (CONTINUE), so the
	 * sentry's copies and the host's agree. Namespaces need capabilities the guest lacks;
	 * CLONE_THREAD, CLONE_SIGHAND and CLONE_VM would need a single-threaded caller's
	 * checks, which the sentry does not make. */
	const uint64_t own = CLONE_FILES | CLONE_FS | CLONE_SYSVSEM;
	if (flags & ~own)
		return -EPERM;
	if (flags & CLONE_FS) {
		int r = unshare_fs(c);
		if (r < 0)
			return r;
	}
	if (flags & CLONE_FILES) {
		/* The copy keeps the ptrace platform's install socket, shared with the tasks the
		 * table was shared with, until the task's next trapped call gives it its own before
		 * anything else (dispatch.c renew_channel: the socket cannot be made here, while
		 * the host's table is still the shared one). */
		if (cbox_fdtable_shared(c->task->files) &&
		    cbox_sentry_platform(c->s)->ops->needs_install_fd)
			c->task->renew_channel = true;
		struct cbox_fdtable *own_files = cbox_fdtable_copy(c->task->files);
		if (!own_files)
			return -ENOMEM;
		cbox_fdtable_put(c->s, c->task->files);
		c->task->files = own_files;
	}
	return CBOX_SYSRET_CONTINUE;
}

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

int64_t sys_setns(struct cbox_sysctx *c)
{
	int fd = cbox_fd_get(c->s, c->task, IARG(0));
	if (fd < 0)
		return fd == -EBADF ? -EBADF : -EPERM;
	/* Linux's order: an fd that is neither a namespace nor a pidfd, or a namespace of
	 * another type than nstype asks for, is EINVAL; joining is then EPERM (no CAP_SYS_ADMIN
	 * in the guest, and the sandbox's namespaces are not the guest's to leave). */
	int r = -EPERM;
	/* NS_GET_NSTYPE answers only on a namespace file (ENOTTY elsewhere). */
	int type = ioctl(fd, NS_GET_NSTYPE);
	if (type >= 0) {
		if (ARG(1) && (uint64_t)type != ARG(1))
			r = -EINVAL;
	} else {
		char link[64], target[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n > 0)
			target[n] = '\0';
		if (n <= 0 || strcmp(target, "anon_inode:[pidfd]") != 0)
			r = -EINVAL;
	}
	close(fd);
	return r;
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
 *
 * Linux lets a task add a filter only with no_new_privs set or CAP_SYS_ADMIN (EACCES otherwise,
 * after the flags and the program's header are checked). The host's no_new_privs is always set
 * (guest_init.c), so that check is the sentry's, on the guest's own flag and capabilities.
 */
#define FILTER_FLAGS                                                                               \
	(SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW |    \
	 SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH |                      \
	 SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)

int64_t cbox_sys_filter_allowed(struct cbox_sysctx *c, uint64_t prog)
{
	struct sock_fprog fp;
	if (cbox_sys_read(c, prog, &fp, sizeof(fp)) < 0)
		return -EFAULT;
	if (fp.len == 0 || fp.len > BPF_MAXINSNS)
		return -EINVAL;
	if (!c->task->no_new_privs && !cbox_cred_capable(c->task->cred, CAP_SYS_ADMIN))
		return -EACCES;
	return CBOX_SYSRET_CONTINUE;
}

int64_t sys_seccomp(struct cbox_sysctx *c)
{
	unsigned op = (unsigned)ARG(0);
	uint64_t flags = ARG(1);
	if (op != SECCOMP_SET_MODE_FILTER)
		return CBOX_SYSRET_CONTINUE;
	/* (the host's EINVAL for a flag it does not know, or a killable wait without a listener,
	 * comes before anything else) */
	if ((flags & ~(uint64_t)FILTER_FLAGS) ||
	    ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) &&
	     !(flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)))
		return CBOX_SYSRET_CONTINUE;
	if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
		return -EPERM;
	return cbox_sys_filter_allowed(c, ARG(2));
}

int cbox_sys_read_sized(struct cbox_sysctx *c, uint64_t addr, uint64_t size, void *out,
                        size_t known)
{
	if (size > CBOX_PAGE)
		return -E2BIG;
	memset(out, 0, known);
	if (size > known) {
		unsigned char tail[CBOX_PAGE];
		if (cbox_sys_read(c, addr + known, tail, size - known) < 0)
			return -EFAULT;
		for (size_t i = 0; i < size - known; i++)
			if (tail[i])
				return -E2BIG;
	}
	if (size > 0 && cbox_sys_read(c, addr, out, size < known ? size : known) < 0)
		return -EFAULT;
	return 0;
}

/*
 * bpf: no eBPF for the guest. Maps and programs live in the host kernel, whose verifier and JIT
 * are a classic escape route, so nothing here reaches the host. The answer follows Linux's
 * order for a process without CAP_BPF: the size and copy of the attributes (E2BIG, EFAULT), an
 * unknown command (EINVAL), then EPERM.
 */
int64_t sys_bpf(struct cbox_sysctx *c)
{
	union bpf_attr attr;
	int r = cbox_sys_read_sized(c, ARG(1), (uint32_t)ARG(2), &attr, sizeof(attr));
	if (r < 0)
		return r;
	int cmd = IARG(0);
	if (cmd < 0 || cmd > BPF_PROG_BIND_MAP) /* the last command of the headers cbox uses */
		return -EINVAL;
	return -EPERM;
}

/*
 * perf_event_open: no performance counters for the guest (they observe the host's CPUs and
 * kernel). As Linux orders its checks: unknown flags (EINVAL), the attribute struct (EFAULT;
 * E2BIG, with the size this build knows written back as Linux does), counting the kernel
 * (EACCES, as with perf_event_paranoid >= 2), a bad period or cgroup mode (EINVAL), a PMU type
 * nothing in the sandbox provides (ENOENT: the dynamic types of the host's PMUs are not the
 * guest's), then EPERM for the built-in types.
 */
int64_t sys_perf_event_open(struct cbox_sysctx *c)
{
	uint64_t flags = ARG(4);
	const uint64_t all = PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP |
	                     PERF_FLAG_FD_CLOEXEC;
	if (flags & ~all)
		return -EINVAL;
	uint64_t addr = ARG(0);
	uint32_t size;
	if (cbox_sys_read(c, addr + offsetof(struct perf_event_attr, size), &size, sizeof(size)) <
	    0)
		return -EFAULT;
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	struct perf_event_attr attr;
	int r = size < PERF_ATTR_SIZE_VER0
	            ? -E2BIG
	            : cbox_sys_read_sized(c, addr, size, &attr, sizeof(attr));
	if (r == -E2BIG) {
		uint32_t known = sizeof(attr);
		cbox_sys_write(c, addr + offsetof(struct perf_event_attr, size), &known,
		               sizeof(known));
	}
	if (r < 0)
		return r;
	if (!attr.exclude_kernel)
		return -EACCES;
	if (attr.freq ? attr.sample_freq > 100000 : (attr.sample_period & (1ULL << 63)))
		return -EINVAL;
	if ((flags & PERF_FLAG_PID_CGROUP) && (IARG(1) == -1 || IARG(2) == -1))
		return -EINVAL;
	if (attr.type >= PERF_TYPE_MAX)
		return -ENOENT;
	return -EPERM;
}
