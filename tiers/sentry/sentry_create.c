/*
 * The sentry tier's create, on the runtime's side: translate the config (so that a config the
 * sentry cannot honour fails here, nothing started), fork the sandbox monitor, run the hooks when
 * it says the namespaces exist, and return once it waits for `cbox start`. Like runc, the runtime
 * does not wait for the container: the monitor is adopted by the caller's subreaper
 * (containerd-shim, `cbox run`) when `cbox create` exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"
#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "internal.h"

/* The runtime's side of the set-up conversation, until the monitor waits for start. */
static int converse(struct cbox_tier_container *c, int sock, cbox_tier_created_fn created,
                    void *data, struct cbox_err **err)
{
	struct cbox_tier_msg m;
	for (;;) {
		int r = cbox_tier_msg_recv(sock, &m);
		if (r < 0)
			return cbox_err_set(err, -r, "talking to the sandbox monitor");
		if (r == 0)
			return cbox_err_set(err, 0, "the sandbox monitor exited during set-up");
		switch (m.type) {
		case SENTRY_MSG_HOOKS:
			if (created && created(data, c, err) < 0)
				return -1;
			if (cbox_tier_msg_send(sock, SENTRY_MSG_GO, 0, NULL) < 0)
				return cbox_err_set(err, errno, "talking to the sandbox monitor");
			break;
		case SENTRY_MSG_READY:
			return 0;
		case SENTRY_MSG_ERROR:
			return cbox_err_set(err, 0, "%s", m.text);
		default:
			return cbox_err_set(err, EPROTO, "unexpected message %d from the monitor",
			                    m.type);
		}
	}
}

static void remove_files(const char *state_dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/exec.fifo", state_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" SENTRY_PID_FILE, state_dir);
	unlink(path);
}

int sentry_tier_create(struct cbox_tier_container *c, cbox_tier_created_fn created, void *data,
                       struct cbox_err **err)
{
	struct sentry_plan plan;
	char fifo[4096];
	int sv[2];
	if (sentry_plan_build(c, &plan, err) < 0)
		return cbox_err_wrap(err, "sentry tier");
	/* process.terminal: a pty of the sandbox's own, as cbox-run -t makes. The master goes to
	 * the console socket now (containerd's shim reads it once create returns); the slave is
	 * the guest's stdio and controlling terminal (the sentry's /dev/tty reopens it). */
	CBOX_AUTOCLOSE int slave = -1;
	if (c->config->process.terminal) {
		slave = c->has_console ? sentry_console_open(c->console_sock, err)
		                       : cbox_err_set(err, EINVAL,
		                                      "process.terminal without a console socket");
		if (slave < 0) {
			sentry_plan_free(&plan);
			return -1;
		}
		plan.sentry.tty = true;
		plan.sentry.tty_fd = slave;
	}
	snprintf(fifo, sizeof(fifo), "%s/exec.fifo", c->state_dir);
	if (mkfifo(fifo, 0600) < 0) {
		sentry_plan_free(&plan);
		return cbox_err_set(err, errno, "mkfifo %s", fifo);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		sentry_plan_free(&plan);
		unlink(fifo);
		return cbox_err_set(err, errno, "create: socketpair");
	}
	/* The container's cgroup (linux.resources, cgroupsPath): the monitor joins it first, so the
	 * sentry, the gofer and every guest task are born inside. */
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	if (cbox_tier_cgroup_create(c, &cg, err) < 0) {
		sentry_plan_free(&plan);
		close(sv[0]);
		close(sv[1]);
		unlink(fifo);
		return -1;
	}
	fflush(NULL);
	/* (born in the cgroup's v2 hierarchy, it joins the rest by itself: cbox_cgroup_fork) */
	pid_t pid = cbox_cgroup_fork(cg, 0);
	if (pid == 0) {
		close(sv[0]);
		struct cbox_err *e = NULL;
		if (cbox_cgroup_join(cg, &e) < 0) {
			cbox_err_report(&e, "sandbox: join the container's cgroup");
			_exit(125);
		}
		/* The guest's /sys/fs/cgroup shows it, limits read live (`cbox update` too). */
		struct cbox_sentry_cgroup view;
		if (cg) {
			int r = cbox_cgroup_open_dirs(cg, &view.v2, &view.memory, &view.cpu,
			                              &view.pids, &view.unified);
			if (r < 0) {
				cbox_error("sandbox: open the container's cgroup: %s",
				           strerror(-r));
				_exit(125);
			}
			plan.sentry.cgroup = &view;
		}
		sentry_monitor_main(&plan, c->state_dir, sv[1]);
	}
	close(sv[1]);
	int r = pid < 0 ? cbox_err_set(err, errno, "fork the sandbox monitor") : 0;
	if (r == 0) {
		c->pid = pid;
		c->start_time = cbox_tier_proc_start_time(pid);
		r = converse(c, sv[0], created, data, err);
	}
	close(sv[0]);
	sentry_plan_free(&plan);
	if (r < 0) {
		/* Nothing may be left running after a failed create: the sentry and the gofer
		 * end with the monitor (EOF on their socket, and PR_SET_PDEATHSIG). */
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		cbox_tier_cgroup_abort(c, cg);
		remove_files(c->state_dir);
		return -1;
	}
	return 0;
}
