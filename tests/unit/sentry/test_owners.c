/*
 * The sentry's table of what the guest gave files (sentry/owners.c): the owners a stat shows with
 * and without an entry, per id; the set-ID bits in the mode, and how they go; forgetting; and
 * the table under load (growth, removed slots reused, rebuilds), checked against a plain array
 * of what it should hold.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define OWNER 1000u /* the host id cbox-run runs as */

static struct cbox_sentry_config cfg = {.owner_uid = OWNER, .owner_gid = OWNER};
static struct cbox_sentry s = {.cfg = &cfg};

static void fini(void)
{
	cbox_owners_free(&s);
}

TestSuite(owners, .fini = fini);

static void owner(uint64_t dev, uint64_t ino, uint32_t huid, uint32_t hgid, uint32_t *uid,
                  uint32_t *gid)
{
	struct cbox_gofer_stat g = {.dev = dev, .ino = ino, .uid = huid, .gid = hgid};
	cbox_owner_of(&s, &g, uid, gid, NULL);
}

/* The mode a stat shows for a file whose host mode is host. */
static uint32_t mode_of(struct cbox_sentry *t, uint64_t dev, uint64_t ino, uint32_t host)
{
	struct cbox_gofer_stat g = {
	    .dev = dev, .ino = ino, .uid = OWNER, .gid = OWNER, .mode = host};
	uint32_t uid, gid, mode;
	cbox_owner_of(t, &g, &uid, &gid, &mode);
	return mode;
}

Test(owners, given_owner_shown_where_the_host_id_is_the_sandboxs)
{
	uint32_t u, g;
	owner(1, 10, OWNER, OWNER, &u, &g);
	cr_expect(u == 0 && g == 0, "nothing remembered: the sandbox's root");
	cr_assert_eq(cbox_owner_set(&s, 1, 10, 7, 8), 0);
	owner(1, 10, OWNER, OWNER, &u, &g);
	cr_expect(u == 7 && g == 8);
	owner(2, 10, OWNER, OWNER, &u, &g);
	cr_expect(u == 0 && g == 0, "another device's inode 10");
	/* Another host user's id stays unmapped, whatever was remembered. */
	owner(1, 10, 4321, OWNER, &u, &g);
	cr_expect(u == CBOX_UNMAPPED_ID && g == 8);
	cr_assert_eq(cbox_owner_chown(&s, 1, 10, (uint32_t)-1, 9), 0);
	owner(1, 10, OWNER, OWNER, &u, &g);
	cr_expect(u == 7 && g == 9, "chgrp keeps the remembered uid");
	cr_assert_eq(cbox_owner_set(&s, 1, 10, 0, 0), 0);
	cr_expect_not(cbox_owner_known(&s, 1, 10), "0:0 is forgotten");
	cr_assert_eq(cbox_owner_set(&s, 1, 10, 5, 5), 0);
	cbox_owner_gone(&s, 1, 10);
	cr_expect_not(cbox_owner_known(&s, 1, 10));
}

Test(owners, with_user_the_host_owner_is_that_user)
{
	/* cbox-run --user 1000:50: the caller's files are that user's, as bwrap --uid maps them */
	struct cbox_sentry_config user = {
	    .owner_uid = OWNER, .owner_gid = OWNER, .uid = 1000, .gid = 50};
	struct cbox_sentry u = {.cfg = &user};
	struct cbox_gofer_stat g = {.dev = 1, .ino = 10, .uid = OWNER, .gid = OWNER};
	uint32_t uid, gid;
	cbox_owner_of(&u, &g, &uid, &gid, NULL);
	cr_expect(uid == 1000 && gid == 50);
	cr_assert_eq(cbox_owner_set(&u, 1, 10, 0, 0), 0);
	cbox_owner_of(&u, &g, &uid, &gid, NULL);
	cr_expect(uid == 0 && gid == 0, "given to root");
	cr_assert_eq(cbox_owner_set(&u, 1, 10, 1000, 50), 0);
	cr_expect_not(cbox_owner_known(&u, 1, 10), "back to what the host's owner shows as");
	cbox_owners_free(&u);
}

Test(owners, all_ids_remember_nothing)
{
	struct cbox_sentry_config all = {.all_ids = true};
	struct cbox_sentry a = {.cfg = &all};
	cr_expect_eq(cbox_owner_set(&a, 1, 10, 7, 8), 0);
	cr_expect_not(cbox_owner_known(&a, 1, 10));
	cbox_owners_free(&a);
}

Test(owners, setid_bits_shown_and_dropped_as_linux_does)
{
	cr_expect_eq(mode_of(&s, 1, 20, S_IFREG | 0755), S_IFREG | 0755);
	cr_assert_eq(cbox_owner_set_setid(&s, 1, 20, S_ISUID | S_ISGID | S_ISVTX | 0777), 0);
	cr_expect_eq(cbox_owner_setid(&s, 1, 20), S_ISUID | S_ISGID, "only the set-ID bits");
	cr_expect_eq(mode_of(&s, 1, 20, S_IFREG | 0755), S_IFREG | 06755);
	/* An owner given and taken back keeps the bits. */
	cr_assert_eq(cbox_owner_set(&s, 1, 20, 7, 8), 0);
	cr_assert_eq(cbox_owner_set(&s, 1, 20, 0, 0), 0);
	cr_expect_eq(cbox_owner_setid(&s, 1, 20), S_ISUID | S_ISGID);
	/* A chown: set-user-ID goes, set-group-ID only with group execute. */
	cbox_owner_kill_setid(&s, 1, 20, S_IFREG | 06745);
	cr_expect_eq(cbox_owner_setid(&s, 1, 20), S_ISGID);
	cbox_owner_kill_setid(&s, 1, 20, S_IFREG | 02755);
	cr_expect_not(cbox_owner_known(&s, 1, 20), "nothing left to remember");
	cr_assert_eq(cbox_owner_set(&s, 1, 21, 7, 8), 0);
	cr_assert_eq(cbox_owner_set_setid(&s, 1, 21, S_ISUID), 0);
	cr_assert_eq(cbox_owner_set_setid(&s, 1, 21, 0), 0);
	uint32_t u, g;
	owner(1, 21, OWNER, OWNER, &u, &g);
	cr_expect(u == 7 && g == 8, "clearing the bits keeps the owner");
	cbox_owner_gone(&s, 1, 21);
	cr_expect_not(cbox_owner_known(&s, 1, 21));
}

Test(owners, all_ids_remember_setid_bits)
{
	struct cbox_sentry_config all = {.all_ids = true};
	struct cbox_sentry a = {.cfg = &all};
	cr_assert_eq(cbox_owner_set_setid(&a, 1, 10, S_ISUID), 0);
	cr_expect_eq(mode_of(&a, 1, 10, S_IFREG | 0755), S_IFREG | 04755);
	cbox_owners_free(&a);
}

Test(owners, under_load)
{
	enum { N = 50000 };
	uint32_t *want = calloc(N, sizeof(*want)); /* 0: absent */
	cr_assert(want);
	unsigned seed = 1;
	for (int round = 0; round < 8 * N; round++) {
		seed = seed * 1103515245u + 12345u;
		uint32_t i = (seed >> 8) % N, op = (seed >> 4) % 4;
		uint64_t dev = 1 + i % 3, ino = i; /* inode numbers repeat across devices */
		if (op == 0) {
			cbox_owner_gone(&s, dev, ino);
			want[i] = 0;
		} else {
			cr_assert_eq(cbox_owner_set(&s, dev, ino, 1 + op, 100 + i), 0);
			want[i] = 1 + op;
		}
	}
	size_t live = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t u, g;
		owner(1 + i % 3, i, OWNER, OWNER, &u, &g);
		cr_assert_eq(u, want[i], "entry %u", i);
		cr_assert_eq(g, want[i] ? 100 + i : 0, "entry %u", i);
		live += want[i] != 0;
	}
	cr_expect_gt(live, N / 2);
	free(want);
}
