/*
 * The scheduler's settings of other processes: setpriority and getpriority, ioprio_set and
 * ioprio_get, sched_setparam, sched_setscheduler and sched_setattr. A task's own settings stay on
 * the fast path (pid or who 0, and the reads Linux lets anyone make); these come here when they
 * name another process, a process group or a user.
 *
 * Security: every guest task is the one host id, so the host would let a process that dropped
 * to nobody renice root's server, move it to the idle I/O class or the SCHED_IDLE policy. The
 * sentry makes Linux's owner checks on the ids it keeps first (set_one_prio_perm and
 * check_same_owner: cbox_cred_same_owner; set_task_ioprio's), with Linux's argument checks
 * before them, and answers EPERM where Linux would; the host then runs the call. A user (PRIO_USER,
 * IOPRIO_WHO_USER) is a guest id the host cannot tell apart from the others (every guest task is
 * its one id, and the guest's other ids are not mapped there): the sentry finds that user's
 * threads and sets or reads each itself, and so it does for a process group with a thread of
 * another user in it. Tried by t_cross_user in tests/integration/test_attack.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cred.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP    2
#define IOPRIO_WHO_USER    3
#define IOPRIO_CLASS_NONE  0
#define IOPRIO_CLASS_BE    2
#define IOPRIO_DEFAULT     ((IOPRIO_CLASS_BE << 13) | 4)

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define CBOX_SCHED_RESET_ON_FORK    0x40000000
#define CBOX_SCHED_FLAG_KEEP_POLICY 0x08
#define CBOX_SCHED_FLAG_KEEP_PARAMS 0x10
#define CBOX_SCHED_FLAG_ALL         0x7f
#define CBOX_SCHED_FLAG_SUGOV       0x10000000
#define CBOX_SCHED_FLAG_UTIL_CLAMP  0x60
#define CBOX_SCHED_ATTR_SIZE_VER0   48
#define CBOX_SCHED_ATTR_SIZE_VER1   56

/* Linux's struct sched_attr (include/uapi/linux/sched/types.h), as far as this build knows. */
struct cbox_sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

/* ---- who a call selects ------------------------------------------------------------------- */

/* The threads a PRIO_PGRP/IOPRIO_WHO_PGRP (a guest process group) or PRIO_USER/IOPRIO_WHO_USER
 * (a guest's real uid) call selects. */
struct sel {
	bool user;
	uint32_t id;
};

/* who 0 is the caller's own group or real uid. -ESRCH when the caller's cannot be told. */
static int sel_of(struct cbox_sysctx *c, bool user, uint32_t who, struct sel *out)
{
	out->user = user;
	out->id = who;
	if (who)
		return 0;
	if (user) {
		if (!c->task->cred)
			return -ESRCH;
		out->id = c->task->cred->uid;
		return 0;
	}
	pid_t g = cbox_task_vpgid_of(c->task->tid);
	if (g <= 0)
		return -ESRCH;
	out->id = (uint32_t)g;
	return 0;
}

static bool selects(const struct sel *sel, struct cbox_task *x)
{
	if (!x->cred)
		return false;
	if (sel->user)
		return x->cred->uid == sel->id;
	return cbox_task_vpgid_of(x->tid) == (pid_t)sel->id;
}

/* One pass over the selected threads: may (the permission) counts, or act runs on each. */
struct each_ctx {
	struct cbox_sysctx *c;
	const struct sel *sel;
	bool (*may)(const struct cbox_task *caller, const struct cbox_task *t);
	/* Runs on a selected thread; returns false to stop. */
	bool (*act)(struct each_ctx *e, struct cbox_task *t, bool allowed);
	int found, denied;
	long arg, result;
};

static bool each_selected(struct cbox_task *t, void *ctx)
{
	struct each_ctx *e = ctx;
	if (!selects(e->sel, t))
		return true;
	bool ok = e->may(e->c->task, t);
	e->found++;
	e->denied += !ok;
	return e->act ? e->act(e, t, ok) : true;
}

/* set_one_prio_perm and check_same_owner: Linux's owner test for another task's nice value and
 * scheduling. */
static bool same_owner(const struct cbox_task *caller, const struct cbox_task *t)
{
	if (caller->tg && caller->tg == t->tg)
		return true;
	return caller->cred && t->cred && cbox_cred_same_owner(caller->cred, t->cred);
}

/* set_task_ioprio's owner test: the target's real uid is the caller's effective or real uid. */
static bool ioprio_owner(const struct cbox_task *caller, const struct cbox_task *t)
{
	if (caller->tg && caller->tg == t->tg)
		return true;
	return caller->cred && t->cred &&
	       (t->cred->uid == caller->cred->euid || t->cred->uid == caller->cred->uid);
}

/* ---- the shape of the four calls -------------------------------------------------------- */

enum who_kind { WHO_PROCESS, WHO_PGRP, WHO_USER };

static bool anyone(const struct cbox_task *caller, const struct cbox_task *t)
{
	(void)caller;
	(void)t;
	return true;
}

/*
 * setpriority's and ioprio_set's: on a process (who: its guest tid; the caller's own, 0, stays
 * the host's), a process group or a user (who 0: the caller's own). may is Linux's owner test,
 * act sets one thread, and valid (when not NULL) makes the checks of arg Linux makes before it
 * looks at a target. A group whose every thread may be set is the host's: it selects the same
 * threads.
 */
static int64_t set_for(struct cbox_sysctx *c, enum who_kind kind, uint32_t who, long arg,
                       bool (*may)(const struct cbox_task *, const struct cbox_task *),
                       bool (*act)(struct each_ctx *, struct cbox_task *, bool),
                       int (*valid)(long arg))
{
	if (kind == WHO_PROCESS) {
		struct cbox_task *t = who ? cbox_task_by_vtid(c->s, (pid_t)who) : NULL;
		if (!t || may(c->task, t))
			return CBOX_SYSRET_CONTINUE; /* the caller, ESRCH, or allowed */
		int r = valid ? valid(arg) : 0;
		return r < 0 ? r : -EPERM;
	}
	struct sel sel;
	int r = sel_of(c, kind == WHO_USER, who, &sel);
	if (r < 0)
		return r;
	struct each_ctx e = {.c = c, .sel = &sel, .may = may};
	if (kind == WHO_PGRP) {
		cbox_task_each(c->s, each_selected, &e);
		if (e.denied == 0)
			return CBOX_SYSRET_CONTINUE;
	}
	r = valid ? valid(arg) : 0;
	if (r < 0)
		return r;
	e = (struct each_ctx){
	    .c = c, .sel = &sel, .may = may, .act = act, .arg = arg, .result = -ESRCH};
	cbox_task_each(c->s, each_selected, &e);
	return e.result;
}

/* getpriority's and ioprio_get's on a user (who 0: the caller's own): act reads each of its
 * threads into the result (-ESRCH when it has none). */
static int64_t read_user(struct cbox_sysctx *c, uint32_t who,
                         bool (*act)(struct each_ctx *, struct cbox_task *, bool))
{
	struct sel sel;
	int r = sel_of(c, true, who, &sel);
	if (r < 0)
		return r;
	struct each_ctx e = {.c = c, .sel = &sel, .may = anyone, .act = act, .result = -ESRCH};
	cbox_task_each(c->s, each_selected, &e);
	return e.result;
}

/* ---- setpriority and getpriority --------------------------------------------------------------
 */

/* set_one_prio on each selected thread, as setpriority's loop runs it: the last failure (EPERM,
 * or the host's EACCES for a raise past the thread's RLIMIT_NICE), else 0, else ESRCH. */
static bool set_one_prio(struct each_ctx *e, struct cbox_task *t, bool allowed)
{
	if (!allowed) {
		e->result = -EPERM;
	} else if (syscall(SYS_setpriority, PRIO_PROCESS, t->tid, (int)e->arg) < 0) {
		e->result = -errno;
	} else if (e->result == -ESRCH) {
		e->result = 0;
	}
	return true;
}

int64_t sys_setpriority(struct cbox_sysctx *c)
{
	int which = IARG(0), nice = IARG(2);
	if (which != PRIO_PROCESS && which != PRIO_PGRP && which != PRIO_USER)
		return CBOX_SYSRET_CONTINUE; /* EINVAL */
	enum who_kind kind = which == PRIO_PROCESS ? WHO_PROCESS
	                     : which == PRIO_PGRP  ? WHO_PGRP
	                                           : WHO_USER;
	return set_for(c, kind, (uint32_t)ARG(1),
	               nice < -20  ? -20
	               : nice > 19 ? 19
	                           : nice,
	               same_owner, set_one_prio, NULL);
}

/* getpriority(PRIO_USER): the highest priority (20 - nice) among the user's threads. */
static bool read_prio(struct each_ctx *e, struct cbox_task *t, bool allowed)
{
	(void)allowed;
	errno = 0;
	long v = syscall(SYS_getpriority, PRIO_PROCESS, t->tid);
	if (v >= 0 && v > e->result)
		e->result = v;
	return true;
}

int64_t sys_getpriority(struct cbox_sysctx *c)
{
	if (IARG(0) != PRIO_USER)
		return CBOX_SYSRET_CONTINUE; /* (only PRIO_USER and the host's EINVAL come here) */
	return read_user(c, (uint32_t)ARG(1), read_prio);
}

/* ---- ioprio_set and ioprio_get ------------------------------------------------------------------
 */

/* ioprio_check_cap's answer for ioprio, from the host: a call on a pid no process can have
 * (past PID_MAX_LIMIT) is checked for its class and level and then finds no process. */
static int ioprio_valid_here(long ioprio)
{
	long r = syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, INT_MAX, (int)ioprio);
	return r < 0 && errno != ESRCH ? -errno : 0;
}

/* set_task_ioprio on each selected thread until the first failure, as ioprio_set's loop. */
static bool set_one_ioprio(struct each_ctx *e, struct cbox_task *t, bool allowed)
{
	if (!allowed)
		e->result = -EPERM;
	else
		e->result = syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, t->tid, (int)e->arg) < 0
		                ? -errno
		                : 0;
	return e->result == 0;
}

int64_t sys_ioprio_set(struct cbox_sysctx *c)
{
	int which = IARG(0);
	if (which != IOPRIO_WHO_PROCESS && which != IOPRIO_WHO_PGRP && which != IOPRIO_WHO_USER)
		return CBOX_SYSRET_CONTINUE; /* EINVAL */
	enum who_kind kind = which == IOPRIO_WHO_PROCESS ? WHO_PROCESS
	                     : which == IOPRIO_WHO_PGRP  ? WHO_PGRP
	                                                 : WHO_USER;
	return set_for(c, kind, (uint32_t)ARG(1), IARG(2), ioprio_owner, set_one_ioprio,
	               ioprio_valid_here);
}

/* ioprio_best: the higher of two priorities, an unset one counting as the default. */
static long ioprio_best(long a, long b)
{
	if ((a >> 13) == IOPRIO_CLASS_NONE)
		a = IOPRIO_DEFAULT;
	if ((b >> 13) == IOPRIO_CLASS_NONE)
		b = IOPRIO_DEFAULT;
	return a < b ? a : b;
}

static bool read_ioprio(struct each_ctx *e, struct cbox_task *t, bool allowed)
{
	(void)allowed;
	long v = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, t->tid);
	if (v >= 0)
		e->result = e->result == -ESRCH ? v : ioprio_best(e->result, v);
	return true;
}

int64_t sys_ioprio_get(struct cbox_sysctx *c)
{
	if (IARG(0) != IOPRIO_WHO_USER)
		return CBOX_SYSRET_CONTINUE; /* (only IOPRIO_WHO_USER and the host's EINVAL come
		                                here) */
	return read_user(c, (uint32_t)ARG(1), read_ioprio);
}

/* ---- sched_setparam, sched_setscheduler, sched_setattr ------------------------------------ */

/* The policy and real-time priority of host task tid (its /proc/TID/stat, fields 41 and 40). */
static int sched_of(pid_t tid, int *policy, unsigned *rt_prio)
{
	char buf[2048];
	const char *f = cbox_task_stat_field(cbox_task_stat_fields(tid, buf, sizeof(buf)), 40);
	return f && sscanf(f, "%u %d", rt_prio, policy) == 2 ? 0 : -ESRCH;
}

static bool rt_policy(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* __checkparam_dl with the kernel's default period bounds (100 us to 4 s). */
static bool dl_params_ok(const struct cbox_sched_attr *a)
{
	if (a->sched_deadline == 0 || a->sched_runtime < (1ULL << 10))
		return false;
	if ((a->sched_deadline & (1ULL << 63)) || (a->sched_period & (1ULL << 63)))
		return false;
	uint64_t period = a->sched_period ? a->sched_period : a->sched_deadline;
	if (period < a->sched_deadline || a->sched_deadline < a->sched_runtime)
		return false;
	return period >= 100000ULL && period <= 4194304000ULL;
}

/*
 * A scheduler change of task t that the caller is not the owner of: __sched_setscheduler's
 * argument checks come first (EINVAL), then Linux refuses it (EPERM). policy < 0 keeps t's own;
 * keep_params takes t's priority.
 */
static int64_t refuse_sched(struct cbox_task *t, int policy, struct cbox_sched_attr *a,
                            bool keep_params)
{
	int cur_policy;
	unsigned cur_prio;
	if (sched_of(t->tid, &cur_policy, &cur_prio) < 0)
		return -ESRCH;
	if (policy < 0)
		policy = cur_policy;
	if (keep_params)
		a->sched_priority = cur_prio;
	if (policy != SCHED_OTHER && !rt_policy(policy) && policy != SCHED_BATCH &&
	    policy != SCHED_IDLE && policy != SCHED_DEADLINE)
		return -EINVAL;
	if (a->sched_flags & ~(uint64_t)(CBOX_SCHED_FLAG_ALL | CBOX_SCHED_FLAG_SUGOV))
		return -EINVAL;
	if (a->sched_priority > 99)
		return -EINVAL;
	if ((policy == SCHED_DEADLINE && !keep_params && !dl_params_ok(a)) ||
	    rt_policy(policy) != (a->sched_priority != 0))
		return -EINVAL;
	return -EPERM;
}

/* The task a sched_set* call names (pid > 0; pid 0 stays on the fast path), when the caller may
 * not change it; NULL when the host's call may run. */
static struct cbox_task *foreign_target(struct cbox_sysctx *c)
{
	struct cbox_task *t = IARG(0) > 0 ? cbox_task_by_vtid(c->s, IARG(0)) : NULL;
	return t && !same_owner(c->task, t) ? t : NULL;
}

int64_t sys_sched_setparam(struct cbox_sysctx *c)
{
	struct cbox_task *t = foreign_target(c);
	struct sched_param p;
	if (!t || !ARG(1) || cbox_sys_read(c, ARG(1), &p, sizeof(p)) < 0)
		return CBOX_SYSRET_CONTINUE; /* allowed, or the host's EINVAL, EFAULT, ESRCH */
	struct cbox_sched_attr a = {.sched_priority = (uint32_t)p.sched_priority};
	return refuse_sched(t, -1, &a, false);
}

int64_t sys_sched_setscheduler(struct cbox_sysctx *c)
{
	struct cbox_task *t = foreign_target(c);
	int policy = IARG(1);
	struct sched_param p;
	if (!t || policy < 0 || !ARG(2) || cbox_sys_read(c, ARG(2), &p, sizeof(p)) < 0)
		return CBOX_SYSRET_CONTINUE;
	struct cbox_sched_attr a = {.sched_priority = (uint32_t)p.sched_priority};
	if (policy & CBOX_SCHED_RESET_ON_FORK) {
		a.sched_flags = 1; /* SCHED_FLAG_RESET_ON_FORK */
		policy &= ~CBOX_SCHED_RESET_ON_FORK;
	}
	return refuse_sched(t, policy, &a, false);
}

int64_t sys_sched_setattr(struct cbox_sysctx *c)
{
	struct cbox_task *t = foreign_target(c);
	if (!t || !ARG(1) || ARG(2) != 0)
		return CBOX_SYSRET_CONTINUE;
	/* sched_copy_attr: a size of 0 is the first version's; E2BIG and EFAULT first. */
	uint32_t size;
	if (cbox_sys_read(c, ARG(1), &size, sizeof(size)) < 0)
		return CBOX_SYSRET_CONTINUE;
	if (size == 0)
		size = CBOX_SCHED_ATTR_SIZE_VER0;
	struct cbox_sched_attr a;
	if (size < CBOX_SCHED_ATTR_SIZE_VER0 || size > CBOX_PAGE ||
	    cbox_sys_read_sized(c, ARG(1), size, &a, sizeof(a)) < 0 ||
	    ((a.sched_flags & CBOX_SCHED_FLAG_UTIL_CLAMP) && size < CBOX_SCHED_ATTR_SIZE_VER1) ||
	    (int32_t)a.sched_policy < 0)
		return CBOX_SYSRET_CONTINUE; /* E2BIG, EFAULT, EINVAL before the task */
	int policy = (a.sched_flags & CBOX_SCHED_FLAG_KEEP_POLICY) ? -1 : (int)a.sched_policy;
	return refuse_sched(t, policy, &a, a.sched_flags & CBOX_SCHED_FLAG_KEEP_PARAMS);
}
