/*
 * Who may signal whom among guest tasks (Linux's check_kill_permission). The host sees every
 * guest task as the same unprivileged id, so it would let any of them signal any other; the
 * sentry checks the credentials it keeps (cred.c) first and lets the call through only when
 * Linux would, so that a guest user cannot kill or stop the processes of another user (or of
 * root) in the same sandbox.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cbox/syscalls.h"
#include "internal.h"

int cbox_signal_allowed(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *target,
                        int sig)
{
	(void)s;
	if (!t->cred || !target->cred)
		return 0; /* not linked yet: nothing to compare (the host decides) */
	if (cbox_cred_may_signal(t->cred, target->cred))
		return 0;
	/* SIGCONT within a session: a shell resumes the jobs it started as another user. */
	struct cbox_task_stat a, b;
	if (sig == SIGCONT && cbox_task_stat(t->tid, &a) == 0 &&
	    cbox_task_stat(target->tid, &b) == 0 && a.sid == b.sid)
		return 0;
	return -EPERM;
}

static bool is_leader(const struct cbox_task *x)
{
	return x->tg && x->tg->host_tgid == x->tid;
}

/*
 * kill(0), kill(-1) and kill(-pgrp). The targets are the guest's processes in the group (or, for
 * -1, all of them but the caller's and the guest's pid 1). Linux sends to those it may and
 * answers 0 if it sent to any; for a group, EPERM when it may signal none, and kill(-1) ignores
 * EPERM altogether (0 when it found a target). When every target is allowed the host sends (as
 * Linux, to any process the sentry does not track too); otherwise the sentry sends to the
 * allowed ones itself.
 */
int64_t cbox_signal_group(struct cbox_sentry *s, struct cbox_task *t, pid_t pid, int sig)
{
	pid_t want = 0;
	struct cbox_task_stat st;
	if (pid == 0) {
		if (cbox_task_stat(t->tid, &st) < 0)
			return CBOX_SYSRET_CONTINUE;
		want = st.pgid;
	} else if (pid < -1) {
		struct cbox_task *leader = cbox_task_by_vtid(s, -pid);
		if (!leader)
			return CBOX_SYSRET_CONTINUE; /* the host finds the group or answers ESRCH */
		want = leader->tid;
	}
	int allowed = 0, denied = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t h = 0; h < CBOX_TASK_HASH; h++) {
			for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
				if (!is_leader(x))
					continue;
				if (pid == -1) {
					if (x->tg == t->tg || cbox_task_vpid(s, x) == 1)
						continue;
				} else if (cbox_task_stat(x->tid, &st) < 0 || st.pgid != want) {
					continue;
				}
				bool ok = cbox_signal_allowed(s, t, x, sig) == 0;
				if (pass == 0) {
					allowed += ok;
					denied += !ok;
				} else if (ok && sig != 0) {
					kill(x->tid, sig);
				}
			}
		}
		if (pass == 0 && denied == 0)
			return CBOX_SYSRET_CONTINUE;
		if (pass == 0 && allowed == 0)
			return pid == -1 ? 0 : -EPERM;
	}
	return 0;
}
