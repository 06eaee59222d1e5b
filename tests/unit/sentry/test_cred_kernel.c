/*
 * The sentry's credentials (sentry/cred.c) against the kernel's own rules, differentially: each
 * row of `scenarios` runs for real in a forked root child (set*id, setfs*id, setgroups, capset,
 * PR_SET_KEEPCAPS, an exec of this binary) and through the cbox_cred_* calls in the parent;
 * every return value, id, group and emulated capability must agree. It needs root in the
 * initial user namespace (where every id is mapped, as the model's all_ids mode); it skips
 * otherwise unless CBOX_TESTS_MUST_WORK=1. test_cred.c has what one real process cannot show.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/compiler.h"
#include "cbox/cred.h"

#define NO         0xffffffffu /* (uint32_t)-1: "unchanged", or an unmapped id */
#define CAP(name)  CBOX_CAP_BIT(CAP_##name)
#define EMUL       CBOX_CAP_EMULATED
#define SUGID      (CAP(SETUID) | CAP(SETGID))
#define MAX_OPS    5
#define MAX_GROUPS 4
#define REPORT_ENV "CBOX_TEST_CRED_REPORT_FD"

enum op_kind {
	OP_END,
	OP_SETUID,
	OP_SETREUID,
	OP_SETRESUID,
	OP_SETGID,
	OP_SETREGID,
	OP_SETRESGID,
	OP_SETFSUID,
	OP_SETFSGID,
	OP_SETGROUPS,
	OP_CAPSET,   /* v: effective, permitted, inheritable */
	OP_KEEPCAPS, /* v[0]: PR_SET_KEEPCAPS's argument */
	OP_EXEC,     /* an exec of a file without set-id bits or capabilities; last op only */
};

struct op {
	enum op_kind k;
	uint64_t v[3];
	uint32_t n, g[MAX_GROUPS]; /* setgroups */
};

/* clang-format off */
#define SETUID(u)             {.k = OP_SETUID, .v = {u}}
#define SETREUID(r, e)        {.k = OP_SETREUID, .v = {r, e}}
#define SETRESUID(r, e, s)    {.k = OP_SETRESUID, .v = {r, e, s}}
#define SETGID(g)             {.k = OP_SETGID, .v = {g}}
#define SETREGID(r, e)        {.k = OP_SETREGID, .v = {r, e}}
#define SETRESGID(r, e, s)    {.k = OP_SETRESGID, .v = {r, e, s}}
#define SETFSUID(u)           {.k = OP_SETFSUID, .v = {u}}
#define SETFSGID(g)           {.k = OP_SETFSGID, .v = {g}}
#define SETGROUPS(...)        {.k = OP_SETGROUPS, .g = {__VA_ARGS__}, \
                               .n = sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)}
#define SETGROUPS_NONE        {.k = OP_SETGROUPS}
#define CAPSET(eff, prm, inh) {.k = OP_CAPSET, .v = {eff, prm, inh}}
#define KEEPCAPS(on)          {.k = OP_KEEPCAPS, .v = {on}}
#define EXEC                  {.k = OP_EXEC}
/* clang-format on */

/*
 * One scenario: from root (ids 0, no groups, permitted = effective = the bounding set minus
 * bset_drop, restricted to the emulated capabilities), apply ops.
 */
struct scenario {
	/* Arrays, not pointers: Criterion copies the rows into each test's process. */
	char name[112];
	uint64_t bset_drop;
	struct op ops[MAX_OPS];
};

/* clang-format off */
#define ROW(nm, ...)              {.name = (nm), .ops = {__VA_ARGS__}}
#define ROW_BSET(nm, drop, ...)   {.name = (nm), .ops = {__VA_ARGS__}, .bset_drop = (drop)}
/* clang-format on */

static struct scenario scenarios[] = {
    /* User ids. */
    ROW("setuid(1000) from root drops every capability", SETUID(1000)),
    ROW("setuid(1000) with keepcaps keeps the permitted set", KEEPCAPS(1), SETUID(1000)),
    ROW("setuid(1000) then setuid(0) is EPERM", SETUID(1000), SETUID(0)),
    ROW("setuid(0) as root", SETUID(0)),
    ROW("setuid(-1) is EINVAL", SETUID(NO)),
    ROW("setuid(-1) unprivileged is EINVAL", SETUID(1000), SETUID(NO)),
    ROW("seteuid(1000), seteuid(0) by setreuid: saved follows, effective set restored",
        SETREUID(NO, 1000), SETREUID(NO, 0)),
    ROW("seteuid(1000), seteuid(0) by setresuid", SETRESUID(NO, 1000, NO), SETRESUID(NO, 0, NO)),
    ROW("setresuid(1000,1000,0) then setuid(0) sets only the effective id",
        SETRESUID(1000, 1000, 0), SETUID(0)),
    ROW("setresuid(1000,1000,0) then setuid(2000) is EPERM", SETRESUID(1000, 1000, 0),
        SETUID(2000)),
    ROW("setreuid(1000,-1): the saved id takes the effective 0", SETREUID(1000, NO)),
    ROW("setreuid(1000,2000) drops the capabilities", SETREUID(1000, 2000)),
    ROW("setreuid(-1,0) back to the real id leaves the saved id", SETRESUID(NO, 1000, 1000),
        SETREUID(NO, 0)),
    ROW("setreuid(-1,-1) resets the fs uid", SETFSUID(1000), SETREUID(NO, NO)),
    ROW("unprivileged setreuid swaps real and effective", SETRESUID(1000, 2000, 2000),
        SETREUID(2000, 1000)),
    ROW("unprivileged setreuid: the real id to the saved one is EPERM", SETRESUID(1000, 2000, 1001),
        SETREUID(1001, NO)),
    ROW("unprivileged setreuid(-1, saved) moves the saved id", SETRESUID(1000, 2000, 1001),
        SETREUID(NO, 1001)),
    ROW("unprivileged setuid to the saved id", SETRESUID(1000, 2000, 1001), SETUID(1001)),
    ROW("unprivileged setresuid to an id not held is EPERM", SETRESUID(1000, 1000, 1000),
        SETRESUID(2000, NO, NO)),
    ROW("unprivileged setresuid permutes its ids", SETRESUID(1000, 2000, 1001),
        SETRESUID(1001, 1000, 2000)),
    /* Linux 6.x returns early from a setres*id that changes nothing: the fs id stays. */
    ROW("setresuid(-1,-1,-1) after setfsuid(1000) keeps the fs uid", SETFSUID(1000),
        SETRESUID(NO, NO, NO)),
    ROW("setresuid(0,-1,0) after setfsuid(1000) keeps the fs uid", SETFSUID(1000),
        SETRESUID(0, NO, 0)),
    ROW("setresuid(-1,0,-1) after setfsuid(1000) resets the fs uid", SETFSUID(1000),
        SETRESUID(NO, 0, NO)),
    ROW("leaving uid 0 drops the permitted set only when no id is 0", SETRESUID(1000, NO, NO),
        SETRESUID(NO, NO, 1000), SETRESUID(NO, 1000, NO)),
    ROW("setresuid(0,1000,0) then setfsuid(0) raises the fs capabilities", SETRESUID(0, 1000, 0),
        SETFSUID(0)),

    /* Group ids. */
    ROW("setgid(1000) from root", SETGID(1000)),
    ROW("setgid(-1) is EINVAL", SETGID(NO)),
    ROW("setgid without CAP_SETGID is EPERM", CAPSET(EMUL & ~CAP(SETGID), EMUL & ~CAP(SETGID), 0),
        SETGID(1000)),
    ROW("setregid(1000,2000)", SETREGID(1000, 2000)),
    ROW("setregid(-1,1000): the saved gid follows", SETREGID(NO, 1000)),
    ROW("setresgid(1000,-1,2000)", SETRESGID(1000, NO, 2000)),
    ROW("unprivileged setregid: the real gid to the saved one is EPERM",
        SETRESGID(1000, 1001, 2000), SETUID(1000), SETREGID(2000, NO)),
    ROW("unprivileged setresgid permutes its ids", SETRESGID(1000, 1001, 2000), SETUID(1000),
        SETRESGID(2000, 1000, 1001)),
    ROW("unprivileged setgid to the saved gid", SETRESGID(1000, 1001, 2000), SETUID(1000),
        SETGID(2000)),
    ROW("unprivileged setgid to a gid not held is EPERM", SETRESGID(1000, 1001, 2000), SETUID(1000),
        SETGID(3000)),
    ROW("setresgid(-1,-1,-1) after setfsgid(1000) keeps the fs gid", SETFSGID(1000),
        SETRESGID(NO, NO, NO)),
    ROW("setresgid(-1,0,-1) after setfsgid(1000) resets the fs gid", SETFSGID(1000),
        SETRESGID(NO, 0, NO)),

    /* File system ids. */
    ROW("setfsuid(1000) drops the fs capabilities, setfsuid(0) restores them", SETFSUID(1000),
        SETFSUID(0)),
    ROW("unprivileged setfsuid to an id not held is refused", SETUID(1000), SETFSUID(0),
        SETFSUID(2000)),
    ROW("unprivileged setfsuid to the saved id", SETRESUID(1000, 2000, 1001), SETFSUID(1001)),
    ROW("setuid(0) after setfsuid(1000) leaves the fs capabilities off", SETFSUID(1000), SETUID(0)),
    ROW("setfsgid(1000) then setfsgid(-1)", SETFSGID(1000), SETFSGID(NO)),
    ROW("setfsgid without CAP_SETGID is refused",
        CAPSET(EMUL & ~CAP(SETGID), EMUL & ~CAP(SETGID), 0), SETFSGID(2000)),

    /* Supplementary groups. */
    ROW("setgroups sorts the groups", SETGROUPS(2000, 1000, 1001)),
    ROW("setgroups keeps a duplicate, as Linux", SETGROUPS(1001, 1000, 1001)),
    ROW("setgroups(0) empties the groups", SETGROUPS(1000, 2000), SETGROUPS_NONE),
    ROW("setgroups without CAP_SETGID is EPERM", SETUID(1000), SETGROUPS(1000)),
    ROW("setgroups with -1 is EINVAL", SETGROUPS(1000, NO)),
    ROW("setgroups as uid 1000 with CAP_SETGID kept and raised", KEEPCAPS(1), SETUID(1000),
        CAPSET(EMUL, EMUL, 0), SETGROUPS(2000)),

    /* capset and PR_SET_KEEPCAPS. */
    ROW("capset drops to CAP_SETUID and CAP_SETGID", CAPSET(SUGID, SUGID, 0)),
    ROW("capset cannot raise the permitted set", CAPSET(SUGID, SUGID, 0), CAPSET(EMUL, EMUL, 0)),
    ROW("capset: effective outside permitted is EPERM", CAPSET(EMUL, SUGID, 0)),
    ROW("capset: inheritable within permitted", CAPSET(EMUL, EMUL, CAP(DAC_OVERRIDE))),
    ROW("capset: inheritable beyond permitted is EPERM", CAPSET(SUGID, SUGID, 0),
        CAPSET(SUGID, SUGID, CAP(CHOWN))),
    ROW("capset: inheritable kept after permitted drops it", CAPSET(EMUL, EMUL, CAP(CHOWN)),
        CAPSET(SUGID, SUGID, CAP(CHOWN))),
    ROW_BSET("capset: inheritable outside the bounding set is EPERM", CAP(CHOWN),
             CAPSET(EMUL & ~CAP(CHOWN), EMUL & ~CAP(CHOWN), CAP(CHOWN))),
    ROW("no effective CAP_SETUID: setuid(1000) is EPERM", CAPSET(0, EMUL, 0), SETUID(1000)),
    ROW("effective set emptied, seteuid(1000), seteuid(0) restores it from permitted",
        CAPSET(0, EMUL, 0), SETRESUID(NO, 1000, NO), SETRESUID(NO, 0, NO)),
    ROW("keepcaps, setuid(1000), capset raises effective, setuid(0) is root again", KEEPCAPS(1),
        SETUID(1000), CAPSET(EMUL, EMUL, 0), SETUID(0)),
    ROW("keepcaps set and cleared before setuid(1000)", KEEPCAPS(1), KEEPCAPS(0), SETUID(1000)),

    /* exec. */
    ROW("exec as root regains the bounding set", CAPSET(SUGID, SUGID, 0), EXEC),
    ROW_BSET("exec as root with a smaller bounding set", CAP(DAC_OVERRIDE) | CAP(FOWNER), EXEC),
    ROW("exec after keepcaps and setuid(1000) loses everything", KEEPCAPS(1), SETUID(1000), EXEC),
    ROW("exec with real uid 0 only: permitted, not effective", SETRESUID(0, 1000, 0), EXEC),
    ROW("exec with effective uid 0 only", SETRESUID(1000, 0, 1000), EXEC),
    ROW("exec: saved and fs ids follow the effective ones", SETRESGID(1000, 2000, 0),
        SETFSGID(1001), SETRESUID(0, 0, 1000), SETFSUID(1001), EXEC),
    ROW("exec as root clears keepcaps and keeps the inheritable set",
        CAPSET(EMUL, EMUL, CAP(CHOWN)), KEEPCAPS(1), EXEC),
    ROW("exec as uid 1000 with an inheritable set gets nothing", CAPSET(EMUL, EMUL, CAP(CHOWN)),
        SETUID(1000), EXEC),
};

/* What a scenario leaves: the credentials as get*id, getgroups, capget and prctl show them. */
struct state {
	uint32_t uid, euid, suid, fsuid;
	uint32_t gid, egid, sgid, fsgid;
	uint32_t ngroups, groups[2 * MAX_GROUPS];
	uint64_t eff, prm, inh;
	int32_t keepcaps;
};

struct results {
	int64_t ret[MAX_OPS]; /* 0 or -errno; the old id for setfs*id */
};

static int count_ops(const struct scenario *s)
{
	int n = 0;
	while (n < MAX_OPS && s->ops[n].k != OP_END)
		n++;
	return n;
}

/* --- The kernel's side ------------------------------------------------------------------------ */

struct caps {
	uint64_t eff, prm, inh;
};

static int real_capget(struct caps *c)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int real_capset(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {
	    {(uint32_t)eff, (uint32_t)prm, (uint32_t)inh},
	    {(uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32)},
	};
	return (int)syscall(SYS_capset, &h, d);
}

/* The emulated part of the bounding set. */
static uint64_t real_bset(void)
{
	uint64_t b = 0;
	for (int cap = 0; cap < 64; cap++)
		if ((EMUL & CBOX_CAP_BIT(cap)) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			b |= CBOX_CAP_BIT(cap);
	return b;
}

static void real_state(struct state *st)
{
	memset(st, 0, sizeof(*st));
	getresuid(&st->uid, &st->euid, &st->suid);
	getresgid(&st->gid, &st->egid, &st->sgid);
	st->fsuid = (uint32_t)setfsuid(NO); /* an invalid id: only returns the current one */
	st->fsgid = (uint32_t)setfsgid(NO);
	gid_t g[2 * MAX_GROUPS];
	int n = getgroups((int)CBOX_ARRAY_SIZE(g), g);
	st->ngroups = n < 0 ? NO : (uint32_t)n;
	for (int i = 0; i < n; i++)
		st->groups[i] = g[i];
	struct caps c = {NO, NO, NO};
	real_capget(&c);
	st->eff = c.eff & EMUL;
	st->prm = c.prm & EMUL;
	st->inh = c.inh & EMUL;
	st->keepcaps = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, len -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r, len -= (size_t)r;
	}
	return 0;
}

/* The EXEC op re-executes this binary with REPORT_ENV set: the new image reports its state
 * before Criterion's main ever runs. */
__attribute__((constructor)) static void report_after_exec(void)
{
	const char *fd = getenv(REPORT_ENV);
	if (!fd)
		return;
	struct state st;
	real_state(&st);
	_exit(write_all(atoi(fd), &st, sizeof(st)) < 0 ? 3 : 0);
}

static int64_t real_op(const struct op *o)
{
	gid_t g[MAX_GROUPS];
	int r = -1;
	switch (o->k) {
	case OP_SETUID:
		r = setuid((uid_t)o->v[0]);
		break;
	case OP_SETREUID:
		r = setreuid((uid_t)o->v[0], (uid_t)o->v[1]);
		break;
	case OP_SETRESUID:
		r = setresuid((uid_t)o->v[0], (uid_t)o->v[1], (uid_t)o->v[2]);
		break;
	case OP_SETGID:
		r = setgid((gid_t)o->v[0]);
		break;
	case OP_SETREGID:
		r = setregid((gid_t)o->v[0], (gid_t)o->v[1]);
		break;
	case OP_SETRESGID:
		r = setresgid((gid_t)o->v[0], (gid_t)o->v[1], (gid_t)o->v[2]);
		break;
	case OP_SETFSUID:
		return (uint32_t)setfsuid((uid_t)o->v[0]);
	case OP_SETFSGID:
		return (uint32_t)setfsgid((gid_t)o->v[0]);
	case OP_SETGROUPS:
		for (uint32_t i = 0; i < o->n; i++)
			g[i] = o->g[i];
		r = setgroups(o->n, g);
		break;
	case OP_CAPSET:
		r = real_capset(o->v[0], o->v[1], o->v[2]);
		break;
	case OP_KEEPCAPS:
		r = prctl(PR_SET_KEEPCAPS, o->v[0], 0, 0, 0);
		break;
	case OP_END:
	case OP_EXEC:
		errno = ENOSYS;
		break;
	}
	return r < 0 ? -errno : r;
}

/*
 * The starting state, as the model's cbox_cred_new(0, 0, NULL, 0, bset, true): ids 0, no groups,
 * no keepcaps, permitted = effective = bset, nothing inheritable. The capabilities outside the
 * emulated ones go too: the model's root has none of them, and one (CAP_SETPCAP) would change
 * capset's inheritable rule.
 */
static int real_setup(const struct scenario *s, uint64_t bset)
{
	for (int cap = 0; cap < 64; cap++)
		if ((s->bset_drop & CBOX_CAP_BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return -1;
	if (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return -1;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return -1;
	return real_capset(bset, bset, 0);
}

/* The child: the scenario for real; results, then the state, down fd. Never returns. */
CBOX_NORETURN static void real_run(const struct scenario *s, uint64_t bset, int fd, const char *exe)
{
	if (real_setup(s, bset) < 0)
		_exit(10);
	struct results r = {{0}};
	int n = count_ops(s);
	bool exec = n > 0 && s->ops[n - 1].k == OP_EXEC;
	for (int i = 0; i < n - exec; i++)
		r.ret[i] = real_op(&s->ops[i]);
	if (write_all(fd, &r, sizeof(r)) < 0)
		_exit(11);
	if (exec) {
		char env[64];
		snprintf(env, sizeof(env), REPORT_ENV "=%d", fd);
		char *argv[] = {(char *)exe, NULL}, *envp[] = {env, NULL};
		execve(exe, argv, envp);
		_exit(12);
	}
	struct state st;
	real_state(&st);
	_exit(write_all(fd, &st, sizeof(st)) < 0 ? 11 : 0);
}

/* --- The model's side ------------------------------------------------------------------------- */

static int64_t model_op(struct cbox_cred **c, const struct op *o)
{
	switch (o->k) {
	case OP_SETUID:
		return cbox_cred_setuid(c, (uint32_t)o->v[0]);
	case OP_SETREUID:
		return cbox_cred_setreuid(c, (uint32_t)o->v[0], (uint32_t)o->v[1]);
	case OP_SETRESUID:
		return cbox_cred_setresuid(c, (uint32_t)o->v[0], (uint32_t)o->v[1],
		                           (uint32_t)o->v[2]);
	case OP_SETGID:
		return cbox_cred_setgid(c, (uint32_t)o->v[0]);
	case OP_SETREGID:
		return cbox_cred_setregid(c, (uint32_t)o->v[0], (uint32_t)o->v[1]);
	case OP_SETRESGID:
		return cbox_cred_setresgid(c, (uint32_t)o->v[0], (uint32_t)o->v[1],
		                           (uint32_t)o->v[2]);
	case OP_SETFSUID:
		return cbox_cred_setfsuid(c, (uint32_t)o->v[0]);
	case OP_SETFSGID:
		return cbox_cred_setfsgid(c, (uint32_t)o->v[0]);
	case OP_SETGROUPS:
		return cbox_cred_setgroups(c, o->g, o->n);
	case OP_CAPSET:
		return cbox_cred_capset(c, o->v[0], o->v[1], o->v[2]);
	case OP_KEEPCAPS:
		return cbox_cred_set_keepcaps(c, o->v[0] != 0);
	case OP_EXEC:
		return cbox_cred_exec(c);
	case OP_END:
		break;
	}
	return -ENOSYS;
}

static void model_run(const struct scenario *s, uint64_t bset, struct results *r, struct state *st)
{
	struct cbox_cred *c = cbox_cred_new(0, 0, NULL, 0, bset, true);
	cr_assert_not_null(c);
	memset(r, 0, sizeof(*r));
	int n = count_ops(s);
	for (int i = 0; i < n; i++)
		r->ret[i] = s->ops[i].k == OP_EXEC ? 0 : model_op(&c, &s->ops[i]);
	if (n > 0 && s->ops[n - 1].k == OP_EXEC)
		cr_assert_eq(model_op(&c, &s->ops[n - 1]), 0);
	*st = (struct state){
	    .uid = c->uid,
	    .euid = c->euid,
	    .suid = c->suid,
	    .fsuid = c->fsuid,
	    .gid = c->gid,
	    .egid = c->egid,
	    .sgid = c->sgid,
	    .fsgid = c->fsgid,
	    .ngroups = c->ngroups,
	    .eff = c->cap_eff,
	    .prm = c->cap_prm,
	    .inh = c->cap_inh,
	    .keepcaps = c->keepcaps,
	};
	for (uint32_t i = 0; i < c->ngroups && i < CBOX_ARRAY_SIZE(st->groups); i++)
		st->groups[i] = c->groups[i];
	cbox_cred_put(c);
}

/* --- The comparison --------------------------------------------------------------------------- */

static void skip_or_fail(const char *why)
{
	const char *must = getenv("CBOX_TESTS_MUST_WORK");
	if (must && strcmp(must, "1") == 0)
		cr_assert_fail("%s (CBOX_TESTS_MUST_WORK=1)", why);
	cr_skip_test("%s", why);
}

/* Whether /proc/self/<file> maps every id to itself, as in the initial user namespace. */
static bool identity_map(const char *file)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/%s", file);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	unsigned long inside = 1, outside = 1, count = 0;
	int got = fscanf(f, "%lu %lu %lu", &inside, &outside, &count);
	fclose(f);
	return got == 3 && inside == 0 && outside == 0 && count == 4294967295UL;
}

static void need_real_root(const struct scenario *s, uint64_t bset)
{
	struct caps c = {0};
	if (geteuid() != 0)
		skip_or_fail("the kernel side needs root: run the tests as root");
	if (!identity_map("uid_map") || !identity_map("gid_map"))
		skip_or_fail("the kernel side needs the initial user namespace (every id mapped)");
	if (real_capget(&c) < 0 || (c.prm & bset) != bset)
		skip_or_fail("root here lacks permitted capabilities that its bounding set holds");
	int n = count_ops(s);
	if (n > 0 && s->ops[n - 1].k == OP_EXEC && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		skip_or_fail("no_new_privs is set here: an exec could not regain capabilities");
}

#define SAME(f, fmt)                                                                               \
	cr_expect_eq(ks->f, ms->f, "%s: " #f " is " fmt " in the kernel, " fmt " in the model",    \
	             s->name, ks->f, ms->f)

static void compare(const struct scenario *s, const struct results *kr, const struct state *ks,
                    const struct results *mr, const struct state *ms)
{
	for (int i = 0; i < count_ops(s); i++)
		cr_expect_eq(kr->ret[i], mr->ret[i],
		             "%s: op %d returns %lld in the kernel, %lld in the model", s->name,
		             i + 1, (long long)kr->ret[i], (long long)mr->ret[i]);
	SAME(uid, "%u");
	SAME(euid, "%u");
	SAME(suid, "%u");
	SAME(fsuid, "%u");
	SAME(gid, "%u");
	SAME(egid, "%u");
	SAME(sgid, "%u");
	SAME(fsgid, "%u");
	SAME(eff, "%#" PRIx64);
	SAME(prm, "%#" PRIx64);
	SAME(inh, "%#" PRIx64);
	SAME(keepcaps, "%d");
	SAME(ngroups, "%u");
	for (uint32_t i = 0; i < ks->ngroups && i < ms->ngroups && i < 2 * MAX_GROUPS; i++)
		cr_expect_eq(ks->groups[i], ms->groups[i],
		             "%s: group %u is %u in the kernel, %u in the model", s->name, i,
		             ks->groups[i], ms->groups[i]);
}

ParameterizedTestParameters(cred_kernel, scenario)
{
	return cr_make_param_array(struct scenario, scenarios, CBOX_ARRAY_SIZE(scenarios));
}

ParameterizedTest(struct scenario *s, cred_kernel, scenario)
{
	uint64_t bset = real_bset() & ~s->bset_drop;
	need_real_root(s, bset);
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(len, 0, "readlink /proc/self/exe: %s", strerror(errno));
	exe[len] = '\0';

	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		real_run(s, bset, p[1], exe);
	}
	close(p[1]);
	struct results kr, mr;
	struct state ks, ms;
	bool got = read_all(p[0], &kr, sizeof(kr)) == 0 && read_all(p[0], &ks, sizeof(ks)) == 0;
	close(p[0]);
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(
	    WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "%s: the kernel's child failed (status %#x: 10 setup, 11 write, 12 exec, 3 report)",
	    s->name, st);
	cr_assert(got, "%s: the kernel's child sent a short report", s->name);
	model_run(s, bset & EMUL, &mr, &ms);
	compare(s, &kr, &ks, &mr, &ms);
}

/*
 * Who may signal whom (cbox_cred_may_signal, Linux's kill_ok_by_cred), differentially: a target
 * child takes ids t, a sender child takes ids s (both from root, so the capability transitions
 * are the kernel's), and kill(target, 0) must succeed or fail with EPERM as the model says.
 */
struct kill_case {
	char name[96];
	uint32_t s[3], t[3]; /* real, effective, saved uids */
};

static struct kill_case kill_cases[] = {
    {"same user", {1000, 1000, 1000}, {1000, 1000, 1000}},
    {"another user", {1000, 1000, 1000}, {2000, 2000, 2000}},
    {"a user to root", {1000, 1000, 1000}, {0, 0, 0}},
    {"root (CAP_KILL) to a user", {0, 0, 0}, {2000, 2000, 2000}},
    {"the sender's effective uid is the target's real uid", {1000, 2000, 2000}, {2000, 2000, 2000}},
    {"the sender's saved uid does not count", {2000, 2000, 1000}, {1000, 1000, 1000}},
    {"the target's saved uid counts", {1000, 1000, 1000}, {3000, 3000, 1000}},
    {"the target's effective uid does not count", {1000, 1000, 1000}, {3000, 1000, 3000}},
    {"effective uid 0 keeps CAP_KILL", {1000, 0, 0}, {2000, 2000, 2000}},
    {"real uid 0 without capabilities", {0, 1000, 0}, {2000, 2000, 2000}},
    {"real uid 0 to root", {0, 1000, 0}, {0, 0, 0}},
};

ParameterizedTestParameters(cred_kernel, signal)
{
	return cr_make_param_array(struct kill_case, kill_cases, CBOX_ARRAY_SIZE(kill_cases));
}

ParameterizedTest(struct kill_case *k, cred_kernel, signal)
{
	static const struct scenario none = {.name = "signal"};
	need_real_root(&none, real_bset());
	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	pid_t target = fork();
	cr_assert_geq(target, 0);
	if (target == 0) {
		close(ready[0]);
		if (setresuid(k->t[0], k->t[1], k->t[2]) < 0)
			_exit(10);
		if (write(ready[1], "r", 1) != 1)
			_exit(11);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "%s: the target could not take its ids", k->name);
	close(ready[0]);
	pid_t sender = fork();
	cr_assert_geq(sender, 0);
	if (sender == 0) {
		if (setresuid(k->s[0], k->s[1], k->s[2]) < 0)
			_exit(10);
		_exit(kill(target, 0) == 0 ? 0 : errno == EPERM ? 1 : 12);
	}
	int st = 0;
	cr_assert_eq(waitpid(sender, &st, 0), sender);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "%s: the sender failed (status %#x)",
	          k->name, st);
	bool kernel_allows = WEXITSTATUS(st) == 0;

	struct cbox_cred *s = cbox_cred_new(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *t = cbox_cred_new(0, 0, NULL, 0, EMUL, true);
	cr_assert(s && t);
	cr_assert_eq(cbox_cred_setresuid(&s, k->s[0], k->s[1], k->s[2]), 0);
	cr_assert_eq(cbox_cred_setresuid(&t, k->t[0], k->t[1], k->t[2]), 0);
	cr_expect_eq(cbox_cred_may_signal(s, t), kernel_allows, "%s: the kernel %s, the model %s",
	             k->name, kernel_allows ? "allows" : "refuses",
	             cbox_cred_may_signal(s, t) ? "allows" : "refuses");
	cbox_cred_put(s);
	cbox_cred_put(t);
}
