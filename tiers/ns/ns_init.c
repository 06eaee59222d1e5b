/*
 * The container's init: pid 1 of its pid namespace (when it has one). Builds the mount tree,
 * lets the runtime run the createRuntime hooks, switches root, applies the limits, reports
 * "ready", waits on exec.fifo for `cbox start`, drops privileges and execs process.args.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

static CBOX_NORETURN void fail(const struct ns_init_args *a, struct cbox_err **err)
{
	cbox_tier_msg_send(a->sock, NS_MSG_ERROR, 0,
	                   *err && (*err)->msg ? (*err)->msg : "unknown error");
	_exit(1);
}

int ns_apply_sysctl(const struct cbox_oci_linux *l, struct cbox_err **err)
{
	for (size_t i = 0; i < l->n_sysctl; i++) {
		char path[512];
		const char *k = l->sysctl[i].key;
		if (strstr(k, "..") || strchr(k, '/'))
			return cbox_err_set(err, EINVAL, "linux.sysctl: bad key '%s'", k);
		snprintf(path, sizeof(path), "/proc/sys/%s", k);
		for (char *s = path + 10; *s; s++)
			if (*s == '.')
				*s = '/';
		CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
		const char *v = l->sysctl[i].value;
		if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
			return cbox_err_set(err, errno, "linux.sysctl: set %s", k);
	}
	return 0;
}

/* Block until `cbox start` opens exec.fifo for reading, then tell it we are going. */
static int wait_for_start(const struct ns_init_args *a, struct cbox_err **err)
{
	/* The state directory's fd lies outside the container's root: it is O_CLOEXEC and closed
	 * here, so the container's program never holds a path back to the runtime's state. */
	int fd;
	do
		fd = openat(a->state_dir, "exec.fifo", O_WRONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	close(a->state_dir);
	if (fd < 0)
		return cbox_err_set(err, errno, "open exec.fifo");
	ssize_t n = write(fd, "0", 1);
	close(fd);
	return n == 1 ? 0 : cbox_err_set(err, errno, "write exec.fifo");
}

/* From the fifo on, the runtime is gone: a failure goes to stderr, as runc's does. */
static CBOX_NORETURN void late_fail(struct cbox_err **err)
{
	cbox_err_report(err, "container init");
	_exit(127);
}

int ns_drop_and_exec(const struct cbox_oci_process *p, const struct cbox_oci_seccomp *sc,
                     const char *exe, struct cbox_err **err)
{
	/* The process starts as a fresh one would: every signal at its default action and none
	 * blocked, as crun does. A SIG_IGN of whoever started the runtime (a script's background
	 * job ignores SIGINT) would survive the exec, and a shell cannot trap a signal ignored
	 * on entry. Before the seccomp profile, which may not allow rt_sigaction. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Without no_new_privs the filter must go on while we still hold CAP_SYS_ADMIN; with it,
	 * as late as possible, so that the filter does not have to allow the set-up calls. */
	if (sc && !p->no_new_privileges && ns_apply_seccomp(sc, err) < 0)
		return -1;
	if (ns_apply_user_caps(p, err) < 0)
		return -1;
	if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cbox_err_set(err, errno, "set no_new_privs");
	if (p->user.has_umask)
		umask(p->user.umask & 0777);
	if (chdir(p->cwd) < 0)
		return cbox_err_set(err, errno, "chdir to process.cwd %s", p->cwd);
	if (sc && p->no_new_privileges && ns_apply_seccomp(sc, err) < 0)
		return -1;
	execve(exe, p->args, p->env);
	return cbox_err_set(err, errno, "exec %s", exe);
}

void ns_init_main(const struct ns_init_args *a)
{
	struct cbox_err *err = NULL;
	struct cbox_tier_msg m;
	char exe[4096];
	cbox_log_set_who("container-init");
	if (ns_mount_prepare(a, &err) < 0)
		fail(a, &err);
	if (cbox_tier_msg_send(a->sock, NS_MSG_HOOKS, 0, NULL) < 0 ||
	    cbox_tier_msg_recv(a->sock, &m) <= 0 || m.type != NS_MSG_GO)
		_exit(1);
	if (ns_mount_finish(a, &err) < 0)
		fail(a, &err);
	if (a->cfg->hostname && a->cfg->hostname[0] &&
	    sethostname(a->cfg->hostname, strlen(a->cfg->hostname)) < 0) {
		cbox_err_set(&err, errno, "set hostname '%s'", a->cfg->hostname);
		fail(a, &err);
	}
	if (ns_apply_rlimits(&a->cfg->process, &err) < 0)
		fail(a, &err);
	/* process.terminal: the init leads a session of its own with the container's pty as its
	 * controlling terminal; the master reaches the caller before create returns. */
	if (a->cfg->process.terminal) {
		if (setsid() < 0) {
			cbox_err_set(&err, errno, "setsid");
			fail(a, &err);
		}
		if (ns_console(&a->cfg->process, a->console_sock, &err) < 0)
			fail(a, &err);
		close(a->console_sock);
	}
	/* Resolve the program before reporting success, so that a wrong args[0] fails create
	 * (with a message) instead of start. */
	if (ns_find_exec(&a->cfg->process, exe, sizeof(exe), &err) < 0)
		fail(a, &err);
	if (cbox_tier_msg_send(a->sock, NS_MSG_READY, 0, NULL) < 0)
		_exit(1);
	close(a->sock);
	if (wait_for_start(a, &err) < 0)
		late_fail(&err);
	ns_drop_and_exec(&a->cfg->process, a->cfg->linux_.seccomp, exe, &err);
	late_fail(&err);
}
