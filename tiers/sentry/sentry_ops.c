/*
 * The sentry tier's host check, start, kill, delete and status, and its ops table. The
 * container's pid is the sandbox monitor's (sentry_monitor.c); the sentry's own pid is in
 * <state>/sentry.pid, the guest's init is the sentry's child.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/exec_req.h"
#include "internal.h"
#include "sentry_tier.h"

/* The first line of path, or "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, n - 1);
	buf[r > 0 ? r : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int sentry_available(char *why, size_t n)
{
	char v[256];
	read_line("/proc/sys/user/max_user_namespaces", v, sizeof(v));
	if ((v[0] && atol(v) == 0) || access("/proc/self/ns/user", F_OK) < 0) {
		snprintf(why, n, "user namespaces disabled or missing (user.max_user_namespaces)");
		return -1;
	}
	read_line("/proc/sys/kernel/seccomp/actions_avail", v, sizeof(v));
	if (!strstr(v, "user_notif")) {
		snprintf(why, n, "kernel without seccomp user notification (needs Linux >= 5.0)");
		return -1;
	}
	snprintf(why, n, "seccomp user notification and user namespaces");
	return 0;
}

static void state_file(const struct cbox_tier_container *c, const char *name, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", c->state_dir, name);
}

static int sentry_start(struct cbox_tier_container *c, struct cbox_err **err)
{
	return cbox_tier_release_fifo(c, "the sandbox monitor", err);
}

/* The sentry's pid from <state>/sentry.pid, when that process still runs; else 0. */
static pid_t sentry_pid(const struct cbox_tier_container *c)
{
	char path[4096], buf[128];
	state_file(c, SENTRY_PID_FILE, path, sizeof(path));
	read_line(path, buf, sizeof(buf));
	int pid = 0;
	unsigned long long start = 0;
	if (sscanf(buf, "%d %llu", &pid, &start) != 2 || !cbox_tier_proc_alive(pid, start))
		return 0;
	return pid;
}

/* Every guest task: the processes in the pid namespace of the guest's init, which holds them all
 * and neither the sentry nor the gofer (each in a namespace of its own). */
static int guest_pids(pid_t sentry, pid_t **pids, size_t *n, struct cbox_err **err)
{
	pid_t init = sentry > 0 ? cbox_sentry_guest_init(sentry) : 0;
	struct cbox_err *e = NULL;
	if (init > 0 && cbox_tier_pidns_pids(init, pids, n, &e) == 0)
		return 0;
	if (e && e->errno_ != ESRCH) {
		*err = e;
		return -1;
	}
	cbox_err_free(&e);
	*n = 0; /* no guest (yet, or any more) */
	*pids = malloc(sizeof(pid_t));
	return *pids ? 0 : cbox_err_set(err, ENOMEM, "listing the guest's tasks");
}

static int kill_guests(pid_t sentry, int sig, struct cbox_err **err)
{
	CBOX_AUTOFREE pid_t *pids = NULL;
	size_t n = 0;
	if (guest_pids(sentry, &pids, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		kill(pids[i], sig);
	return 0;
}

static int sentry_kill(struct cbox_tier_container *c, int sig, bool all, struct cbox_err **err)
{
	if (!cbox_tier_proc_alive(c->pid, c->start_time))
		return cbox_err_set(err, ESRCH, "container %s is not running", c->id);
	if (all) {
		pid_t sentry = sentry_pid(c);
		if (sentry > 0 && kill_guests(sentry, sig, err) < 0)
			return -1;
		/* SIGKILL of everything: the sentry too (its guests die with it, EXITKILL), and
		 * the monitor (its gofer dies with it). */
		if (sig != SIGKILL)
			return 0;
		if (sentry > 0)
			kill(sentry, SIGKILL);
	}
	/* One signal goes to the monitor, which passes it on to the guest's init. */
	if (kill(c->pid, sig) < 0)
		return cbox_err_set(err, errno, "kill %d", c->pid);
	return 0;
}

static int sentry_delete(struct cbox_tier_container *c, struct cbox_err **err)
{
	static const char *const files[] = {"exec.fifo", SENTRY_PID_FILE, SENTRY_EXEC_SOCK};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(files); i++) {
		char path[4096];
		state_file(c, files[i], path, sizeof(path));
		if (unlink(path) < 0 && errno != ENOENT)
			return cbox_err_set(err, errno, "unlink %s", path);
	}
	return cbox_tier_cgroup_delete(c, err);
}

static enum cbox_tier_status sentry_status(const struct cbox_tier_container *c)
{
	char fifo[4096];
	if (!cbox_tier_proc_alive(c->pid, c->start_time))
		return CBOX_TIER_STOPPED;
	if (cbox_tier_cgroup_frozen(c))
		return CBOX_TIER_PAUSED;
	state_file(c, "exec.fifo", fifo, sizeof(fifo));
	return access(fifo, F_OK) == 0 ? CBOX_TIER_CREATED : CBOX_TIER_RUNNING;
}

/* The guest's tasks only: the monitor, the sentry and the gofer are the tier's machinery, and
 * `docker top` shows what the container runs. */
static int sentry_pids(const struct cbox_tier_container *c, pid_t **pids, size_t *n,
                       struct cbox_err **err)
{
	pid_t sentry = cbox_tier_proc_alive(c->pid, c->start_time) ? sentry_pid(c) : 0;
	return guest_pids(sentry, pids, n, err);
}

/*
 * Pause: the sentry first stops taking trapped calls (the quiesce request of cbox/exec_req.h;
 * sentry/exec_ctl.c says why the freezer needs that), then the whole cgroup freezes. The
 * connection is closed once frozen; the sentry takes calls again after the thaw. A sandbox
 * without an exec socket (its monitor predates it, or is gone) is frozen as it is.
 */
static int sentry_pause(struct cbox_tier_container *c, bool frozen, struct cbox_err **err)
{
	if (!frozen)
		return cbox_tier_cgroup_pause(c, false, err);
	CBOX_AUTOCLOSE int sock = sentry_exec_socket(c->state_dir, false, NULL);
	if (sock >= 0) {
		uint32_t magic = CBOX_QUIESCE_MAGIC;
		struct cbox_exec_reply r;
		struct pollfd pf = {.fd = sock, .events = POLLIN};
		ssize_t n = -1;
		if (send(sock, &magic, sizeof(magic), MSG_NOSIGNAL) == sizeof(magic) &&
		    poll(&pf, 1, 5000) == 1)
			n = recv(sock, &r, sizeof(r), 0);
		if (n < 0 || !cbox_exec_reply_valid(&r, (size_t)n))
			return cbox_err_set(err, n < 0 ? errno : EPROTO,
			                    "pause: the sentry did not answer");
		if (r.type != CBOX_EXEC_QUIET)
			return cbox_err_set(err, r.type == CBOX_EXEC_ERROR ? r.value : EPROTO,
			                    "pause: %s",
			                    r.msg[0] ? r.msg : "refused by the sentry");
	}
	return cbox_tier_cgroup_pause(c, true, err);
}

const struct cbox_tier_ops cbox_tier_sentry = {
    .name = "sentry",
    .summary = "user-space kernel: the guest reaches only the published host-syscall list",
    .available = sentry_available,
    .create = sentry_tier_create,
    .start = sentry_start,
    .kill = sentry_kill,
    .delete = sentry_delete,
    .status = sentry_status,
    .pids = sentry_pids,
    /* The whole cgroup freezes: the guest's tasks, the sentry, the gofer and the monitor.
     * Freezing the guest alone would leave the sentry waiting on stopped tasks; all of them
     * stopping together is what a paused sandbox means, and thawing resumes them as one. */
    .pause = sentry_pause,
    /* The limits cover the whole sandbox, as at create. */
    .update = cbox_tier_cgroup_update,
    /* A new guest task started by the running sentry (sentry_exec.c). */
    .exec = sentry_exec,
};
