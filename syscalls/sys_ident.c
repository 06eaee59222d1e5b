/*
 * Identity changes. The guest is uid 0 and gid 0 of a user namespace that maps only that one id,
 * with no capabilities. Linux's rules for such a process are exact here: a set*id call may only
 * "change" ids to 0 (the real, effective and saved ids are all 0), any other id has no mapping
 * (EINVAL), supplementary groups need CAP_SETGID (EPERM), and capset may only keep the empty
 * sets. Nothing reaches the host: the guest's host credentials never change.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define ARG(i) (c->trap->args[i])

/* One id argument: 0 is the guest's own id, -1 means "unchanged" where allowed. */
static int check_id(uint64_t arg, bool minus_one_ok)
{
	uint32_t id = (uint32_t)arg;
	if (id == (uint32_t)-1)
		return minus_one_ok ? 0 : -EINVAL;
	return id == 0 ? 0 : -EINVAL; /* not mapped in the guest's user namespace */
}

static int64_t set_ids(struct cbox_sysctx *c, int n, bool minus_one_ok)
{
	for (int i = 0; i < n; i++) {
		int r = check_id(ARG(i), minus_one_ok);
		if (r < 0)
			return r;
	}
	return 0;
}

int64_t sys_setuid(struct cbox_sysctx *c)
{
	return set_ids(c, 1, false);
}
int64_t sys_setgid(struct cbox_sysctx *c)
{
	return set_ids(c, 1, false);
}
int64_t sys_setreuid(struct cbox_sysctx *c)
{
	return set_ids(c, 2, true);
}
int64_t sys_setregid(struct cbox_sysctx *c)
{
	return set_ids(c, 2, true);
}
int64_t sys_setresuid(struct cbox_sysctx *c)
{
	return set_ids(c, 3, true);
}
int64_t sys_setresgid(struct cbox_sysctx *c)
{
	return set_ids(c, 3, true);
}

/* setfsuid/setfsgid never fail: they return the previous fs id, 0, and change nothing unless
 * the new id is one the caller may take, which is 0 again. */
int64_t sys_setfsuid(struct cbox_sysctx *c)
{
	(void)c;
	return 0;
}
int64_t sys_setfsgid(struct cbox_sysctx *c)
{
	(void)c;
	return 0;
}

/* Supplementary groups need CAP_SETGID in the namespace, which the guest does not have; Linux
 * checks that before the size. */
int64_t sys_setgroups(struct cbox_sysctx *c)
{
	(void)c;
	return -EPERM;
}

int64_t sys_capset(struct cbox_sysctx *c)
{
	struct __user_cap_header_struct h;
	int r = cbox_sys_read(c, ARG(0), &h, sizeof(h));
	if (r < 0)
		return r;
	int words;
	switch (h.version) {
	case _LINUX_CAPABILITY_VERSION_1:
		words = 1;
		break;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3:
		words = 2;
		break;
	default:
		/* As Linux: tell the caller the version the kernel prefers. */
		h.version = _LINUX_CAPABILITY_VERSION_3;
		r = cbox_sys_write(c, ARG(0), &h, sizeof(h));
		return r < 0 ? r : -EINVAL;
	}
	if (h.pid != 0 && h.pid != c->task->tg->vpid && h.pid != c->task->vtid)
		return -EPERM;
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	r = cbox_sys_read(c, ARG(1), d, sizeof(d[0]) * (size_t)words);
	if (r < 0)
		return r;
	/* The only sets a process without capabilities can set are the empty ones it has. */
	for (int i = 0; i < words; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return -EPERM;
	return 0;
}
