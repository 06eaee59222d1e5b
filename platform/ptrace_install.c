/*
 * The ptrace platform's install channel: how the fds the sentry opens reach a task. Each fd
 * table has its own datagram socket at CBOX_PTRACE_INSTALL_FD in the guest (the sentry holds the
 * other end); an install sends the fd on it and injects a recvmsg in the task at its trapped
 * call (ptrace.c does the injecting). Channels are made inside the task they serve: a fork's
 * child before it first runs, a task whose table stopped being shared at its next trapped call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

/* Scratch memory of a channel's making, below the task's stack pointer. */
struct channel_scratch {
	int sv[2];
	struct rlimit old, raised;
};

/*
 * How the calls of a channel's making run in the task: from a stop outside any call (a new
 * task's first: run_in_user, the registers put back by the caller), or from a trapped call's
 * seccomp stop (inject, after which the call is answered at its exit stop).
 */
struct runner {
	pid_t tid;
	pid_t tgid;                          /* its process (pidfd_open names a process) */
	const struct user_regs_struct *regs; /* run_in_user */
	int *pending;
	struct cbox_trap *trap; /* inject */
	bool *at_exit;
};

static int64_t run_call(struct runner *rn, long nr, const uint64_t a[6])
{
	if (rn->trap)
		return cbox_ptrace_inject(rn->trap, rn->at_exit, nr, a);
	return cbox_ptrace_run_in_user(rn->tid, rn->regs, nr, a, rn->pending);
}

/*
 * dup3(fd, CBOX_PTRACE_INSTALL_FD) in the task, whose soft RLIMIT_NOFILE may be at or below
 * 1022, where dup3 refuses the target (EBADF): it is then raised for the call and put back, as
 * the first task's start does (guest_init.c reserve_install_fd). -EMFILE: the hard limit is
 * there too (the guest lowered it), so the fd cannot be placed.
 */
static int64_t dup_to_reserved(struct runner *rn, int fd, uint64_t at)
{
	uint64_t d[6] = {(uint64_t)fd, CBOX_PTRACE_INSTALL_FD, 0, 0, 0, 0};
	int64_t r = run_call(rn, SYS_dup3, d);
	if (r != -EBADF)
		return r;
	struct channel_scratch sc;
	uint64_t old_at = at + offsetof(struct channel_scratch, old);
	uint64_t raised_at = at + offsetof(struct channel_scratch, raised);
	uint64_t get[6] = {0, RLIMIT_NOFILE, 0, old_at, 0, 0};
	r = run_call(rn, SYS_prlimit64, get);
	if (r < 0 || cbox_mem_read(rn->tid, at, &sc, sizeof(sc)) < 0)
		return r < 0 ? r : -EFAULT;
	if (sc.old.rlim_cur > CBOX_PTRACE_INSTALL_FD)
		return -EBADF; /* not the limit */
	if (sc.old.rlim_max <= CBOX_PTRACE_INSTALL_FD)
		return -EMFILE;
	sc.raised =
	    (struct rlimit){.rlim_cur = CBOX_PTRACE_INSTALL_FD + 1, .rlim_max = sc.old.rlim_max};
	if (cbox_mem_write(rn->tid, raised_at, &sc.raised, sizeof(sc.raised)) < 0)
		return -EFAULT;
	uint64_t raise[6] = {0, RLIMIT_NOFILE, raised_at, 0, 0, 0};
	r = run_call(rn, SYS_prlimit64, raise);
	if (r == 0)
		r = run_call(rn, SYS_dup3, d);
	uint64_t back[6] = {0, RLIMIT_NOFILE, old_at, 0, 0, 0};
	int64_t b = run_call(rn, SYS_prlimit64, back);
	return r < 0 ? r : b < 0 ? b : r;
}

/*
 * Security: the two fd numbers came back through guest memory, which another thread sharing it
 * (a vfork child's parent's, say) may have changed meanwhile, to name some other socket of the
 * task (one connected to a process of its choice, which would then receive the fds the sentry
 * opens for this one). The sentry's end must be a datagram socket made by socketpair in this
 * process (SO_PEERCRED's pid, the creator's): a new process has run nothing else since it
 * stopped, and one the sentry installs into through a private pair can only swap in a pair of
 * its own (to receive its own fd).
 */
static bool own_pair(int sock, pid_t tgid)
{
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	int type = 0;
	socklen_t tl = sizeof(type);
	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == 0 && uc.pid == tgid &&
	       getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM;
}

/*
 * A socketpair made inside the task, the fds written at at: *sv the task's two fds, *mine the
 * sentry's copy of sv[1] (pidfd_getfd), or -errno (*mine -1; sv as far as they were made).
 */
static int make_pair(struct runner *rn, uint64_t at, int sv[2], int *mine)
{
	*mine = -1;
	uint64_t a[6] = {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, at, 0, 0};
	int64_t r = run_call(rn, SYS_socketpair, a);
	if (r < 0)
		return (int)r;
	if (cbox_mem_read(rn->tid, at, sv, 2 * sizeof(int)) < 0) {
		sv[0] = sv[1] = -1;
		return -EFAULT;
	}
	/* pidfd_getfd reads the fd table of the pidfd's task: a thread that unshared its table
	 * needs a pidfd of its own (PIDFD_THREAD, Linux 6.9), not its process's. */
	int pidfd = rn->tgid <= 0         ? -1
	            : rn->tid == rn->tgid ? (int)syscall(SYS_pidfd_open, rn->tgid, 0)
	                                  : (int)syscall(SYS_pidfd_open, rn->tid, PIDFD_THREAD);
	*mine = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, sv[1], 0);
	int err = *mine < 0 ? (rn->tgid > 0 ? -errno : -ESRCH) : 0;
	if (pidfd >= 0)
		close(pidfd);
	if (err == 0 && !own_pair(*mine, rn->tgid)) {
		close(*mine);
		*mine = -1;
		err = -EIO;
	}
	return err;
}

/*
 * Security: the install channel is per fd table. A recvmsg on the channel takes whatever fd
 * is queued there, so a channel that two processes hold lets either take the fds the sentry
 * opens for the other, with the other's rights (a guest user reading a file only root may
 * read, a root process's fds taken by nobody), and leaves the victim's own recvmsg without
 * its message. A fork's child would hold its parent's channel: before the child first runs,
 * the sentry makes it a channel nobody else holds. The pair is made inside the child (the
 * sentry takes its end with pidfd_getfd), so it never travels through a channel another
 * process could read. Threads and CLONE_FILES children share the table, and with it every fd,
 * so they share its channel as well, until an exec or unshare(CLONE_FILES) unshares the table:
 * the task then gets a channel of its own at its next trapped call (cbox_ptrace_renew_channel).
 *
 * make_channel makes the task's channel, with its scratch at at: 0 and *mine the sentry's end
 * (-1: no fd can be placed at the reserved one, and the task now holds none), or -errno.
 */
static int make_channel(struct runner *rn, uint64_t at, int *mine)
{
	int sv[2] = {-1, -1};
	int64_t r = make_pair(rn, at, sv, mine);
	if (r == 0) {
		/* The guest's end onto the reserved fd, over the inherited channel, open across
		 * exec as the first task's is (guest_init.c). */
		r = dup_to_reserved(rn, sv[0], at);
		r = r == CBOX_PTRACE_INSTALL_FD ? 0 : r < 0 ? r : -EIO;
	}
	/* (closed on failure too) */
	for (int i = 0; i < 2; i++) {
		if (sv[i] < 0)
			continue;
		uint64_t c[6] = {(uint64_t)sv[i], 0, 0, 0, 0, 0};
		int64_t cr = run_call(rn, SYS_close, c);
		if (cr < 0 && r >= 0)
			r = cr;
	}
	/* No fd can be placed at the reserved one: the task drops the channel it held and
	 * gets a pair of its own for each install (cbox_ptrace_install). */
	if (r == -EMFILE) {
		uint64_t c[6] = {CBOX_PTRACE_INSTALL_FD, 0, 0, 0, 0, 0};
		int64_t cr = run_call(rn, SYS_close, c);
		r = cr < 0 && cr != -EBADF ? cr : 0;
		if (*mine >= 0)
			close(*mine);
		*mine = -1;
	}
	if (r < 0 && *mine >= 0) {
		close(*mine);
		*mine = -1;
	}
	return (int)r;
}

int cbox_ptrace_new_channel(pid_t tid, int *sentry_end)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return -errno;
	/* The scratch lies below the stack pointer, past the red zone; its bytes are put back
	 * (a vfork child's parent, on the same stack, waits until the child execs or exits). */
	struct channel_scratch saved;
	uint64_t at = (regs.rsp - 128 - sizeof(saved)) & ~15ULL;
	if (cbox_mem_read(tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	int pending = 0;
	/* (a fork's child is its process's leader) */
	struct runner rn = {.tid = tid, .tgid = tid, .regs = &regs, .pending = &pending};
	uint64_t mask;
	bool held = cbox_ptrace_hold_signals(tid, &mask);
	int r = make_channel(&rn, at, sentry_end);
	cbox_mem_write(tid, at, &saved, sizeof(saved));
	if (held)
		cbox_ptrace_release_signals(tid, mask);
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0 && r >= 0) {
		r = -errno;
		if (*sentry_end >= 0)
			close(*sentry_end);
		*sentry_end = -1;
	}
	return r < 0 ? r : pending;
}

int cbox_ptrace_renew_channel(struct cbox_trap *t, int *sentry_end)
{
	*sentry_end = -1;
	if (!t->ptrace_stop)
		return -EINVAL;
	struct channel_scratch saved;
	uint64_t at = (t->regs.rsp - 128 - sizeof(saved)) & ~15ULL;
	if (cbox_mem_read(t->tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	bool at_exit = t->at_exit;
	/* (not always its process's leader: a thread may unshare its table) */
	struct runner rn = {
	    .tid = t->tid, .tgid = cbox_ptrace_tgid_of(t->tid), .trap = t, .at_exit = &at_exit};
	int r = make_channel(&rn, at, sentry_end);
	cbox_mem_write(t->tid, at, &saved, sizeof(saved));
	/* (the task sits at an exit stop once anything ran: answered there, finish_exit) */
	t->at_exit = at_exit;
	return r;
}

struct install_scratch {
	struct msghdr msg;
	struct iovec iov;
	uint64_t tag;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} cmsg;
};

/* Send hostfd over the task's install channel, with tag as the message. Never waits: the
 * guest's end holds nothing the sentry did not send (a full queue is a failure). */
static int send_fd(int sock, int hostfd, uint64_t tag)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} out;
	memset(&out, 0, sizeof(out));
	struct iovec iov = {.iov_base = &tag, .iov_len = sizeof(tag)};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = out.buf,
	                   .msg_controllen = sizeof(out.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &hostfd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}

/*
 * Receive, by an injected recvmsg on the task's fd chan, the message tagged tag: the fd it
 * carries, now the task's, or -errno. The recvmsg never waits (MSG_DONTWAIT): a guest thread
 * that read the channel itself took the message (its own process's fd, no one else's: the
 * channel is the table's, see cbox_ptrace_new_channel), and waiting for a message that will
 * not come would stop the sentry. A message with another tag is a leftover of an install that
 * did not finish (its task killed between the send and the recvmsg): closed in the task and
 * skipped, never given as the answer to another call.
 */
static int receive_fd(struct cbox_trap *t, bool *at_exit, uint64_t at, int chan, uint64_t tag,
                      bool cloexec)
{
	struct install_scratch s;
	for (int tries = 0; tries < 4; tries++) {
		memset(&s, 0, sizeof(s));
		s.iov.iov_base = (void *)(uintptr_t)(at + offsetof(struct install_scratch, tag));
		s.iov.iov_len = sizeof(s.tag);
		s.msg.msg_iov = (void *)(uintptr_t)(at + offsetof(struct install_scratch, iov));
		s.msg.msg_iovlen = 1;
		s.msg.msg_control =
		    (void *)(uintptr_t)(at + offsetof(struct install_scratch, cmsg));
		s.msg.msg_controllen = sizeof(s.cmsg.buf);
		if (cbox_mem_write(t->tid, at, &s, sizeof(s)) < 0)
			return -EFAULT;
		uint64_t flags = MSG_DONTWAIT | (cloexec ? MSG_CMSG_CLOEXEC : 0);
		uint64_t a[6] = {(uint64_t)chan, at, flags, 0, 0, 0};
		int64_t n = cbox_ptrace_inject(t, at_exit, SYS_recvmsg, a);
		int got = n >= 0 ? cbox_mem_read(t->tid, at, &s, sizeof(s)) : 0;
		int recvd = -1;
		if (n == (int64_t)sizeof(tag) && got == 0 &&
		    s.msg.msg_controllen >= CMSG_LEN(sizeof(int)) &&
		    s.cmsg.hdr.cmsg_type == SCM_RIGHTS)
			memcpy(&recvd, CMSG_DATA(&s.cmsg.hdr), sizeof(int));
		/* (EAGAIN: taken by the task itself) */
		if (n < 0)
			return n == -EAGAIN ? -EIO : (int)n;
		/* (killed after its recvmsg: a background job as the sandbox ends) */
		if (got == -ESRCH)
			return -ESRCH;
		/* (the kernel dropped the fd: the task is at its RLIMIT_NOFILE) */
		if (recvd < 0)
			return (s.msg.msg_flags & MSG_CTRUNC) ? -EMFILE : -EIO;
		if (s.tag == tag)
			return recvd;
		uint64_t c[6] = {(uint64_t)recvd, 0, 0, 0, 0, 0};
		int64_t cr = cbox_ptrace_inject(t, at_exit, SYS_close, c);
		if (cr != 0)
			return cr == -ESRCH ? -ESRCH : -EIO;
	}
	return -EIO;
}

/*
 * A socketpair for one install, made inside a task whose fd table has no channel (its hard fd
 * limit is below the reserved fd: cbox_ptrace_new_channel): *sv the task's fds, *mine the
 * sentry's copy of sv[1] (make_pair). Both of the task's ends are closed after the install.
 */
static int private_pair(struct cbox_trap *t, bool *at_exit, uint64_t at, int sv[2], int *mine)
{
	struct runner rn = {
	    .tid = t->tid, .tgid = cbox_ptrace_tgid_of(t->tid), .trap = t, .at_exit = at_exit};
	return make_pair(&rn, at, sv, mine);
}

/* Whether task tid is no longer in a ptrace stop (a SIGKILL wakes a task from one). */
static bool left_stop(pid_t tid)
{
	errno = 0;
	ptrace(PTRACE_PEEKUSER, tid, 0, 0);
	return errno == ESRCH;
}

/*
 * Install hostfd in the task: send it over the install channel of the task's fd table
 * (t->install_sock; a pair made for this install when it has none), then inject a recvmsg on
 * the task's end (CBOX_PTRACE_INSTALL_FD). The message buffers live below the guest's stack
 * pointer, past the 128-byte red zone, and the bytes there are restored afterwards. The task is
 * left at the recvmsg's exit stop; the caller answers with ptrace_finish.
 */
int cbox_ptrace_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	(void)p;
	static uint64_t next_tag;
	if (!t->ptrace_stop)
		return -EINVAL;
	uint64_t at = (t->regs.rsp - 128 - sizeof(struct install_scratch)) & ~15ULL;
	struct install_scratch saved;
	if (cbox_mem_read(t->tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	bool at_exit = t->at_exit;
	int sock = t->install_sock, chan = CBOX_PTRACE_INSTALL_FD, sv[2] = {-1, -1}, mine = -1;
	int fd = 0;
	if (sock < 0) {
		fd = private_pair(t, &at_exit, at, sv, &mine);
		sock = mine;
		chan = sv[0];
	}
	uint64_t tag = ++next_tag;
	if (fd == 0)
		fd = send_fd(sock, hostfd, tag);
	if (fd == 0)
		fd = receive_fd(t, &at_exit, at, chan, tag, cloexec);
	for (int i = 0; i < 2; i++) {
		uint64_t c[6] = {(uint64_t)sv[i], 0, 0, 0, 0, 0};
		int64_t cr = sv[i] >= 0 ? cbox_ptrace_inject(t, &at_exit, SYS_close, c) : 0;
		/* (-ESRCH: killed meanwhile, as by its process's exit_group: nothing to report) */
		if (cr != 0 && fd >= 0)
			fd = cr == -ESRCH ? -ESRCH : -EIO;
	}
	/* The pair took the lowest fds while the message came: the fd moves down to the lowest
	 * free one, where Linux's open would have put it. */
	if (mine >= 0 && fd >= 0) {
		uint64_t d[6] = {(uint64_t)fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0, 0, 0, 0};
		int64_t low = cbox_ptrace_inject(t, &at_exit, SYS_fcntl, d);
		uint64_t c[6] = {(uint64_t)fd, 0, 0, 0, 0, 0};
		if (low >= 0 && low < fd && cbox_ptrace_inject(t, &at_exit, SYS_close, c) == 0)
			fd = (int)low;
	}
	if (mine >= 0)
		close(mine);
	cbox_mem_write(t->tid, at, &saved, sizeof(saved));
	if (!at_exit)
		return fd < 0 ? fd : -EIO;
	/* The task now sits at an exit stop: the answer must be given there (finish_exit). */
	t->at_exit = true;
	/* A task killed meanwhile is no failure to report: it never sees the answer. Killed in the
	 * middle, it may also have failed otherwise (its memory going as it exits: EFAULT, seen
	 * when another thread's execve killed it), and it has then left its ptrace stop. */
	if (fd < 0 && fd != -EMFILE && fd != -ESRCH && left_stop(t->tid))
		fd = -ESRCH;
	if (fd < 0 && fd != -EMFILE && fd != -ESRCH)
		cbox_warn("installing an fd in task %d failed: %s", t->tid, strerror(-fd));
	return fd;
}
