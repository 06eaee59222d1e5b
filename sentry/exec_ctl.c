/*
 * `cbox exec` into a running sandbox: a new guest task, started the way the first one was.
 *
 * The monitor accepts each connection on <state>/exec.sock and hands it to the sentry over its
 * control socket. The sentry reads the request (cbox/exec_req.h) and asks the spawner for a
 * task. The spawner is a child the sentry forked before it locked itself down (no fork or setns
 * is left to the sentry afterwards): it sits in the guest's pid and mount namespaces, outside
 * the guest's reach (its own pid is in the sandbox's outer pid namespace, which the guest cannot
 * see), and runs no guest code. For each request it forks a task, which waits until the sentry
 * has seized it (PTRACE_SEIZE, as every guest task is traced), then drops every privilege,
 * installs the guest filter (a listener of its own on the seccomp platform) and execs the
 * program through the sentry like any guest exec. Its parent is the spawner, so inside the
 * sandbox its parent pid is 0 and the guest's init never waits for it, as with runc's exec.
 *
 *   runtime ──exec.sock──> monitor ──conn (SCM_RIGHTS)──> sentry ──request──> spawner ─fork─> task
 *
 * The connection stays with the sentry: STARTED (the task's host pid) or ERROR, then EXITED with
 * the task's wait status.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/exec_req.h"
#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "internal.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* A request and exactly three stdio fds: its length, 0 at EOF, < 0 otherwise (fds closed).
 * *quiesce (when asked for) tells whether the message was a quiesce request instead: exactly
 * its magic, no fds (see cbox_exec_ctl_quiet). */
static ssize_t recv_request(int sock, char *buf, size_t size, int fds[3], bool *quiesce)
{
	int got;
	ssize_t n = cbox_recv_fds(sock, buf, size, fds, 3, &got, MSG_DONTWAIT);
	if (quiesce) {
		uint32_t magic = 0;
		if (n == (ssize_t)sizeof(magic) && got == 0)
			memcpy(&magic, buf, sizeof(magic));
		*quiesce = magic == CBOX_QUIESCE_MAGIC;
	}
	if (n > 0 && got == 3)
		return n;
	for (int i = 0; i < got; i++)
		close(fds[i]);
	return n == 0 ? 0 : n < 0 ? n : -EBADMSG;
}

/* A reply on conn, with fd (>= 0) attached. */
static void reply_fd(int conn, uint32_t type, int32_t value, const char *msg, int fd)
{
	struct cbox_exec_reply r = {.type = type, .value = value};
	if (msg)
		snprintf(r.msg, sizeof(r.msg), "%s", msg);
	cbox_send_fds(conn, &r, sizeof(r), &fd, fd >= 0 ? 1 : 0);
}

static void reply(int conn, uint32_t type, int32_t value, const char *msg)
{
	reply_fd(conn, type, value, msg, -1);
}

/* ---- the spawner ------------------------------------------------------------------------- */

static CBOX_NORETURN void spawner_main(struct cbox_sentry *s, int sock, pid_t init)
{
	prctl(PR_SET_NAME, "cbox-spawner");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Its tasks' exits are the sentry's (their tracer) to report; the kernel reaps them. */
	signal(SIGCHLD, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Nothing of the sentry's but its socket. */
	int keep_sock = fcntl(sock, F_DUPFD_CLOEXEC, 1000);
	int null = s->dev_fds[0]; /* /dev/null, opened before the sentry left the host's tree */
	if (keep_sock < 0 || null < 0)
		_exit(125);
	for (int i = 0; i < 3; i++)
		dup2(null, i);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
	int pidns = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)init);
	int mntns = open(path, O_RDONLY | O_CLOEXEC);
	/* Children in the guest's pid namespace; itself in the guest's (empty) mount namespace. */
	if (pidns < 0 || mntns < 0 || setns(pidns, CLONE_NEWPID) < 0 ||
	    setns(mntns, CLONE_NEWNS) < 0)
		_exit(125);
	syscall(SYS_close_range, 3, 999, 0);
	syscall(SYS_close_range, 1002, ~0U, 0);
	/* Security: the spawner keeps the privileges the sentry gave up (it is root of the
	 * sandbox's user namespace, with its capabilities, to setns and fork into the guest's
	 * namespaces) and parses what the sentry sends it. From here on it runs under the refuse
	 * filter: every syscall the table refuses (mount, pivot_root, keyctl, io_uring, ...) gets
	 * the sentry's errno from the kernel, so a spawner taken over through a request could not
	 * use its capabilities on them. The filter is inherited by each task it starts, under
	 * that task's own guest filter: those calls would have been refused with the same errno
	 * by the sentry anyway (they are now no longer logged as refused for exec tasks). */
	struct sock_filter *prog;
	unsigned short plen;
	if (cbox_platform_build_refuse_filter(&prog, &plen) < 0)
		_exit(125);
	struct sock_fprog fp = {.len = plen, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
		_exit(125);
	free(prog);
	static char buf[CBOX_EXEC_REQ_MAX];
	for (;;) {
		int stdio[3];
		ssize_t n;
		struct pollfd pf = {.fd = keep_sock, .events = POLLIN};
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			_exit(125);
		n = recv_request(keep_sock, buf, sizeof(buf), stdio, NULL);
		if (n == 0)
			_exit(0); /* the sentry is gone */
		if (n < 0)
			continue;
		struct cbox_exec_req req;
		int sync[2] = {-1, -1};
		/* The ptrace platform's install channel of the new task, its own (see
		 * cbox_ptrace_new_channel): inst[0] goes to the sentry. */
		int inst[2] = {-1, -1};
		bool ptrace_platform = s->cfg->platform->needs_install_fd;
		pid_t pid = -1;
		if (cbox_exec_req_decode(buf, (size_t)n, &req) == 0) {
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) == 0 &&
			    (!ptrace_platform ||
			     socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, inst) == 0))
				pid = fork();
			if (pid == 0) {
				close(sync[1]);
				close(keep_sock);
				if (inst[0] >= 0)
					close(inst[0]);
				cbox_guest_exec_task(s, &req, stdio, inst[1], sync[0]);
			}
			cbox_exec_req_release(&req);
		}
		int32_t answer = pid > 0 ? (int32_t)pid : -EAGAIN;
		int give[2] = {sync[1], inst[0]};
		cbox_send_fds(keep_sock, &answer, sizeof(answer), pid > 0 ? give : NULL,
		              pid > 0 ? (ptrace_platform ? 2 : 1) : 0);
		for (int i = 0; i < 3; i++)
			close(stdio[i]);
		for (int i = 0; i < 2; i++) {
			if (sync[i] >= 0)
				close(sync[i]);
			if (inst[i] >= 0)
				close(inst[i]);
		}
	}
}

int cbox_exec_ctl_init(struct cbox_sentry *s)
{
	s->exec_ctl = -1;
	s->spawner_sock = -1;
	s->quiet_conn = -1;
	if (!s->cfg->exec_service)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		spawner_main(s, sv[1], s->init_tid);
	}
	close(sv[1]);
	s->spawner_sock = sv[0];
	s->exec_ctl = s->cfg->exec_ctl;
	return 0;
}

/* ---- the sentry's side ------------------------------------------------------------------- */

/* The credentials of the process a request starts: its user, else root (uid 0, gid 0), as
 * the sandbox's first process would get them. NULL after replying why. */
static struct cbox_cred *request_cred(struct cbox_sentry *s, int conn,
                                      const struct cbox_exec_req *req)
{
	const struct cbox_sentry_config *cfg = s->cfg;
	uint32_t uid = req->has_user ? req->uid : 0, gid = req->has_user ? req->gid : 0;
	size_t n = req->has_user ? req->ngroups : 0;
	/* With one host id, every guest id stands for it but CBOX_UNMAPPED_ID (cbox/cred.h). */
	bool ok = cfg->all_ids || (uid != CBOX_UNMAPPED_ID && gid != CBOX_UNMAPPED_ID);
	for (size_t i = 0; ok && !cfg->all_ids && i < n; i++)
		ok = req->groups[i] != CBOX_UNMAPPED_ID;
	if (!ok) {
		reply(conn, CBOX_EXEC_ERROR, EINVAL,
		      "id 4294967294 stands for the host's other users in this sandbox");
		return NULL;
	}
	struct cbox_cred *cr = cbox_cred_new(uid, gid, req->groups, n, cfg->cap_bset, cfg->all_ids);
	if (!cr)
		reply(conn, CBOX_EXEC_ERROR, ENOMEM, "out of memory");
	return cr;
}

/* Start the task for one request read from conn; answers on conn. Returns whether conn is
 * kept (the task started: its exit is reported there). */
static bool start_task(struct cbox_sentry *s, int conn, const char *buf, size_t len,
                       const int stdio[3])
{
	struct cbox_exec_req req;
	int r = cbox_exec_req_decode(buf, len, &req);
	if (r < 0) {
		reply(conn, CBOX_EXEC_ERROR, -r, "malformed exec request");
		return false;
	}
	char cwd[4096];
	snprintf(cwd, sizeof(cwd), "%s", req.cwd);
	bool nnp = (req.flags & CBOX_EXEC_NO_NEW_PRIVS) != 0;
	struct cbox_cred *cred = request_cred(s, conn, &req);
	cbox_exec_req_release(&req);
	if (!cred)
		return false;
	if (s->nexec == CBOX_EXEC_MAX_SESSIONS) {
		cbox_cred_put(cred);
		reply(conn, CBOX_EXEC_ERROR, EAGAIN, "too many exec sessions in this sandbox");
		return false;
	}
	/* The spawner answers at once (a fork); the sentry waits for it. */
	r = cbox_send_fds(s->spawner_sock, buf, len, stdio, 3);
	int32_t pid = -EIO;
	/* sync[0]: the task's sync socket; sync[1]: its install channel (ptrace platform) */
	int sync[3] = {-1, -1, -1};
	int want = s->platform->ops->needs_install_fd ? 2 : 1;
	if (r == 0) {
		struct pollfd pf = {.fd = s->spawner_sock, .events = POLLIN};
		char ans[sizeof(int32_t)];
		int got = 0;
		ssize_t n = poll(&pf, 1, 5000) == 1
		                ? cbox_recv_fds(s->spawner_sock, ans, sizeof(ans), sync, want, &got,
		                                MSG_DONTWAIT)
		                : -ETIMEDOUT;
		if (n == (ssize_t)sizeof(pid))
			memcpy(&pid, ans, sizeof(pid));
		if (pid > 0 && got != want)
			pid = -EIO;
	}
	if (pid <= 0) {
		reply(conn, CBOX_EXEC_ERROR, pid < 0 ? -pid : EIO,
		      "the sandbox could not start it");
		for (int i = 0; i < 2; i++)
			if (sync[i] >= 0)
				close(sync[i]);
		cbox_cred_put(cred);
		return false;
	}
	/* Traced before it runs anything of the request, as every guest task; it says when it
	 * made itself dumpable (the sentry's copies are not, and cannot be seized before). */
	struct pollfd ps = {.fd = sync[0], .events = POLLIN};
	char ready = 0;
	if (poll(&ps, 1, 5000) != 1 || read(sync[0], &ready, 1) != 1 || ready != 'r' ||
	    ptrace(PTRACE_SEIZE, pid, 0, CBOX_PTRACE_OPTIONS) < 0) {
		int e = ready == 'r' ? errno : EIO;
		kill(pid, SIGKILL);
		close(sync[0]);
		if (sync[1] >= 0)
			close(sync[1]);
		char why[96];
		snprintf(why, sizeof(why), "tracing the new task: %s", strerror(e));
		reply(conn, CBOX_EXEC_ERROR, e, why);
		cbox_cred_put(cred);
		return false;
	}
	/* (the process's own noNewPrivileges: runc's, the container's unless --process or
	 * --no-new-privs says otherwise) */
	r = cbox_sentry_task_start(s, pid, cwd, cred, nnp, sync[1]);
	char go = 'g';
	if (r < 0 || write(sync[0], &go, 1) != 1) {
		kill(pid, SIGKILL);
		close(sync[0]);
		reply(conn, CBOX_EXEC_ERROR, r < 0 ? -r : EIO, "setting up the new task");
		return false;
	}
	close(sync[0]);
	s->exec[s->nexec++] = (struct cbox_exec_session){.tgid = pid, .conn = conn};
	/* The runtime signals the task through a pidfd: the pid here is the sandbox's, which
	 * names another process (or none) on the host. */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	reply_fd(conn, CBOX_EXEC_STARTED, pid, NULL, pidfd);
	if (pidfd >= 0)
		close(pidfd);
	return true;
}

/*
 * Pause. The cgroup freezer stops a task only where it can take a signal; a guest task whose
 * trapped call the sentry has received waits for the answer killably (the filter's
 * WAIT_KILLABLE_RECV, which keeps a signal from repeating a call the sentry already carried
 * out), so if the freezer stopped the sentry between receiving and answering, that task could
 * never freeze and the pause would fail. While quiet, the sentry receives nothing new from its
 * listeners (the loop between two traps has none half answered); a task that traps meanwhile
 * waits interruptibly, is frozen there, and traps again after the thaw. Ptrace stops need no
 * care: a task stopped for its tracer counts as frozen.
 *
 * The sentry is quiet for as long as the pause's connection is open: the runtime closes it once
 * the cgroup is frozen, so the sentry sees the end only after the thaw, and a runtime that
 * dies half way cannot leave the guest stalled.
 */
bool cbox_exec_ctl_quiet(const struct cbox_sentry *s)
{
	return s->quiet_conn >= 0;
}

static void quiet_end(struct cbox_sentry *s)
{
	close(s->quiet_conn);
	s->quiet_conn = -1;
}

size_t cbox_exec_ctl_pollfds(struct cbox_sentry *s, struct pollfd *pf, size_t n)
{
	if (s->exec_ctl < 0 || n == 0)
		return 0;
	size_t k = 0;
	pf[k++] = (struct pollfd){.fd = s->exec_ctl, .events = POLLIN};
	if (s->quiet_conn >= 0 && k < n)
		pf[k++] = (struct pollfd){.fd = s->quiet_conn, .events = POLLIN};
	for (size_t i = 0; i < s->npending && k < n; i++)
		pf[k++] = (struct pollfd){.fd = s->pending[i], .events = POLLIN};
	return k;
}

static void pending_remove(struct cbox_sentry *s, int conn)
{
	for (size_t i = 0; i < s->npending; i++)
		if (s->pending[i] == conn) {
			s->pending[i] = s->pending[--s->npending];
			return;
		}
}

void cbox_exec_ctl_run(struct cbox_sentry *s, const struct pollfd *pf, size_t n)
{
	static char buf[CBOX_EXEC_REQ_MAX];
	for (size_t i = 1; i < n; i++) {
		if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		int conn = pf[i].fd;
		if (conn == s->quiet_conn) {
			/* Anything on it, or its end: the pause is over. */
			quiet_end(s);
			continue;
		}
		pending_remove(s, conn);
		int stdio[3];
		bool quiesce;
		ssize_t len = recv_request(conn, buf, sizeof(buf), stdio, &quiesce);
		bool kept = false;
		if (quiesce) {
			if (s->quiet_conn >= 0) {
				reply(conn, CBOX_EXEC_ERROR, EBUSY, "a pause is already under way");
			} else {
				s->quiet_conn = conn;
				reply(conn, CBOX_EXEC_QUIET, 0, NULL);
				kept = true;
			}
		} else if (len > 0) {
			kept = start_task(s, conn, buf, (size_t)len, stdio);
			for (int k = 0; k < 3; k++)
				close(stdio[k]);
		} else if (len < 0) {
			reply(conn, CBOX_EXEC_ERROR, (int32_t)-len, "malformed exec request");
		}
		if (!kept)
			close(conn);
	}
	if (n == 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	char c;
	int conn[1], got = 0;
	ssize_t r = cbox_recv_fds(s->exec_ctl, &c, 1, conn, 1, &got, MSG_DONTWAIT);
	if (r <= 0 && r != -EAGAIN) {
		/* The monitor is gone: no more exec into this sandbox. */
		close(s->exec_ctl);
		s->exec_ctl = -1;
		return;
	}
	if (got == 1 && s->npending < CBOX_EXEC_MAX_SESSIONS)
		s->pending[s->npending++] = conn[0];
	else if (got == 1)
		close(conn[0]);
}

void cbox_exec_ctl_task_exit(struct cbox_sentry *s, pid_t tid, int status)
{
	for (size_t i = 0; i < s->nexec; i++)
		if (s->exec[i].tgid == tid) {
			reply(s->exec[i].conn, CBOX_EXEC_EXITED, status, NULL);
			close(s->exec[i].conn);
			s->exec[i] = s->exec[--s->nexec];
			return;
		}
}
