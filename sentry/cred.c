/*
 * Guest credentials (cbox/cred.h): Linux's rules from kernel/sys.c (set*id), kernel/groups.c,
 * kernel/capability.c and security/commoncap.c, for the ids and capabilities the sentry
 * emulates. Pure logic: nothing here talks to the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cbox/cred.h"

#define NO_ID ((uint32_t)-1)

static size_t size_of(uint32_t ngroups)
{
	return sizeof(struct cbox_cred) + (size_t)ngroups * sizeof(uint32_t);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort, keeping duplicates as Linux's groups_sort does (getgroups gives them back). */
static uint32_t sort_groups(uint32_t *g, size_t n)
{
	if (n > 1)
		qsort(g, n, sizeof(*g), cmp_u32);
	return (uint32_t)n;
}

/* Exec's capability rule for a process without file capabilities (cap_bprm_creds_from_file):
 * a root process (real or effective uid 0) gets the bounding set (and what it inherits) as
 * permitted, effective only with effective uid 0; anyone else gets nothing. */
static void exec_caps(struct cbox_cred *c)
{
	if (c->uid == 0 || c->euid == 0)
		c->cap_prm = (c->cap_inh | c->cap_bnd) & CBOX_CAP_EMULATED;
	else
		c->cap_prm = 0;
	c->cap_eff = c->euid == 0 ? c->cap_prm : 0;
	c->keepcaps = false;
}

struct cbox_cred *cbox_cred_new(uint32_t uid, uint32_t gid, const uint32_t *groups, size_t n,
                                uint64_t bset, bool all_ids)
{
	if (n > CBOX_NGROUPS_MAX)
		return NULL;
	struct cbox_cred *c = calloc(1, size_of((uint32_t)n));
	if (!c)
		return NULL;
	c->refs = 1;
	c->uid = c->euid = c->suid = c->fsuid = uid;
	c->gid = c->egid = c->sgid = c->fsgid = gid;
	c->cap_bnd = bset & CBOX_CAP_EMULATED;
	c->all_ids = all_ids;
	if (n)
		memcpy(c->groups, groups, n * sizeof(uint32_t));
	c->ngroups = sort_groups(c->groups, n);
	exec_caps(c);
	return c;
}

struct cbox_cred *cbox_cred_get(struct cbox_cred *c)
{
	c->refs++;
	return c;
}

void cbox_cred_put(struct cbox_cred *c)
{
	if (c && --c->refs == 0)
		free(c);
}

/* A private copy of *cp with room for ngroups groups (the old ones copied up to that many). */
static struct cbox_cred *prepare(const struct cbox_cred *old, uint32_t ngroups)
{
	struct cbox_cred *c = malloc(size_of(ngroups));
	if (!c)
		return NULL;
	memcpy(c, old, sizeof(*c));
	memcpy(c->groups, old->groups,
	       (size_t)(ngroups < old->ngroups ? ngroups : old->ngroups) * sizeof(uint32_t));
	c->refs = 1;
	return c;
}

static void commit(struct cbox_cred **cp, struct cbox_cred *c)
{
	cbox_cred_put(*cp);
	*cp = c;
}

bool cbox_cred_id_valid(const struct cbox_cred *c, uint32_t id)
{
	if (id == NO_ID)
		return false;
	return c->all_ids || id != CBOX_UNMAPPED_ID;
}

bool cbox_cred_capable(const struct cbox_cred *c, int cap)
{
	return cap >= 0 && cap < 64 && (c->cap_eff & CBOX_CAP_BIT(cap));
}

bool cbox_cred_in_group(const struct cbox_cred *c, uint32_t gid)
{
	if (gid == c->fsgid)
		return true;
	size_t lo = 0, hi = c->ngroups;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->groups[mid] == gid)
			return true;
		if (c->groups[mid] < gid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* With one host id, a file of another host user is unmapped: no capability applies to it
 * (Linux's capable_wrt_inode_uidgid). This is what keeps the guest's root, whose capabilities
 * the host never sees, from the files of the host's other users where the gofer runs as host
 * root (cbox-run run as root): the host would not stop it there. */
static bool mapped_owner(const struct cbox_cred *c, uint32_t uid, uint32_t gid)
{
	return c->all_ids || (uid != CBOX_UNMAPPED_ID && gid != CBOX_UNMAPPED_ID);
}

bool cbox_cred_capable_wrt(const struct cbox_cred *c, int cap, uint32_t uid, uint32_t gid)
{
	return mapped_owner(c, uid, gid) && cbox_cred_capable(c, cap);
}

int cbox_cred_permission(const struct cbox_cred *c, uint32_t mode, uint32_t uid, uint32_t gid,
                         int mask)
{
	unsigned want = (unsigned)mask & 7;
	unsigned bits = c->fsuid == uid ? mode >> 6 : cbox_cred_in_group(c, gid) ? mode >> 3 : mode;
	if ((bits & want) == want)
		return 0;
	bool mapped = mapped_owner(c, uid, gid);
	bool is_dir = (mode & 0170000) == 0040000;
	if (is_dir) {
		if (!(want & W_OK) && mapped && cbox_cred_capable(c, CAP_DAC_READ_SEARCH))
			return 0;
		return mapped && cbox_cred_capable(c, CAP_DAC_OVERRIDE) ? 0 : -EACCES;
	}
	if (want == R_OK && mapped && cbox_cred_capable(c, CAP_DAC_READ_SEARCH))
		return 0;
	/* Not even CAP_DAC_OVERRIDE executes a file no one may execute. */
	if ((!(want & X_OK) || (mode & 0111)) && mapped && cbox_cred_capable(c, CAP_DAC_OVERRIDE))
		return 0;
	return -EACCES;
}

bool cbox_cred_may_signal(const struct cbox_cred *sender, const struct cbox_cred *target)
{
	if (sender->euid == target->suid || sender->euid == target->uid ||
	    sender->uid == target->suid || sender->uid == target->uid)
		return true;
	return cbox_cred_capable(sender, CAP_KILL);
}

/* The id test of Linux's __ptrace_may_access and check_prlimit_permission: the caller's uid and
 * gid are each of the target's real, effective and saved ones. */
static bool ids_all_match(uint32_t uid, uint32_t gid, const struct cbox_cred *t)
{
	return uid == t->uid && uid == t->euid && uid == t->suid && gid == t->gid &&
	       gid == t->egid && gid == t->sgid;
}

bool cbox_cred_may_ptrace(const struct cbox_cred *caller, const struct cbox_cred *target,
                          bool fscreds)
{
	if (fscreds ? ids_all_match(caller->fsuid, caller->fsgid, target)
	            : ids_all_match(caller->uid, caller->gid, target))
		return true;
	return cbox_cred_capable(caller, CAP_SYS_PTRACE);
}

bool cbox_cred_may_prlimit(const struct cbox_cred *caller, const struct cbox_cred *target)
{
	return ids_all_match(caller->uid, caller->gid, target) ||
	       cbox_cred_capable(caller, CAP_SYS_RESOURCE);
}

bool cbox_cred_same_owner(const struct cbox_cred *caller, const struct cbox_cred *target)
{
	return caller->euid == target->euid || caller->euid == target->uid ||
	       cbox_cred_capable(caller, CAP_SYS_NICE);
}

bool cbox_cred_owner(const struct cbox_cred *c, uint32_t uid)
{
	if (c->fsuid == uid)
		return true;
	return (c->all_ids || uid != CBOX_UNMAPPED_ID) && cbox_cred_capable(c, CAP_FOWNER);
}

/* cap_emulate_setxuid: leaving uid 0 in all three ids drops the permitted and effective sets
 * (unless PR_SET_KEEPCAPS); leaving effective uid 0 drops the effective set, and going back to
 * it restores the effective set from the permitted one. */
static void setxuid_caps(struct cbox_cred *n, const struct cbox_cred *o)
{
	if ((o->uid == 0 || o->euid == 0 || o->suid == 0) && n->uid != 0 && n->euid != 0 &&
	    n->suid != 0 && !n->keepcaps) {
		n->cap_prm = 0;
		n->cap_eff = 0;
	}
	if (o->euid == 0 && n->euid != 0)
		n->cap_eff = 0;
	if (o->euid != 0 && n->euid == 0)
		n->cap_eff = n->cap_prm;
}

/* Ids a set*id call names: -1 ("unchanged") where allowed, else mapped ones. */
static bool ids_ok(const struct cbox_cred *c, const uint32_t *ids, int n, bool minus_one_ok)
{
	for (int i = 0; i < n; i++) {
		if (ids[i] == NO_ID ? !minus_one_ok : !cbox_cred_id_valid(c, ids[i]))
			return false;
	}
	return true;
}

/* One of the three ids of a real/effective/saved triple (old values o[0..2]). */
static bool one_of(const uint32_t o[3], uint32_t id)
{
	return id == o[0] || id == o[1] || id == o[2];
}

/*
 * The shared core of the user and group variants: ids points at uid/euid/suid/fsuid (or the
 * gid ones) of a copy; cap is CAP_SETUID or CAP_SETGID. kind: 0 set*id, 1 setre*id,
 * 2 setres*id, as kernel/sys.c.
 */
static int set_ids(const struct cbox_cred *old, uint32_t *ids, int cap, int kind, uint32_t a,
                   uint32_t b, uint32_t c)
{
	const uint32_t o[3] = {ids[0], ids[1], ids[2]};
	bool priv = cbox_cred_capable(old, cap);
	switch (kind) {
	case 0:
		if (priv) {
			ids[0] = ids[1] = ids[2] = ids[3] = a;
		} else if (a == o[0] || a == o[2]) {
			ids[1] = ids[3] = a;
		} else {
			return -EPERM;
		}
		return 0;
	case 1:
		if (a != NO_ID) {
			if (!priv && a != o[0] && a != o[1])
				return -EPERM;
			ids[0] = a;
		}
		if (b != NO_ID) {
			if (!priv && !one_of(o, b))
				return -EPERM;
			ids[1] = b;
		}
		if (a != NO_ID || (b != NO_ID && b != o[0]))
			ids[2] = ids[1];
		ids[3] = ids[1];
		return 0;
	default:
		/* A call that changes nothing returns at once (Linux 6.x): the fs id keeps a value
		 * setfs*id gave it, which the general path would reset to the effective id. */
		if ((a == NO_ID || a == o[0]) && (b == NO_ID || (b == o[1] && b == ids[3])) &&
		    (c == NO_ID || c == o[2]))
			return 0;
		if (!priv && ((a != NO_ID && !one_of(o, a)) || (b != NO_ID && !one_of(o, b)) ||
		              (c != NO_ID && !one_of(o, c))))
			return -EPERM;
		if (a != NO_ID)
			ids[0] = a;
		if (b != NO_ID)
			ids[1] = b;
		if (c != NO_ID)
			ids[2] = c;
		ids[3] = ids[1];
		return 0;
	}
}

static int change(struct cbox_cred **cp, bool user, int kind, uint32_t a, uint32_t b, uint32_t c)
{
	const struct cbox_cred *old = *cp;
	const uint32_t named[3] = {a, b, c};
	if (!ids_ok(old, named, kind + 1, kind != 0))
		return -EINVAL;
	struct cbox_cred *n = prepare(old, old->ngroups);
	if (!n)
		return -ENOMEM;
	uint32_t ids[4] = {n->uid, n->euid, n->suid, n->fsuid};
	if (!user) {
		ids[0] = n->gid, ids[1] = n->egid, ids[2] = n->sgid, ids[3] = n->fsgid;
	}
	int r = set_ids(old, ids, user ? CAP_SETUID : CAP_SETGID, kind, a, b, c);
	if (r < 0) {
		free(n);
		return r;
	}
	if (user) {
		n->uid = ids[0], n->euid = ids[1], n->suid = ids[2], n->fsuid = ids[3];
		setxuid_caps(n, old);
	} else {
		n->gid = ids[0], n->egid = ids[1], n->sgid = ids[2], n->fsgid = ids[3];
	}
	commit(cp, n);
	return 0;
}

int cbox_cred_setuid(struct cbox_cred **cp, uint32_t uid)
{
	return change(cp, true, 0, uid, NO_ID, NO_ID);
}
int cbox_cred_setreuid(struct cbox_cred **cp, uint32_t r, uint32_t e)
{
	return change(cp, true, 1, r, e, NO_ID);
}
int cbox_cred_setresuid(struct cbox_cred **cp, uint32_t r, uint32_t e, uint32_t s)
{
	return change(cp, true, 2, r, e, s);
}
int cbox_cred_setgid(struct cbox_cred **cp, uint32_t gid)
{
	return change(cp, false, 0, gid, NO_ID, NO_ID);
}
int cbox_cred_setregid(struct cbox_cred **cp, uint32_t r, uint32_t e)
{
	return change(cp, false, 1, r, e, NO_ID);
}
int cbox_cred_setresgid(struct cbox_cred **cp, uint32_t r, uint32_t e, uint32_t s)
{
	return change(cp, false, 2, r, e, s);
}

/* setfsuid/setfsgid (kernel/sys.c): the new id must be one of the four or the caller needs the
 * capability; an fs uid leaving 0 drops the file system capabilities from the effective set,
 * one coming back to 0 raises the permitted ones (cap_task_fix_setuid, LSM_SETID_FS). */
static uint32_t set_fs(struct cbox_cred **cp, bool user, uint32_t id)
{
	const struct cbox_cred *old = *cp;
	uint32_t prev = user ? old->fsuid : old->fsgid;
	if (!cbox_cred_id_valid(old, id))
		return prev;
	const uint32_t four[4] = {user ? old->uid : old->gid, user ? old->euid : old->egid,
	                          user ? old->suid : old->sgid, user ? old->fsuid : old->fsgid};
	bool allowed = id == four[0] || id == four[1] || id == four[2] || id == four[3] ||
	               cbox_cred_capable(old, user ? CAP_SETUID : CAP_SETGID);
	if (!allowed || id == prev)
		return prev;
	struct cbox_cred *n = prepare(old, old->ngroups);
	if (!n)
		return prev;
	if (user) {
		n->fsuid = id;
		if (old->fsuid == 0 && id != 0)
			n->cap_eff &= ~CBOX_CAP_FS_MASK;
		if (old->fsuid != 0 && id == 0)
			n->cap_eff |= n->cap_prm & CBOX_CAP_FS_MASK;
	} else {
		n->fsgid = id;
	}
	commit(cp, n);
	return prev;
}

uint32_t cbox_cred_setfsuid(struct cbox_cred **cp, uint32_t id)
{
	return set_fs(cp, true, id);
}
uint32_t cbox_cred_setfsgid(struct cbox_cred **cp, uint32_t id)
{
	return set_fs(cp, false, id);
}

int cbox_cred_setgroups(struct cbox_cred **cp, const uint32_t *groups, size_t n)
{
	const struct cbox_cred *old = *cp;
	if (!cbox_cred_capable(old, CAP_SETGID))
		return -EPERM;
	if (n > CBOX_NGROUPS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!cbox_cred_id_valid(old, groups[i]))
			return -EINVAL;
	struct cbox_cred *c = prepare(old, (uint32_t)n);
	if (!c)
		return -ENOMEM;
	if (n)
		memcpy(c->groups, groups, n * sizeof(uint32_t));
	c->ngroups = sort_groups(c->groups, n);
	commit(cp, c);
	return 0;
}

int cbox_cred_capset(struct cbox_cred **cp, uint64_t eff, uint64_t prm, uint64_t inh)
{
	const struct cbox_cred *old = *cp;
	/* cap_capset: no CAP_SETPCAP is emulated, so the inheritable set may only take what is
	 * already inheritable or permitted, and never what the bounding set lacks. */
	if (inh & ~(old->cap_inh | old->cap_prm))
		return -EPERM;
	if (inh & ~(old->cap_inh | old->cap_bnd))
		return -EPERM;
	if (prm & ~old->cap_prm)
		return -EPERM;
	if (eff & ~prm)
		return -EPERM;
	struct cbox_cred *c = prepare(old, old->ngroups);
	if (!c)
		return -ENOMEM;
	c->cap_eff = eff;
	c->cap_prm = prm;
	c->cap_inh = inh;
	commit(cp, c);
	return 0;
}

int cbox_cred_set_keepcaps(struct cbox_cred **cp, bool on)
{
	if ((*cp)->keepcaps == on)
		return 0;
	struct cbox_cred *c = prepare(*cp, (*cp)->ngroups);
	if (!c)
		return -ENOMEM;
	c->keepcaps = on;
	commit(cp, c);
	return 0;
}

struct cbox_cred *cbox_cred_for_access(struct cbox_cred *c)
{
	uint64_t eff = c->uid == 0 ? c->cap_prm : 0;
	if (c->fsuid == c->uid && c->fsgid == c->gid && c->cap_eff == eff)
		return cbox_cred_get(c);
	struct cbox_cred *n = prepare(c, c->ngroups);
	if (!n)
		return NULL;
	n->fsuid = n->uid;
	n->fsgid = n->gid;
	n->cap_eff = eff;
	return n;
}

int cbox_cred_exec(struct cbox_cred **cp)
{
	struct cbox_cred *c = prepare(*cp, (*cp)->ngroups);
	if (!c)
		return -ENOMEM;
	c->suid = c->fsuid = c->euid;
	c->sgid = c->fsgid = c->egid;
	exec_caps(c);
	commit(cp, c);
	return 0;
}
