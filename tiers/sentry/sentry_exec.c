/*
 * `cbox exec` into a sentry container. The process itself is a guest task that the running
 * sentry starts (sentry/exec_ctl.c); what the caller gets is a proxy, its own child: the proxy
 * connects to the sandbox's exec socket, hands over its stdio (or a new terminal's slave), and
 * then lives as long as the guest process, passing on the signals it receives and ending the
 * way the guest process ended. So the caller, or the subreaper it leaves the process to
 * (containerd's shim, for `docker exec`), waits for the proxy as it would for runc's exec'd
 * process, and gets the same status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/exec_req.h"
#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "internal.h"

/* The next reply from the sandbox, and the fd attached to it into *fd (else -1); false at
 * EOF or on a malformed one. */
static bool recv_reply(int sock, struct cbox_exec_reply *r, int *fd)
{
	int got = 0;
	ssize_t n = cbox_recv_fds(sock, r, sizeof(*r), fd, 1, &got, 0);
	if (got == 0)
		*fd = -1;
	if (n > 0 && cbox_exec_reply_valid(r, (size_t)n))
		return true;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return false;
}

/*
 * A SOCK_SEQPACKET socket on <state_dir>/exec.sock, bound (listen) or connected. The address
 * goes through /proc/self/fd so that a long state directory (Docker's ids are 64 characters)
 * still fits in sun_path. Only root reaches it: the state directory is root's, and the socket
 * is made 0600.
 */
int sentry_exec_socket(const char *state_dir, bool listen_on, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int dir = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return cbox_err_set(err, errno, "open %s", state_dir);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" SENTRY_EXEC_SOCK, dir);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cbox_err_set(err, errno, "exec socket");
	int r;
	if (listen_on) {
		mode_t old = umask(0077);
		r = bind(fd, (struct sockaddr *)&a, sizeof(a));
		umask(old);
		if (r == 0)
			r = listen(fd, 16);
	} else {
		r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	}
	if (r < 0) {
		int e = errno;
		close(fd);
		return cbox_err_set(err, e, "%s %s/" SENTRY_EXEC_SOCK,
		                    listen_on ? "listen on" : "connect to", state_dir);
	}
	return fd;
}

/* A pty for process.terminal (create, exec), given to the sandbox's host uid: the sentry
 * reopens it as that uid for /dev/tty. */
int sentry_console_open(int console_sock, struct cbox_err **err)
{
	uid_t uid = geteuid() == 0 ? SENTRY_SANDBOX_UID : geteuid();
	return cbox_tier_console_open(console_sock, uid, (gid_t)-1, err);
}

/* A pidfd of the guest process: its pid is the sandbox's, not the host's. */
static volatile int proxied = -1;

static void pass_on(int sig)
{
	if (proxied >= 0)
		syscall(SYS_pidfd_send_signal, proxied, sig, NULL, 0);
}

/* The proxy: send the request, report the start on ready, then follow the process. */
static CBOX_NORETURN void proxy_main(int sock, const char *req, size_t len, const int stdio[3],
                                     int ready)
{
	struct cbox_exec_reply r = {0};
	int pidfd = -1;
	if (cbox_send_fds(sock, req, len, stdio, 3) < 0 || !recv_reply(sock, &r, &pidfd) ||
	    r.type != CBOX_EXEC_STARTED || pidfd < 0) {
		char msg[300];
		int n = snprintf(msg, sizeof(msg), "the sandbox refused the exec: %s",
		                 r.type == CBOX_EXEC_ERROR && r.msg[0] ? r.msg : "no answer");
		(void)!write(ready, msg, (size_t)(n > 0 ? n : 0));
		_exit(1);
	}
	for (int i = 0; i < 3; i++)
		if (stdio[i] > 2)
			close(stdio[i]);
	proxied = pidfd;
	struct sigaction sa = {.sa_handler = pass_on};
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			sigaction(sig, &sa, NULL);
	(void)!write(ready, "", 1);
	close(ready);
	int status = SIGKILL; /* the sandbox ended without a word: its processes were killed */
	int none;
	while (recv_reply(sock, &r, &none))
		if (r.type == CBOX_EXEC_EXITED) {
			status = r.value;
			break;
		}
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

int sentry_exec(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
                struct cbox_err **err)
{
	const struct cbox_oci_process *p = x->process;
	/* The sentry checks the user against its sandbox (sentry/exec_ctl.c: a sandbox whose
	 * runtime was not root maps 0:0 only) and gives the new task these ids. */
	const struct cbox_exec_user user = {.uid = p->user.uid,
	                                    .gid = p->user.gid,
	                                    .ngroups = p->user.n_additional_gids,
	                                    .groups = p->user.additional_gids};
	CBOX_AUTOFREE char **argv = calloc(p->n_args + 1, sizeof(char *));
	CBOX_AUTOFREE char **envp = calloc(p->n_env + 1, sizeof(char *));
	if (!argv || !envp)
		return cbox_err_set(err, ENOMEM, "exec");
	memcpy(argv, p->args, p->n_args * sizeof(char *));
	if (p->n_env)
		memcpy(envp, p->env, p->n_env * sizeof(char *));
	CBOX_AUTOFREE char *req = NULL;
	size_t len = 0;
	uint32_t flags =
	    (p->terminal ? CBOX_EXEC_TTY : 0) | (p->no_new_privileges ? CBOX_EXEC_NO_NEW_PRIVS : 0);
	int r = cbox_exec_req_encode(argv, envp, p->cwd ? p->cwd : "/", flags, &user, &req, &len);
	if (r < 0)
		return cbox_err_set(err, -r, "exec: the process (args, env, cwd) cannot be sent");
	CBOX_AUTOCLOSE int sock = sentry_exec_socket(c->state_dir, false, err);
	if (sock < 0)
		return -1;
	CBOX_AUTOCLOSE int slave = -1;
	if (p->terminal && (slave = sentry_console_open(x->console_sock, err)) < 0)
		return -1;
	int stdio[3] = {0, 1, 2};
	if (slave >= 0)
		stdio[0] = stdio[1] = stdio[2] = slave;
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return cbox_err_set(err, errno, "exec: pipe");
	pid_t child = fork();
	if (child < 0) {
		close(ready[0]);
		close(ready[1]);
		return cbox_err_set(err, errno, "exec: fork");
	}
	if (child == 0) {
		close(ready[0]);
		proxy_main(sock, req, len, stdio, ready[1]);
	}
	close(ready[1]);
	char msg[320];
	ssize_t n;
	do
		n = read(ready[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n == 1 && msg[0] == '\0') {
		*pid = child;
		return 0;
	}
	waitpid(child, NULL, 0);
	msg[n > 0 ? n : 0] = '\0';
	return cbox_err_set(err, 0, "%s", n > 0 ? msg : "the exec proxy died");
}
