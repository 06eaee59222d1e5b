/* The seccomp platform: SECCOMP_RET_USER_NOTIF for trapped calls. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static int sc_add_listener(struct cbox_platform *p, int listener)
{
	if (p->nlisteners == CBOX_PLATFORM_MAX_LISTENERS)
		return -ENOSPC;
	/* Synchronous wake-ups (Linux 6.6): the trapping task wakes the sentry on its own CPU
	 * and sleeps, and the answer wakes it back there, instead of a wake-up across CPUs each
	 * way. A trapped stat fell from 55-70 us to 13-15 us on this 2-CPU VM, where cross-CPU
	 * wake-ups are expensive. An older kernel refuses the flag and the listener works as
	 * before. CBOX_NO_SYNC_WAKE=1 turns it off, to compare. */
	if (!getenv("CBOX_NO_SYNC_WAKE") &&
	    ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
		cbox_debug("no synchronous wake-ups on the seccomp listener: %s", strerror(errno));
	p->listeners[p->nlisteners++] = listener;
	return 0;
}

static void sc_drop_listener(struct cbox_platform *p, int listener)
{
	for (size_t i = 0; i < p->nlisteners; i++)
		if (p->listeners[i] == listener) {
			close(listener);
			p->listeners[i] = p->listeners[--p->nlisteners];
			return;
		}
}

static int sc_recv(struct cbox_platform *p, int listener, struct cbox_trap *t)
{
	(void)p;
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n)); /* the kernel refuses a non-zeroed buffer */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
		return -errno;
	memset(t, 0, sizeof(*t));
	t->tid = (pid_t)n.pid;
	t->nr = n.data.nr;
	memcpy(t->args, n.data.args, sizeof(t->args));
	t->ip = n.data.instruction_pointer;
	t->notif_id = n.id;
	t->listener = listener;
	return 0;
}

static int sc_send(struct cbox_platform *p, struct cbox_trap *t, int64_t ret, uint32_t flags)
{
	struct seccomp_notif_resp r = {.id = t->notif_id, .flags = flags};
	if (!flags) {
		if (ret < 0 && ret >= -4095)
			r.error = (int32_t)ret;
		else
			r.val = ret;
	}
	(void)p;
	if (ioctl(t->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0) {
		/* ENOENT: the task was killed while we worked; nothing waits for the answer. */
		return errno == ENOENT ? 0 : -errno;
	}
	return 0;
}

static int sc_reply(struct cbox_platform *p, struct cbox_trap *t, int64_t ret)
{
	if (t->ptrace_stop)
		return cbox_ptrace_reply(t, ret);
	return sc_send(p, t, ret, 0);
}

static int sc_cont(struct cbox_platform *p, struct cbox_trap *t)
{
	if (t->ptrace_stop)
		return cbox_ptrace_cont(t);
	/* CONTINUE is safe only because the sentry checked registers, never memory, for the calls
	 * it passes through this way (see syscalls.def). */
	return sc_send(p, t, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

static int addfd(struct cbox_trap *t, int hostfd, bool cloexec, uint32_t flags)
{
	if (t->ptrace_stop)
		return -EINVAL; /* fds are installed only while a notification is pending */
	struct seccomp_notif_addfd a = {
	    .id = t->notif_id,
	    .flags = flags,
	    .srcfd = (uint32_t)hostfd,
	    .newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int fd = ioctl(t->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	return fd < 0 ? -errno : fd;
}

/*
 * Installing an fd wakes the trapped task, which installs it itself, and puts the sentry to sleep
 * until it has; both are ordinary wake-ups, not the synchronous ones of the answer (above). The
 * scheduler then sends the task to the idle CPU rather than queue it behind the sentry, and the
 * sentry back to the other one: two cross-CPU wake-ups, which on this nested 2-CPU VM cost 15-20
 * us each (open+close took 55 us where a stat takes 10). So while an fd is installed, the task
 * and the sentry are held on the CPU the sentry runs on, which is the task's (the synchronous
 * wake-up brought the sentry there): both wake-ups stay on it.
 *
 * The task's own mask is put back before it is answered: it never runs an instruction of its
 * own while held (the install happens in its syscall, in the kernel), and another task's
 * sched_setaffinity or sched_getaffinity on it is trapped (filter.c) and made by the sentry
 * itself (syscalls/sys_proc.c), so only between two answers, and sees or changes the real mask.
 * Without a CPU to hold on (a mask larger than cpu_set_t, a task barred from this CPU) the install
 * simply goes the ordinary way.
 */
struct hold {
	cpu_set_t task, self;
	bool on;
};

static void hold_here(pid_t tid, struct hold *h)
{
	h->on = false;
	int cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	if (sched_getaffinity(tid, sizeof(h->task), &h->task) < 0 || !CPU_ISSET(cpu, &h->task) ||
	    CPU_COUNT(&h->task) == 1 || sched_getaffinity(0, sizeof(h->self), &h->self) < 0)
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(tid, sizeof(one), &one) < 0)
		return;
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		sched_setaffinity(tid, sizeof(h->task), &h->task);
		return;
	}
	h->on = true;
}

static void release(pid_t tid, const struct hold *h)
{
	if (!h->on)
		return;
	/* (ESRCH: the task was killed meanwhile; nothing else can fail on a mask it had.) */
	sched_setaffinity(tid, sizeof(h->task), &h->task);
	sched_setaffinity(0, sizeof(h->self), &h->self);
}

static int sc_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	(void)p;
	if (t->ptrace_stop)
		return -EINVAL;
	struct hold h;
	hold_here(t->tid, &h);
	int fd = addfd(t, hostfd, cloexec, 0);
	release(t->tid, &h);
	return fd;
}

/* SECCOMP_ADDFD_FLAG_SEND (Linux 5.14): the task installs the fd and returns it from its call in
 * one wake-up, instead of waking for the fd and again for the answer. It is used when the task
 * cannot be held (above): held, the install and a synchronous answer are two local wake-ups,
 * and the task's mask is back before it runs. A failed ADDFD sends nothing, so the caller may
 * still answer otherwise. An older kernel refuses the flag (EINVAL): there the two steps are
 * made one after the other. */
static int sc_install_answer(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	static bool no_send;
	if (t->ptrace_stop)
		return -EINVAL;
	struct hold h;
	hold_here(t->tid, &h);
	if (!h.on && !no_send) {
		int fd = addfd(t, hostfd, cloexec, SECCOMP_ADDFD_FLAG_SEND);
		if (fd != -EINVAL)
			return fd;
		no_send = true;
	}
	int fd = addfd(t, hostfd, cloexec, 0);
	release(t->tid, &h);
	if (fd < 0)
		return fd;
	int r = sc_send(p, t, fd, 0);
	return r < 0 ? r : fd;
}

static bool sc_still_valid(struct cbox_platform *p, struct cbox_trap *t)
{
	(void)p;
	if (t->ptrace_stop)
		return true; /* a stopped tracee cannot go away without the tracer seeing it */
	uint64_t id = t->notif_id;
	return ioctl(t->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void sc_free(struct cbox_platform *p)
{
	for (size_t i = 0; i < p->nlisteners; i++)
		close(p->listeners[i]);
	p->nlisteners = 0;
}

const struct cbox_platform_ops cbox_platform_seccomp = {
    .name = "seccomp",
    .trap_action = SECCOMP_RET_USER_NOTIF,
    .needs_install_fd = false,
    .runs_on_guest_cpu = true,
    .installs_o_path = false,
    .add_listener = sc_add_listener,
    .drop_listener = sc_drop_listener,
    .recv = sc_recv,
    .reply = sc_reply,
    .cont = sc_cont,
    .install_fd = sc_install,
    .install_fd_answer = sc_install_answer,
    .still_valid = sc_still_valid,
    .free = sc_free,
};
