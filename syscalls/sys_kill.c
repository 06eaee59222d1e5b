/*
 * Signals to other tasks: kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and
 * pidfd_send_signal. The host would let any guest task signal any other (they are one host id);
 * the sentry first makes Linux's permission check on the ids it keeps (sentry/signal.c) and
 * then lets the host send, so that delivery, siginfo and every other error stay the host's.
 * A target the sentry does not know (a pid that does not exist, the tiny init of --init) is
 * the host's to answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define IARG(i) ((int)c->trap->args[i])

/* A number the host would take as a signal (0 probes); anything else it refuses (EINVAL). */
static bool valid_sig(int sig)
{
	return sig >= 0 && sig <= 64;
}

static int64_t check_target(struct cbox_sysctx *c, struct cbox_task *target, int sig)
{
	if (!target || !valid_sig(sig))
		return CBOX_SYSRET_CONTINUE;
	int r = cbox_signal_allowed(c->s, c->task, target, sig);
	return r < 0 ? r : CBOX_SYSRET_CONTINUE;
}

static int64_t to_vid(struct cbox_sysctx *c, pid_t vid, int sig)
{
	return check_target(c, vid > 0 ? cbox_task_by_vtid(c->s, vid) : NULL, sig);
}

int64_t sys_kill(struct cbox_sysctx *c)
{
	pid_t pid = IARG(0);
	int sig = IARG(1);
	if (pid > 0)
		return to_vid(c, pid, sig);
	if (pid == INT_MIN || !valid_sig(sig))
		return CBOX_SYSRET_CONTINUE; /* ESRCH, EINVAL: the host's answers */
	return cbox_signal_group(c->s, c->task, pid, sig);
}

int64_t sys_tkill(struct cbox_sysctx *c)
{
	return to_vid(c, IARG(0), IARG(1));
}

int64_t sys_tgkill(struct cbox_sysctx *c)
{
	return to_vid(c, IARG(1), IARG(2));
}

int64_t sys_rt_sigqueueinfo(struct cbox_sysctx *c)
{
	return to_vid(c, IARG(0), IARG(1));
}

int64_t sys_rt_tgsigqueueinfo(struct cbox_sysctx *c)
{
	return to_vid(c, IARG(1), IARG(2));
}

struct cbox_task *cbox_sys_pidfd_task(struct cbox_sysctx *c, int pidfd)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", c->task->tid, pidfd);
	if (cbox_proc_read(path, buf, sizeof(buf)) <= 0)
		return NULL;
	char *line = strstr(buf, "\nPid:");
	if (!line)
		return NULL;
	long pid = strtol(line + 5, NULL, 10);
	return pid > 0 ? cbox_task_find(c->s, (pid_t)pid) : NULL;
}

int64_t sys_pidfd_send_signal(struct cbox_sysctx *c)
{
	return check_target(c, cbox_sys_pidfd_task(c, IARG(0)), IARG(1));
}
