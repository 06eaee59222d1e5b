/* The seccomp platform: SECCOMP_RET_USER_NOTIF for trapped calls. */
#include <errno.h>
#include <fcntl.h>
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

static int sc_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	(void)p;
	return addfd(t, hostfd, cloexec, 0);
}

/* SECCOMP_ADDFD_FLAG_SEND (Linux 5.14): the task installs the fd and returns it from its call in
 * one wake-up, instead of waking for the fd and again for the answer. A failed ADDFD sends
 * nothing, so the caller may still answer otherwise. An older kernel refuses the flag (EINVAL):
 * there the two steps are made one after the other. */
static int sc_install_answer(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	static bool no_send;
	if (!no_send) {
		int fd = addfd(t, hostfd, cloexec, SECCOMP_ADDFD_FLAG_SEND);
		if (fd != -EINVAL || t->ptrace_stop)
			return fd;
		no_send = true;
	}
	int fd = addfd(t, hostfd, cloexec, 0);
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
