/*
 * The sentry's credentials (sentry/cred.c) where the kernel cannot be asked from one process:
 * permission checks, one-id mode, exec by hand, copy on write, the limits. test_cred_kernel.c
 * holds the model against the real kernel. ENOMEM is not tested: nothing makes the allocations
 * fail on demand.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/compiler.h"
#include "cbox/cred.h"

#define NO        0xffffffffu /* (uint32_t)-1 */
#define CAP(name) CBOX_CAP_BIT(CAP_##name)
#define EMUL      CBOX_CAP_EMULATED
#define SUGID     (CAP(SETUID) | CAP(SETGID))

static struct cbox_cred *cred(uint32_t uid, uint32_t gid, const uint32_t *groups, size_t n,
                              uint64_t bset, bool all_ids)
{
	struct cbox_cred *c = cbox_cred_new(uid, gid, groups, n, bset, all_ids);
	cr_assert_not_null(c);
	return c;
}

#define FREG(mode) (S_IFREG | (mode))
#define FDIR(mode) (S_IFDIR | (mode))

Test(cred, permission_owner_group_other)
{
	const uint32_t groups[] = {2000};
	struct cbox_cred *c = cred(1000, 1000, groups, 1, EMUL, true);
	cr_expect_eq(c->cap_eff, 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0640), 1000, 1000, R_OK | W_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0640), 1000, 1000, X_OK), -EACCES);
	/* The owner's bits alone count for the owner, even when the group's allow more. */
	cr_expect_eq(cbox_cred_permission(c, FREG(0460), 1000, 1000, W_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0040), 0, 1000, R_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0040), 0, 1000, W_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0040), 0, 2000, R_OK), 0, "supplementary group");
	cr_expect_eq(cbox_cred_permission(c, FREG(0044), 0, 3000, R_OK), 0, "others");
	cr_expect_eq(cbox_cred_permission(c, FREG(0040), 0, 3000, R_OK), -EACCES);
	/* The group's bits alone count for a member, even when the others' allow more. */
	cr_expect_eq(cbox_cred_permission(c, FREG(0006), 0, 2000, R_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0700), 1000, 0, R_OK | W_OK | X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0600), 1000, 0, X_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0777), 1000, 1000, 0), 0, "an empty mask");
	cbox_cred_put(c);
}

Test(cred, root_without_capabilities_obeys_the_mode)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, 0, true);
	cr_expect_eq(c->cap_prm, 0);
	cr_expect_eq(c->cap_eff, 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 1000, 1000, R_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0060), 0, 0, R_OK), -EACCES, "owner class: none");
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, X_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 0, 0, R_OK | W_OK), 0);
	cr_expect_not(cbox_cred_owner(c, 1000));
	cr_expect(cbox_cred_owner(c, 0));
	cbox_cred_put(c);
}

Test(cred, root_with_dac_override)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_expect_eq(c->cap_eff, EMUL);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK | W_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, X_OK), -EACCES,
	             "no one may execute it");
	cr_expect_eq(cbox_cred_permission(c, FREG(0100), 1000, 1000, X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0010), 1000, 1000, X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0001), 1000, 1000, R_OK | W_OK | X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, R_OK | W_OK | X_OK), 0);
	cbox_cred_put(c);
}

Test(cred, dac_read_search_alone)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_capset(&c, CAP(DAC_READ_SEARCH), CAP(DAC_READ_SEARCH), 0), 0);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, R_OK | X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, W_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, W_OK | X_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, W_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK | W_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0110), 1000, 1000, X_OK), -EACCES);
	cbox_cred_put(c);
}

Test(cred, dac_override_alone)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_capset(&c, CAP(DAC_OVERRIDE), CAP(DAC_OVERRIDE), 0), 0);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 1000, 1000, R_OK | W_OK | X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK | W_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, X_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0001), 1000, 1000, X_OK), 0);
	cbox_cred_put(c);
}

Test(cred, fs_uid_drops_fs_capabilities)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_expect_eq(cbox_cred_setfsuid(&c, 1000), 0);
	cr_expect_eq(c->cap_eff, EMUL & ~CBOX_CAP_FS_MASK);
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 2000, 2000, R_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 1000, 2000, R_OK), 0,
	             "the fs uid owns it");
	cr_expect_not(cbox_cred_owner(c, 2000), "CAP_FOWNER is an fs capability");
	cr_expect(cbox_cred_owner(c, 1000));
	cr_expect_not(cbox_cred_owner(c, 0), "ownership follows the fs uid, not the euid");
	cr_expect_eq(cbox_cred_setfsuid(&c, 0), 1000);
	cr_expect_eq(c->cap_eff, EMUL);
	cbox_cred_put(c);
}

Test(cred, owner)
{
	struct cbox_cred *u = cred(1000, 1000, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_owner(u, 1000));
	cr_expect_not(cbox_cred_owner(u, 0));
	cr_expect_not(cbox_cred_owner(u, 2000));
	struct cbox_cred *r = cred(0, 0, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_owner(r, 0));
	cr_expect(cbox_cred_owner(r, 1000), "CAP_FOWNER");
	cr_expect(cbox_cred_owner(r, CBOX_OVERFLOW_ID));
	cbox_cred_put(u);
	cbox_cred_put(r);
}

Test(cred, one_id_mode_unmapped_owner)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, false);
	const uint32_t un = CBOX_UNMAPPED_ID;
	cr_expect_eq(c->cap_eff, EMUL);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 0, 0, R_OK | W_OK), 0, "a mapped owner");
	cr_expect_eq(cbox_cred_permission(c, FDIR(0), 0, 0, W_OK | X_OK), 0);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 1000, 1000, R_OK | W_OK), 0,
	             "an owner the guest gave");
	/* Another host user's file is unmapped: no capability applies (capable_wrt_inode_uidgid).
	 */
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), un, un, R_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FDIR(0700), un, un, X_OK), -EACCES);
	cr_expect_eq(cbox_cred_permission(c, FREG(0), 0, un, R_OK), -EACCES, "an unmapped group");
	cr_expect_eq(cbox_cred_permission(c, FREG(0644), un, un, R_OK), 0, "the others' bits");
	cr_expect_eq(cbox_cred_permission(c, FREG(0644), un, un, W_OK), -EACCES);
	cr_expect_not(cbox_cred_owner(c, un));
	cr_expect(cbox_cred_owner(c, 0));
	cr_expect(cbox_cred_owner(c, CBOX_OVERFLOW_ID), "nobody, given by the guest, is mapped");
	cr_expect_not(cbox_cred_capable_wrt(c, CAP_CHOWN, un, 0));
	cr_expect_not(cbox_cred_capable_wrt(c, CAP_CHOWN, 0, un));
	cr_expect(cbox_cred_capable_wrt(c, CAP_CHOWN, 1000, CBOX_OVERFLOW_ID));
	cbox_cred_put(c);
}

Test(cred, id_valid)
{
	struct cbox_cred *all = cred(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *one = cred(0, 0, NULL, 0, EMUL, false);
	const uint32_t ids[] = {0, 1, 1000, CBOX_OVERFLOW_ID, 0xfffffffd};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(ids); i++) {
		cr_expect(cbox_cred_id_valid(all, ids[i]), "all ids: %u", ids[i]);
		cr_expect(cbox_cred_id_valid(one, ids[i]), "one host id: %u", ids[i]);
	}
	cr_expect(cbox_cred_id_valid(all, CBOX_UNMAPPED_ID), "a host id like any other");
	cr_expect_not(cbox_cred_id_valid(one, CBOX_UNMAPPED_ID), "stands for other host users");
	cr_expect_not(cbox_cred_id_valid(all, NO));
	cr_expect_not(cbox_cred_id_valid(one, NO));
	cbox_cred_put(all);
	cbox_cred_put(one);
}

Test(cred, one_id_mode_refuses_the_unmapped_id)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, false), *before = c;
	const uint32_t un = CBOX_UNMAPPED_ID, gun[] = {CBOX_UNMAPPED_ID}, g0[] = {0};
	cr_expect_eq(cbox_cred_setuid(&c, un), -EINVAL);
	cr_expect_eq(cbox_cred_setreuid(&c, NO, un), -EINVAL);
	cr_expect_eq(cbox_cred_setresuid(&c, NO, NO, un), -EINVAL);
	cr_expect_eq(cbox_cred_setgid(&c, un), -EINVAL);
	cr_expect_eq(cbox_cred_setregid(&c, un, NO), -EINVAL);
	cr_expect_eq(cbox_cred_setresgid(&c, un, NO, NO), -EINVAL);
	cr_expect_eq(cbox_cred_setgroups(&c, gun, 1), -EINVAL);
	cr_expect_eq(cbox_cred_setfsuid(&c, un), 0, "refused, the old fs uid");
	cr_expect_eq(cbox_cred_setfsgid(&c, un), 0);
	cr_expect_eq(c, before, "errors leave the credentials as they were");
	cr_expect_eq(c->fsuid, 0);
	cr_expect_eq(c->fsgid, 0);
	cr_expect_eq(cbox_cred_setgroups(&c, g0, 1), 0);
	cr_expect_eq(c->ngroups, 1);
	cr_expect_eq(c->cap_eff, EMUL);
	cbox_cred_put(c);
}

Test(cred, one_id_mode_root_becomes_another_user)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, false);
	const uint32_t g[] = {1000, 27};
	cr_assert_eq(cbox_cred_setgroups(&c, g, 2), 0);
	cr_assert_eq(cbox_cred_setgid(&c, 1000), 0);
	cr_assert_eq(cbox_cred_setuid(&c, 1000), 0);
	cr_expect_eq(c->uid, 1000);
	cr_expect_eq(c->euid, 1000);
	cr_expect_eq(c->suid, 1000);
	cr_expect_eq(c->fsgid, 1000);
	cr_expect_eq(c->cap_eff, 0, "leaving uid 0 drops the capabilities");
	cr_expect_eq(c->cap_prm, 0);
	cr_expect(cbox_cred_in_group(c, 27));
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 0, 0, R_OK), -EACCES, "root's file");
	cr_expect_eq(cbox_cred_permission(c, FREG(0600), 1000, 1000, R_OK | W_OK), 0);
	cr_expect_eq(cbox_cred_setuid(&c, 0), -EPERM, "and cannot come back");
	cbox_cred_put(c);
}

Test(cred, exec_as_root_regains_the_bounding_set)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL & ~CAP(FSETID), true);
	cr_expect_eq(c->cap_bnd, EMUL & ~CAP(FSETID));
	cr_assert_eq(cbox_cred_capset(&c, SUGID, SUGID, CAP(CHOWN)), 0);
	cr_assert_eq(cbox_cred_set_keepcaps(&c, true), 0);
	cr_assert_eq(cbox_cred_exec(&c), 0);
	cr_expect_eq(c->cap_prm, EMUL & ~CAP(FSETID));
	cr_expect_eq(c->cap_eff, EMUL & ~CAP(FSETID));
	cr_expect_eq(c->cap_inh, CAP(CHOWN));
	cr_expect_eq(c->cap_bnd, EMUL & ~CAP(FSETID));
	cr_expect_not(c->keepcaps);
	cbox_cred_put(c);
}

Test(cred, exec_as_non_root_loses_everything)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_set_keepcaps(&c, true), 0);
	cr_assert_eq(cbox_cred_setuid(&c, 1000), 0);
	cr_expect_eq(c->cap_prm, EMUL, "keepcaps");
	cr_expect_eq(c->cap_eff, 0);
	cr_assert_eq(cbox_cred_exec(&c), 0);
	cr_expect_eq(c->cap_prm, 0);
	cr_expect_eq(c->cap_eff, 0);
	cr_expect_not(c->keepcaps);
	cr_expect_eq(c->uid, 1000);
	cbox_cred_put(c);
}

Test(cred, exec_saved_and_fs_ids_follow_effective)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_setresgid(&c, 1000, 2000, 3000), 0);
	cr_expect_eq(cbox_cred_setfsgid(&c, 3000), 2000);
	cr_assert_eq(cbox_cred_setresuid(&c, 1000, 2000, 0), 0);
	cr_expect_eq(cbox_cred_setfsuid(&c, 0), 2000);
	cr_expect_eq(c->cap_eff, CBOX_CAP_FS_MASK, "fs uid 0 raised the fs capabilities");
	cr_assert_eq(cbox_cred_exec(&c), 0);
	cr_expect_eq(c->uid, 1000);
	cr_expect_eq(c->euid, 2000);
	cr_expect_eq(c->suid, 2000);
	cr_expect_eq(c->fsuid, 2000);
	cr_expect_eq(c->gid, 1000);
	cr_expect_eq(c->egid, 2000);
	cr_expect_eq(c->sgid, 2000);
	cr_expect_eq(c->fsgid, 2000);
	cr_expect_eq(c->cap_prm, 0);
	cr_expect_eq(c->cap_eff, 0);
	cbox_cred_put(c);
}

Test(cred, exec_with_real_uid_0_only)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_setresuid(&c, 0, 1000, 1000), 0);
	cr_assert_eq(cbox_cred_capset(&c, 0, SUGID, 0), 0);
	cr_assert_eq(cbox_cred_exec(&c), 0);
	cr_expect_eq(c->cap_prm, EMUL);
	cr_expect_eq(c->cap_eff, 0);
	cbox_cred_put(c);
}

/* A set on one holder of shared credentials gives it a copy; the other keeps the old ones. */
Test(cred, copy_on_write)
{
	struct cbox_cred *a = cred(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *b = cbox_cred_get(a);
	cr_assert_eq(a, b);
	cr_assert_eq(a->refs, 2);
	cr_assert_eq(cbox_cred_setresuid(&a, 1000, 1000, 1000), 0);
	cr_assert_neq(a, b);
	cr_expect_eq(a->refs, 1);
	cr_expect_eq(b->refs, 1);
	cr_expect_eq(a->uid, 1000);
	cr_expect_eq(a->cap_prm, 0);
	cr_expect_eq(b->uid, 0);
	cr_expect_eq(b->euid, 0);
	cr_expect_eq(b->fsuid, 0);
	cr_expect_eq(b->cap_prm, EMUL);

	const uint32_t g[] = {5};
	struct cbox_cred *c = cbox_cred_get(b);
	cr_assert_eq(cbox_cred_setgroups(&c, g, 1), 0);
	cr_assert_eq(cbox_cred_capset(&c, SUGID, SUGID, 0), 0);
	cr_assert_eq(cbox_cred_set_keepcaps(&c, true), 0);
	cr_expect_eq(cbox_cred_setfsgid(&c, 7), 0);
	cr_expect_eq(b->ngroups, 0);
	cr_expect_eq(b->cap_eff, EMUL);
	cr_expect_not(b->keepcaps);
	cr_expect_eq(b->fsgid, 0);
	cr_expect_eq(c->ngroups, 1);
	cr_expect_eq(c->fsgid, 7);

	struct cbox_cred *d = cbox_cred_get(c);
	cr_assert_eq(cbox_cred_exec(&d), 0);
	cr_expect_eq(c->keepcaps, true);
	cr_expect_eq(c->cap_prm, SUGID);
	cr_expect_eq(d->cap_prm, EMUL);
	cr_expect_eq(c->refs, 1);

	struct cbox_cred *e = cbox_cred_get(a);
	cr_expect_eq(cbox_cred_setuid(&a, 0), -EPERM);
	cr_expect_eq(a, e, "a failed set leaves the shared credentials");
	cr_expect_eq(a->refs, 2);
	cr_expect_eq(a->uid, 1000);
	cbox_cred_put(e);
	cbox_cred_put(a);
	cbox_cred_put(b);
	cbox_cred_put(c);
	cbox_cred_put(d);
	cbox_cred_put(NULL);
}

/* Sorted (the lookups rely on it). Duplicates: the differential row "setgroups keeps a duplicate"
 * holds the model to what the kernel keeps. */
Test(cred, groups_sorted)
{
	const uint32_t in[] = {3000, 1000, 2000};
	struct cbox_cred *c = cred(0, 500, in, CBOX_ARRAY_SIZE(in), EMUL, true);
	cr_assert_eq(c->ngroups, 3);
	cr_expect_eq(c->groups[0], 1000);
	cr_expect_eq(c->groups[1], 2000);
	cr_expect_eq(c->groups[2], 3000);
	cr_expect(cbox_cred_in_group(c, 500), "the fs gid");
	cr_expect(cbox_cred_in_group(c, 2000));
	cr_expect(cbox_cred_in_group(c, 3000));
	cr_expect_not(cbox_cred_in_group(c, 1500));
	cr_expect_not(cbox_cred_in_group(c, 0));

	const uint32_t again[] = {9, 7, 8};
	cr_assert_eq(cbox_cred_setgroups(&c, again, CBOX_ARRAY_SIZE(again)), 0);
	cr_assert_eq(c->ngroups, 3);
	cr_expect_eq(c->groups[0], 7);
	cr_expect_eq(c->groups[1], 8);
	cr_expect_eq(c->groups[2], 9);
	cr_expect_not(cbox_cred_in_group(c, 1000));
	cr_assert_eq(cbox_cred_setgroups(&c, NULL, 0), 0);
	cr_expect_eq(c->ngroups, 0);
	cr_expect_not(cbox_cred_in_group(c, 7));
	cbox_cred_put(c);
}

Test(cred, setgroups_limits)
{
	uint32_t *many = calloc(CBOX_NGROUPS_MAX + 1, sizeof(*many));
	cr_assert_not_null(many);
	cr_expect_null(cbox_cred_new(0, 0, many, CBOX_NGROUPS_MAX + 1, EMUL, true));
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true), *before = c;
	cr_expect_eq(cbox_cred_setgroups(&c, many, CBOX_NGROUPS_MAX + 1), -EINVAL);
	cr_expect_eq(c, before);
	for (uint32_t i = 0; i < CBOX_NGROUPS_MAX; i++)
		many[i] = CBOX_NGROUPS_MAX - i;
	cr_expect_eq(cbox_cred_setgroups(&c, many, CBOX_NGROUPS_MAX), 0);
	cr_expect_eq(c->ngroups, CBOX_NGROUPS_MAX);
	cr_expect_eq(c->groups[0], 1);
	cr_expect_eq(c->groups[CBOX_NGROUPS_MAX - 1], CBOX_NGROUPS_MAX);
	/* Without CAP_SETGID the size is never looked at, as in Linux. */
	cr_assert_eq(cbox_cred_setuid(&c, 1000), 0);
	cr_expect_eq(cbox_cred_setgroups(&c, many, CBOX_NGROUPS_MAX + 1), -EPERM);
	cbox_cred_put(c);
	free(many);
}

Test(cred, capable_and_keepcaps)
{
	struct cbox_cred *c = cred(0, 0, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_capable(c, CAP_SETUID));
	cr_expect(cbox_cred_capable(c, CAP_CHOWN));
	cr_expect_not(cbox_cred_capable(c, CAP_SYS_ADMIN), "not emulated");
	cr_expect_not(cbox_cred_capable(c, -1));
	cr_expect_not(cbox_cred_capable(c, 64));
	cr_expect_eq(cbox_cred_set_keepcaps(&c, true), 0);
	cr_expect_eq(cbox_cred_set_keepcaps(&c, true), 0);
	cr_expect(c->keepcaps);
	cr_expect_eq(cbox_cred_set_keepcaps(&c, false), 0);
	cr_expect_not(c->keepcaps);
	struct cbox_cred *all = cred(0, 0, NULL, 0, ~0ULL, true);
	cr_expect_eq(all->cap_bnd, EMUL, "the bounding set is masked to the emulated set");
	cr_expect_eq(all->cap_prm, EMUL);
	cbox_cred_put(all);
	cbox_cred_put(c);
}

/* kill_ok_by_cred: the sender's real or effective uid against the target's real or saved uid,
 * else CAP_KILL. */
Test(cred, may_signal)
{
	struct cbox_cred *root = cred(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *bare_root = cred(0, 0, NULL, 0, 0, true);
	struct cbox_cred *u1 = cred(1000, 1000, NULL, 0, EMUL, true);
	struct cbox_cred *u2 = cred(2000, 2000, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_may_signal(u1, u1));
	cr_expect_not(cbox_cred_may_signal(u1, u2));
	cr_expect_not(cbox_cred_may_signal(u1, root), "a user cannot signal root");
	cr_expect(cbox_cred_may_signal(root, u1), "CAP_KILL");
	cr_expect_not(cbox_cred_may_signal(bare_root, u1), "root without CAP_KILL");
	/* u2 with saved uid 1000 (setresuid(2000, 2000, 1000) needs privilege: built by hand). */
	struct cbox_cred *s = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_setresuid(&s, 2000, 2000, 1000), 0);
	cr_expect(cbox_cred_may_signal(u1, s), "the target's saved uid is the sender's");
	cr_expect_not(cbox_cred_may_signal(s, u1), "the sender's saved uid does not count");
	cbox_cred_put(root);
	cbox_cred_put(bare_root);
	cbox_cred_put(u1);
	cbox_cred_put(u2);
	cbox_cred_put(s);
}

/* __ptrace_may_access's ids: the caller's real (or fs) uid and gid are each of the target's three;
 * CAP_SYS_PTRACE is not emulated, so root is no exception (as Docker's root). */
Test(cred, may_ptrace)
{
	struct cbox_cred *root = cred(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *u1 = cred(1000, 1000, NULL, 0, EMUL, true);
	struct cbox_cred *u1b = cred(1000, 1000, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_may_ptrace(u1, u1b, false));
	cr_expect(cbox_cred_may_ptrace(root, root, false));
	cr_expect_not(cbox_cred_may_ptrace(u1, root, false), "a user cannot reach root's");
	cr_expect_not(cbox_cred_may_ptrace(root, u1, false),
	              "nor root a user's (no CAP_SYS_PTRACE)");
	/* root that became 1000 but kept saved uid 0: its real ids are 1000's, but a target
	 * whose saved uid is 0 is not open to 1000. */
	struct cbox_cred *s = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_setresgid(&s, 1000, 1000, 1000), 0);
	cr_assert_eq(cbox_cred_setresuid(&s, 1000, 1000, 0), 0);
	cr_expect_not(cbox_cred_may_ptrace(u1, s, false), "the target's saved uid counts");
	cr_expect(cbox_cred_may_ptrace(s, u1, false), "the caller's real ids decide");
	/* fs ids: setfsuid(0) by root-turned-1000 is refused, so build one by hand. */
	struct cbox_cred *f = cred(0, 0, NULL, 0, EMUL, true);
	cbox_cred_setfsuid(&f, 1000);
	cbox_cred_setfsgid(&f, 1000);
	cr_expect(cbox_cred_may_ptrace(f, u1, true), "PTRACE_MODE_FSCREDS: the fs ids");
	cr_expect_not(cbox_cred_may_ptrace(f, u1, false), "REALCREDS: the real ids");
	cbox_cred_put(root);
	cbox_cred_put(u1);
	cbox_cred_put(u1b);
	cbox_cred_put(s);
	cbox_cred_put(f);
}

/* check_prlimit_permission's ids (the same test, on real ids; CAP_SYS_RESOURCE not emulated) and
 * check_same_owner (effective uid against the target's effective or real uid). */
Test(cred, prlimit_and_same_owner)
{
	struct cbox_cred *root = cred(0, 0, NULL, 0, EMUL, true);
	struct cbox_cred *u1 = cred(1000, 1000, NULL, 0, EMUL, true);
	struct cbox_cred *g = cred(1000, 2000, NULL, 0, EMUL, true);
	cr_expect(cbox_cred_may_prlimit(u1, u1));
	cr_expect_not(cbox_cred_may_prlimit(u1, root));
	cr_expect_not(cbox_cred_may_prlimit(root, u1), "no CAP_SYS_RESOURCE");
	cr_expect_not(cbox_cred_may_prlimit(u1, g), "the gids must match too");
	cr_expect(cbox_cred_same_owner(u1, g), "the uid alone decides");
	cr_expect_not(cbox_cred_same_owner(u1, root));
	cr_expect_not(cbox_cred_same_owner(root, u1), "no CAP_SYS_NICE");
	struct cbox_cred *e = cred(0, 0, NULL, 0, EMUL, true);
	cr_assert_eq(cbox_cred_setresuid(&e, 0, 1000, 0), 0);
	cr_expect(cbox_cred_same_owner(e, u1), "the caller's effective uid");
	cr_expect(cbox_cred_same_owner(u1, e), "the target's effective uid");
	cbox_cred_put(root);
	cbox_cred_put(u1);
	cbox_cred_put(g);
	cbox_cred_put(e);
}
