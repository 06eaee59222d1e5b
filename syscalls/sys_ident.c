/*
 * Identity: the get*id and set*id families, supplementary groups and capabilities, answered from
 * the calling task's credentials in the sentry (cbox/cred.h, which has Linux's rules). Nothing
 * reaches the host: the guest's host credentials never change, whatever ids it takes here.
 *
 * Under cbox-run every guest id stands for the one host id the sandbox maps (cbox/cred.h), and
 * the guest's root holds Docker's default capabilities of those the sentry emulates, so `su`,
 * setpriv and a daemon dropping to its user work as in a container; an id that stands for the
 * host's other users is EINVAL. Under the OCI runtime as root every id is the host's and uid 0
 * holds the capabilities the sentry emulates that the config grants.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])
#define ID(i)   ((uint32_t)c->trap->args[i])

static struct cbox_cred *cred(struct cbox_sysctx *c)
{
	return c->task->cred;
}

int64_t sys_getuid(struct cbox_sysctx *c)
{
	return cred(c)->uid;
}
int64_t sys_geteuid(struct cbox_sysctx *c)
{
	return cred(c)->euid;
}
int64_t sys_getgid(struct cbox_sysctx *c)
{
	return cred(c)->gid;
}
int64_t sys_getegid(struct cbox_sysctx *c)
{
	return cred(c)->egid;
}

/* getresuid/getresgid store each id on its own, as Linux's put_user does (EFAULT at the first
 * that fails, the ones before it written). */
static int64_t put_three(struct cbox_sysctx *c, uint32_t a, uint32_t b, uint32_t d)
{
	const uint32_t v[3] = {a, b, d};
	for (int i = 0; i < 3; i++) {
		int r = cbox_sys_write(c, ARG(i), &v[i], sizeof(v[i]));
		if (r < 0)
			return r;
	}
	return 0;
}
int64_t sys_getresuid(struct cbox_sysctx *c)
{
	const struct cbox_cred *cr = cred(c);
	return put_three(c, cr->uid, cr->euid, cr->suid);
}
int64_t sys_getresgid(struct cbox_sysctx *c)
{
	const struct cbox_cred *cr = cred(c);
	return put_three(c, cr->gid, cr->egid, cr->sgid);
}

/* The ids whose change makes a process not dumpable. */
struct ids {
	uint32_t euid, egid, fsuid, fsgid;
};

static struct ids ids_of(struct cbox_sysctx *c)
{
	const struct cbox_cred *cr = cred(c);
	return (struct ids){cr->euid, cr->egid, cr->fsuid, cr->fsgid};
}

/* Linux's commit_creds: a change of the effective or fs ids makes the process not dumpable, so
 * that what it could read with its former ids cannot be traced out of it (emulated ptrace,
 * syscalls/sys_ptrace.c). r is the call's result, returned. */
static int64_t after(struct cbox_sysctx *c, struct ids was, int64_t r)
{
	struct ids now = ids_of(c);
	if (c->task->tg && (now.euid != was.euid || now.egid != was.egid ||
	                    now.fsuid != was.fsuid || now.fsgid != was.fsgid))
		c->task->tg->nondumpable = true;
	return r;
}

int64_t sys_setuid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setuid(&c->task->cred, ID(0)));
}
int64_t sys_setgid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setgid(&c->task->cred, ID(0)));
}
int64_t sys_setreuid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setreuid(&c->task->cred, ID(0), ID(1)));
}
int64_t sys_setregid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setregid(&c->task->cred, ID(0), ID(1)));
}
int64_t sys_setresuid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setresuid(&c->task->cred, ID(0), ID(1), ID(2)));
}
int64_t sys_setresgid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setresgid(&c->task->cred, ID(0), ID(1), ID(2)));
}
int64_t sys_setfsuid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setfsuid(&c->task->cred, ID(0)));
}
int64_t sys_setfsgid(struct cbox_sysctx *c)
{
	struct ids was = ids_of(c);
	return after(c, was, cbox_cred_setfsgid(&c->task->cred, ID(0)));
}

int64_t sys_getgroups(struct cbox_sysctx *c)
{
	const struct cbox_cred *cr = cred(c);
	int size = IARG(0);
	if (size < 0)
		return -EINVAL;
	if (size == 0)
		return cr->ngroups;
	if ((uint32_t)size < cr->ngroups)
		return -EINVAL;
	int r = cbox_sys_write(c, ARG(1), cr->groups, cr->ngroups * sizeof(uint32_t));
	return r < 0 ? r : (int64_t)cr->ngroups;
}

/* Linux's order: CAP_SETGID first (EPERM), then the size (EINVAL), then the list (EFAULT), then
 * each id's mapping (EINVAL). */
int64_t sys_setgroups(struct cbox_sysctx *c)
{
	if (!cbox_cred_capable(cred(c), CAP_SETGID))
		return -EPERM;
	uint32_t n = (uint32_t)IARG(0);
	if (n > CBOX_NGROUPS_MAX)
		return -EINVAL;
	uint32_t *list = NULL;
	if (n) {
		list = malloc(n * sizeof(uint32_t));
		if (!list)
			return -ENOMEM;
		int r = cbox_sys_read(c, ARG(1), list, n * sizeof(uint32_t));
		if (r < 0) {
			free(list);
			return r;
		}
	}
	int r = cbox_cred_setgroups(&c->task->cred, list, n);
	free(list);
	return r;
}

/* ---- capabilities ---------------------------------------------------------------------- */

/* The header's version: how many 32-bit words each set has (1 or 2), or -EINVAL after telling
 * the caller the version the kernel prefers, as Linux's cap_validate_magic. */
static int cap_words(struct cbox_sysctx *c, struct __user_cap_header_struct *h)
{
	int r = cbox_sys_read(c, ARG(0), h, sizeof(*h));
	if (r < 0)
		return r;
	switch (h->version) {
	case _LINUX_CAPABILITY_VERSION_1:
		return 1;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3:
		return 2;
	default:
		h->version = _LINUX_CAPABILITY_VERSION_3;
		r = cbox_sys_write(c, ARG(0), h, sizeof(*h));
		return r < 0 ? r : -EINVAL;
	}
}

int64_t sys_capget(struct cbox_sysctx *c)
{
	struct __user_cap_header_struct h;
	int words = cap_words(c, &h);
	/* A NULL data pointer only asks for the version: 0 even when it was not the right one. */
	if (ARG(1) == 0)
		return words == -EINVAL || words > 0 ? 0 : words;
	if (words < 0)
		return words;
	if (h.pid < 0)
		return -EINVAL;
	const struct cbox_cred *cr = cred(c);
	if (h.pid != 0 && h.pid != c->task->vtid) {
		struct cbox_task *t = cbox_task_by_vtid(c->s, h.pid);
		if (!t || !t->cred)
			return -ESRCH;
		cr = t->cred;
	}
	struct __user_cap_data_struct d[2];
	for (int i = 0; i < 2; i++) {
		d[i].effective = (uint32_t)(cr->cap_eff >> (32 * i));
		d[i].permitted = (uint32_t)(cr->cap_prm >> (32 * i));
		d[i].inheritable = (uint32_t)(cr->cap_inh >> (32 * i));
	}
	return cbox_sys_write(c, ARG(1), d, sizeof(d[0]) * (size_t)words);
}

int64_t sys_capset(struct cbox_sysctx *c)
{
	struct __user_cap_header_struct h;
	int words = cap_words(c, &h);
	if (words < 0)
		return words;
	/* Only the caller's own sets: Linux refuses others (EPERM) since 2.6.24, and compares with
	 * the calling thread's id (task_pid_vnr), so a thread naming its process's pid is refused
	 * too. (cbox_task_vpid reads the task's ids from the host on first use.) */
	cbox_task_vpid(c->s, c->task);
	if (h.pid != 0 && h.pid != c->task->vtid)
		return -EPERM;
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	int r = cbox_sys_read(c, ARG(1), d, sizeof(d[0]) * (size_t)words);
	if (r < 0)
		return r;
	uint64_t eff = d[0].effective | (uint64_t)d[1].effective << 32;
	uint64_t prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	uint64_t inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return cbox_cred_capset(&c->task->cred, eff, prm, inh);
}

int64_t cbox_sys_prctl_caps(struct cbox_sysctx *c)
{
	switch (IARG(0)) {
	case PR_CAPBSET_READ:
		if (ARG(1) > CAP_LAST_CAP)
			return -EINVAL;
		return (cred(c)->cap_bnd >> ARG(1)) & 1;
	case PR_GET_KEEPCAPS:
		return cred(c)->keepcaps;
	case PR_SET_KEEPCAPS:
		if (ARG(1) > 1)
			return -EINVAL;
		return cbox_cred_set_keepcaps(&c->task->cred, ARG(1) == 1);
	default:
		return -EINVAL;
	}
}
