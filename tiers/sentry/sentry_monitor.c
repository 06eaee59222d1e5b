/*
 * The sandbox monitor: the container's pid as the OCI state reports it. It exists because the
 * gofer dies with its parent (PR_SET_PDEATHSIG) and the sentry must be pid 1 of a pid namespace
 * its own user namespace owns: neither can be the process that outlives `cbox create`, so the
 * monitor is the parent of both, holds the container's network namespace (so that a prestart
 * hook such as Docker's libnetwork-setkey finds it at /proc/PID/ns/net), waits on exec.fifo for
 * `cbox start`, forwards the signals it gets to the guest's init, and exits with the guest's
 * status. It holds no guest fd and never runs guest code.
 *
 *   cbox create ─fork─> monitor (root, host user ns)
 *                         ├─ sentry (new user/mount/pid/ipc/uts ns; net: new, or the config's)
 *                         │   └─ guest tasks
 *                         └─ gofer (spawned after the hooks, which may mount into the rootfs)
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "internal.h"

struct monitor {
	struct sentry_plan *p;
	const char *state_dir;
	int sock;        /* to the runtime's create */
	int sentry_sock; /* to the sentry, until it has the gofer's socket */
	pid_t sentry, gofer;
	int gofer_sock;
};

static CBOX_NORETURN void fail(struct monitor *m, struct cbox_err **err)
{
	cbox_tier_msg_send(m->sock, SENTRY_MSG_ERROR, 0,
	                   *err && (*err)->msg ? (*err)->msg : "failed");
	if (m->sentry > 0)
		kill(m->sentry, SIGKILL);
	if (m->gofer > 0)
		kill(m->gofer, SIGKILL);
	_exit(1);
}

static int write_str(const char *path, const char *s)
{
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -errno;
}

/*
 * As cbox-run: the sandbox's uid 0 is an unprivileged host uid (nobody when cbox runs as root,
 * else the caller's), so whatever the sentry or a guest holds, the host sees as that uid.
 */
static int map_ids(pid_t pid, struct cbox_err **err)
{
	char path[64], map[64];
	uid_t uid = geteuid() == 0 ? SENTRY_SANDBOX_UID : geteuid();
	gid_t gid = geteuid() == 0 ? SENTRY_SANDBOX_UID : getegid();
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	int r = write_str(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "0 %u 1\n", gid);
	if (r >= 0 || r == -ENOENT)
		r = write_str(path, map);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	if (r >= 0)
		r = write_str(path, map);
	return r < 0 ? cbox_err_set(err, -r, "write the sandbox's id maps (%s)", path) : 0;
}

/* The gofer's socket, sent by the monitor once `cbox start` came; -1 when it gave up. */
static int recv_fd(int sock)
{
	char c;
	int fd = -1, got = 0;
	ssize_t n = cbox_recv_fds(sock, &c, 1, &fd, 1, &got, 0);
	return n == 1 && got == 1 ? fd : -1;
}

static int send_fd(int sock, int fd)
{
	char c = 'g';
	int r = cbox_send_fds(sock, &c, 1, &fd, 1);
	if (r < 0)
		errno = -r;
	return r;
}

/* The sentry process: waits for its id maps, becomes root of its user namespace, waits for the
 * gofer's socket (sent after `cbox start`), then is the sentry until the guest's init exits. */
static CBOX_NORETURN void sentry_child(struct monitor *m)
{
	char c;
	cbox_log_set_who("sentry");
	close(m->sock);
	if (read(m->sentry_sock, &c, 1) != 1)
		_exit(125);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		cbox_die(125, "become root in the sandbox's user namespace: %s", strerror(errno));
	int gofer = recv_fd(m->sentry_sock);
	if (gofer < 0)
		_exit(125); /* the monitor gave up (a failed create, or a kill before start) */
	m->p->sentry.gofer_sock = gofer;
	/* The same socket then brings the connections of `cbox exec` (see supervise). */
	m->p->sentry.exec_service = true;
	m->p->sentry.exec_ctl = m->sentry_sock;
	_exit(cbox_sentry_main(&m->p->sentry));
}

/* Join the network namespace the config names (Docker's). The monitor is root in the host's
 * user namespace, which owns that namespace: the sentry, once in its own user namespace, could
 * not setns into it, so it inherits it instead. */
static int join_netns(const char *path, struct cbox_err **err)
{
	if (!path)
		return 0;
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open the network namespace %s", path);
	if (setns(fd, CLONE_NEWNET) < 0)
		return cbox_err_set(err, errno, "join the network namespace %s", path);
	return 0;
}

static int clone_sentry(struct monitor *m, struct cbox_err **err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cbox_err_set(err, errno, "socketpair");
	/* Without a namespace to join the sandbox gets a new one that its own user namespace
	 * owns, holding only loopback (which the sentry brings up). */
	long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
	if (!m->p->netns_path)
		flags |= CLONE_NEWNET;
	fflush(NULL);
	pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return cbox_err_set(err, errno, "create the sandbox's namespaces");
	}
	if (pid == 0) {
		close(sv[0]);
		m->sentry_sock = sv[1];
		sentry_child(m);
	}
	close(sv[1]);
	m->sentry = pid;
	m->sentry_sock = sv[0];
	if (map_ids(pid, err) < 0)
		return -1;
	if (write(m->sentry_sock, "m", 1) != 1)
		return cbox_err_set(err, errno, "the sentry exited during set-up");
	return 0;
}

/* Enter the sandbox's new network namespace too, so that /proc/<container pid>/ns/net names
 * it for the hooks (Docker's libnetwork-setkey configures the container's network there).
 * Only as root: setns needs CAP_SYS_ADMIN in the joiner's own user namespace as well, which a
 * rootless runtime (a user's `cbox run`) lacks in the host's, and `cbox run` failed there
 * with EPERM. Such a monitor stays in the host's network namespace; its net.* sysctls are
 * written from inside (apply_sysctls), and a hook that opens /proc/<pid>/ns/net sees the
 * host's. */
static bool follows_netns(const struct monitor *m)
{
	return !m->p->netns_path && geteuid() == 0;
}

static int follow_netns(struct monitor *m, struct cbox_err **err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)m->sentry);
	return follows_netns(m) ? join_netns(path, err) : 0;
}

/* process.rlimits on the sentry (the guest inherits them). Set from here, as host root: inside
 * its user namespace the sentry could not raise a hard limit. */
static int set_rlimits(struct monitor *m, struct cbox_err **err)
{
	for (size_t i = 0; i < m->p->n_rlimits; i++) {
		const struct cbox_oci_rlimit *r = &m->p->rlimits[i];
		struct rlimit rl = {.rlim_cur = r->soft, .rlim_max = r->hard};
		if (prlimit(m->sentry, r->resource, &rl, NULL) < 0)
			return cbox_err_set(err, errno, "process.rlimits[%zu]: set resource %d", i,
			                    r->resource);
	}
	return 0;
}

/* Write "/proc/sys/" + key (dots as slashes) = value, for the namespaces the writer is in. */
static int write_sysctl(const char *key, const char *value)
{
	char path[512];
	int n = snprintf(path, sizeof(path), "/proc/sys/%s", key);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *c = path + 10; *c; c++)
		if (*c == '.')
			*c = '/';
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(value);
	if (fd < 0 || write(fd, value, len) != (ssize_t)len)
		return -errno;
	return 0;
}

/* Whether key is written from inside the sandbox's namespaces (the child of apply_sysctls):
 * the IPC namespace's, and net.* when net (the monitor is not in the sandbox's network
 * namespace; decided by the monitor: the child is root of the sandbox's user namespace). */
static bool sysctl_inside(const char *key, bool net)
{
	return sentry_sysctl_is_ipc(key) || (net && strncmp(key, "net.", 4) == 0);
}

/*
 * linux.sysctl (keys checked by sentry_plan.c). A root monitor is already in the sandbox's network
 * namespace: /proc/sys/net shows the opener's namespace, so net.* are written here. The IPC
 * namespace is the sentry's own: a child joins it for those keys, through the sandbox's user
 * namespace, because the kernel lets only that namespace's root write them (not even host root:
 * ipc_permissions). A rootless monitor stays outside the network namespace (follows_netns), so
 * the child writes net.* too.
 */
static int apply_sysctls(struct monitor *m, struct cbox_err **err)
{
	bool inside = false;
	/* The network namespace only when the monitor is not in it; never one given by path
	 * (Docker's): it belongs to the host's user namespace, which root of the sandbox's may not
	 * join. */
	bool net = !m->p->netns_path && !follows_netns(m);
	for (size_t i = 0; i < m->p->n_sysctl; i++) {
		const struct cbox_oci_kv *kv = &m->p->sysctl[i];
		if (sysctl_inside(kv->key, net)) {
			inside = true;
			continue;
		}
		int r = write_sysctl(kv->key, kv->value);
		if (r < 0)
			return cbox_err_set(err, -r, "linux.sysctl: set %s", kv->key);
	}
	if (!inside)
		return 0;
	pid_t pid = fork();
	if (pid < 0)
		return cbox_err_set(err, errno, "linux.sysctl: fork");
	if (pid == 0) {
		char user[64], ipc_ns[64], net_ns[64];
		snprintf(user, sizeof(user), "/proc/%d/ns/user", (int)m->sentry);
		snprintf(ipc_ns, sizeof(ipc_ns), "/proc/%d/ns/ipc", (int)m->sentry);
		snprintf(net_ns, sizeof(net_ns), "/proc/%d/ns/net", (int)m->sentry);
		int ufd = open(user, O_RDONLY | O_CLOEXEC),
		    ifd = open(ipc_ns, O_RDONLY | O_CLOEXEC),
		    nfd = net ? open(net_ns, O_RDONLY | O_CLOEXEC) : -1;
		/* As root of the sandbox's user namespace (its host id), which owns the keys. */
		if (ufd < 0 || ifd < 0 || (net && nfd < 0) || setns(ufd, CLONE_NEWUSER) < 0 ||
		    setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 ||
		    setns(ifd, CLONE_NEWIPC) < 0 || (net && setns(nfd, CLONE_NEWNET) < 0))
			_exit(1);
		for (size_t i = 0; i < m->p->n_sysctl; i++) {
			const struct cbox_oci_kv *kv = &m->p->sysctl[i];
			if (sysctl_inside(kv->key, net) && write_sysctl(kv->key, kv->value) < 0)
				_exit(2);
		}
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return cbox_err_set(err, EIO,
		                    "linux.sysctl: setting the sandbox's own keys (IPC, and net.* "
		                    "run rootless) failed");
	return 0;
}

static int write_sentry_pid(struct monitor *m, struct cbox_err **err)
{
	char path[4096], buf[64];
	snprintf(path, sizeof(path), "%s/" SENTRY_PID_FILE, m->state_dir);
	int n = snprintf(buf, sizeof(buf), "%d %llu\n", (int)m->sentry,
	                 cbox_tier_proc_start_time(m->sentry));
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		return cbox_err_set(err, errno, "write %s", path);
	return 0;
}

/* Block until `cbox start` opens exec.fifo for reading (the protocol of the ns tier). */
static int wait_for_start(const char *state_dir, struct cbox_err **err)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/exec.fifo", state_dir);
	int fd;
	do
		fd = open(path, O_WRONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	ssize_t n = write(fd, "0", 1);
	close(fd);
	return n == 1 ? 0 : cbox_err_set(err, errno, "write %s", path);
}

/* A signal for the container goes to the guest's init (the sentry's first child). */
static void forward(struct monitor *m, int sig)
{
	pid_t init = cbox_sentry_guest_init(m->sentry);
	if (init > 0) {
		kill(init, sig);
		return;
	}
	/* No guest yet (or any more): a signal meant to end the container ends the sandbox. */
	if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)
		kill(m->sentry, SIGKILL);
	else
		cbox_debug("signal %d dropped: the guest's init is not running", sig);
}

/* Signals the monitor passes on; the synchronous ones (faults) are its own. */
static void forwarded_set(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGTRAP);
	sigdelset(set, SIGSYS);
}

/* Until the sentry exits: forward signals, reap, and hand each `cbox exec` connection to the
 * sentry (which answers on it). Returns the container's exit status. */
static int supervise(struct monitor *m, int exec_fd)
{
	sigset_t set;
	forwarded_set(&set);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	int status = 0;
	for (bool done = false; !done;) {
		/* Reap first: a child that ended before SIGCHLD was blocked left no signal. */
		int st;
		for (pid_t r; (r = waitpid(-1, &st, WNOHANG)) > 0;) {
			if (r == m->gofer)
				m->gofer = 0;
			if (r == m->sentry) {
				status = st;
				done = true;
			}
		}
		if (done)
			break;
		struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN},
		                       {.fd = exec_fd, .events = POLLIN}};
		if (poll(pf, exec_fd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		struct signalfd_siginfo si;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				forward(m, (int)si.ssi_signo);
		if (exec_fd >= 0 && (pf[1].revents & POLLIN)) {
			int conn = accept4(exec_fd, NULL, NULL, SOCK_CLOEXEC);
			if (conn >= 0 && send_fd(m->sentry_sock, conn) < 0)
				cbox_warn("exec: the sentry did not take the connection: %s",
				          strerror(errno));
			if (conn >= 0)
				close(conn);
		}
	}
	if (sfd >= 0)
		close(sfd);
	if (m->gofer > 0) {
		kill(m->gofer, SIGKILL);
		waitpid(m->gofer, NULL, 0);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

void sentry_monitor_main(struct sentry_plan *p, const char *state_dir, int sock)
{
	struct monitor m = {
	    .p = p, .state_dir = state_dir, .sock = sock, .sentry_sock = -1, .gofer_sock = -1};
	struct cbox_err *err = NULL;
	struct cbox_tier_msg msg;
	cbox_log_set_who("sandbox");
	prctl(PR_SET_NAME, "cbox-sandbox");
	/* process.terminal: the sandbox's pty is the guest's stdio (sentry_create.c), and the
	 * monitor's and the gofer's too. None of them may keep the caller's: containerd's shim
	 * reads create's output until every copy of it is closed. */
	if (p->sentry.tty && (dup2(p->sentry.tty_fd, 0) < 0 || dup2(p->sentry.tty_fd, 1) < 0 ||
	                      dup2(p->sentry.tty_fd, 2) < 0))
		_exit(125);
	/* Its own session: a terminal's signals to the caller's process group do not reach it
	 * twice (`cbox run` forwards them). */
	setsid();
	if (join_netns(p->netns_path, &err) < 0 || clone_sentry(&m, &err) < 0 ||
	    follow_netns(&m, &err) < 0 || apply_sysctls(&m, &err) < 0)
		fail(&m, &err);
	if (cbox_tier_msg_send(sock, SENTRY_MSG_HOOKS, 0, NULL) < 0 ||
	    cbox_tier_msg_recv(sock, &msg) <= 0 || msg.type != SENTRY_MSG_GO) {
		kill(m.sentry, SIGKILL);
		_exit(1);
	}
	if (cbox_gofer_spawn(&p->gofer, &m.gofer_sock, &m.gofer, &err) < 0) {
		cbox_err_wrap(&err, "start the gofer");
		fail(&m, &err);
	}
	if (set_rlimits(&m, &err) < 0 || write_sentry_pid(&m, &err) < 0)
		fail(&m, &err);
	int exec_fd = sentry_exec_socket(state_dir, true, &err);
	if (exec_fd < 0)
		fail(&m, &err);
	if (cbox_tier_msg_send(sock, SENTRY_MSG_READY, 0, NULL) < 0)
		fail(&m, &err);
	close(sock);
	if (wait_for_start(state_dir, &err) < 0) {
		cbox_err_report(&err, "sandbox");
		kill(m.sentry, SIGKILL);
		_exit(125);
	}
	sigset_t set;
	forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (send_fd(m.sentry_sock, m.gofer_sock) < 0) {
		cbox_error("start the sentry: %s", strerror(errno));
		kill(m.sentry, SIGKILL);
	}
	close(m.gofer_sock);
	_exit(supervise(&m, exec_fd));
}
