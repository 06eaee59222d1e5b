/* The ns tier's start, kill, delete and status, and its ops table. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "internal.h"

static int ns_available(char *why, size_t n)
{
	if (access("/proc/self/ns/mnt", F_OK) < 0 || access("/proc/self/ns/pid", F_OK) < 0) {
		snprintf(why, n, "kernel without mount or pid namespaces");
		return -1;
	}
	snprintf(why, n, "namespaces, pivot_root, capabilities and seccomp");
	return 0;
}

static void fifo_path(const struct cbox_tier_container *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s/exec.fifo", c->state_dir);
}

static int ns_start(struct cbox_tier_container *c, struct cbox_err **err)
{
	return cbox_tier_release_fifo(c, "the container's init", err);
}

/* Every process in init's pid namespace (init alone when it shares ours). */
static int kill_all(pid_t init, int sig, struct cbox_err **err)
{
	CBOX_AUTOFREE pid_t *pids = NULL;
	size_t n = 0;
	if (cbox_tier_pidns_pids(init, &pids, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		kill(pids[i], sig);
	return 0;
}

static int ns_kill(struct cbox_tier_container *c, int sig, bool all, struct cbox_err **err)
{
	if (!cbox_tier_proc_alive(c->pid, c->start_time))
		return cbox_err_set(err, ESRCH, "container %s is not running", c->id);
	if (all)
		return kill_all(c->pid, sig, err);
	if (kill(c->pid, sig) < 0)
		return cbox_err_set(err, errno, "kill %d", c->pid);
	return 0;
}

static int ns_delete(struct cbox_tier_container *c, struct cbox_err **err)
{
	char fifo[4096];
	fifo_path(c, fifo, sizeof(fifo));
	if (unlink(fifo) < 0 && errno != ENOENT)
		return cbox_err_set(err, errno, "unlink %s", fifo);
	return cbox_tier_cgroup_delete(c, err);
}

static enum cbox_tier_status ns_status(const struct cbox_tier_container *c)
{
	char fifo[4096];
	if (!cbox_tier_proc_alive(c->pid, c->start_time))
		return CBOX_TIER_STOPPED;
	if (cbox_tier_cgroup_frozen(c))
		return CBOX_TIER_PAUSED;
	fifo_path(c, fifo, sizeof(fifo));
	return access(fifo, F_OK) == 0 ? CBOX_TIER_CREATED : CBOX_TIER_RUNNING;
}

/* As runc: the processes in the container's cgroup. Without one (a host without cgroups), those
 * in its pid namespace. */
static int ns_pids(const struct cbox_tier_container *c, pid_t **pids, size_t *n,
                   struct cbox_err **err)
{
	if (cbox_tier_cgroup_recorded(c))
		return cbox_tier_cgroup_pids(c, pids, n, err);
	if (!cbox_tier_proc_alive(c->pid, c->start_time)) {
		*n = 0;
		*pids = malloc(sizeof(pid_t));
		return *pids ? 0 : cbox_err_set(err, ENOMEM, "listing the processes");
	}
	return cbox_tier_pidns_pids(c->pid, pids, n, err);
}

const struct cbox_tier_ops cbox_tier_ns = {
    .name = "ns",
    .summary = "plain namespaces, pivot_root, capabilities, seccomp (like runc/crun)",
    .available = ns_available,
    .create = ns_create,
    .start = ns_start,
    .kill = ns_kill,
    .delete = ns_delete,
    .status = ns_status,
    .pids = ns_pids,
    .pause = cbox_tier_cgroup_pause,
    .update = cbox_tier_cgroup_update,
    .exec = ns_exec,
};
