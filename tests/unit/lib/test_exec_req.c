/* Unit tests for lib/exec_req.c: the `cbox exec` request, with and without its user section
 * (round trips, the wire layout, short or inconsistent messages, ids of -1, flags, limits). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/exec_req.h"

static char *const ARGV[] = {"/bin/sh", "-c", "id", NULL};
static char *const ENVP[] = {"PATH=/bin", "HOME=/root", NULL};

/* A hand-built message: bytes appended to a fixed buffer. */
struct msg {
	unsigned char b[512];
	size_t len;
};

static void u32(struct msg *m, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		m->b[m->len++] = (unsigned char)(v >> (8 * i));
}

static void str(struct msg *m, const char *s)
{
	size_t n = strlen(s) + 1;
	memcpy(m->b + m->len, s, n);
	m->len += n;
}

static void hdr(struct msg *m, uint32_t flags, uint32_t argc, uint32_t envc)
{
	m->len = 0;
	u32(m, CBOX_EXEC_REQ_MAGIC);
	u32(m, flags);
	u32(m, argc);
	u32(m, envc);
}

static int decode(const struct msg *m, struct cbox_exec_req *r)
{
	return cbox_exec_req_decode(m->b, m->len, r);
}

/* Encodes with user (may be NULL), decodes, checks every field, and re-encodes to the same bytes.
 */
static void round_trip(uint32_t flags, const struct cbox_exec_user *user)
{
	char *out = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	struct cbox_exec_req r;

	cr_assert_eq(cbox_exec_req_encode(ARGV, ENVP, "/work", flags, user, &out, &len), 0);
	cr_assert_eq(cbox_exec_req_decode(out, len, &r), 0);
	cr_assert_eq(r.argc, 3);
	cr_assert_eq(r.envc, 2);
	cr_assert_str_eq(r.argv[2], "id");
	cr_assert_null(r.argv[3]);
	cr_assert_str_eq(r.envp[1], "HOME=/root");
	cr_assert_str_eq(r.cwd, "/work");
	cr_assert_eq(r.flags & (CBOX_EXEC_TTY | CBOX_EXEC_NO_NEW_PRIVS),
	             flags & (CBOX_EXEC_TTY | CBOX_EXEC_NO_NEW_PRIVS));
	cr_assert_eq(r.has_user, user != NULL);
	cr_assert_eq((r.flags & CBOX_EXEC_USER) != 0, user != NULL);
	if (user) {
		cr_assert_eq(r.uid, user->uid);
		cr_assert_eq(r.gid, user->gid);
		cr_assert_eq(r.ngroups, user->ngroups);
		for (size_t i = 0; i < user->ngroups; i++)
			cr_assert_eq(r.groups[i], user->groups[i], "group %zu", i);
	} else {
		cr_assert_eq(r.uid, 0);
		cr_assert_eq(r.gid, 0);
		cr_assert_eq(r.ngroups, 0);
	}
	if (r.ngroups == 0)
		cr_assert_null(r.groups);
	struct cbox_exec_user u2 = {r.uid, r.gid, r.ngroups, r.groups};
	cr_assert_eq(cbox_exec_req_encode(r.argv, r.envp, r.cwd, r.flags, r.has_user ? &u2 : NULL,
	                                  &again, &len2),
	             0);
	cr_assert_eq(len2, len);
	cr_assert_arr_eq(again, out, len);
	cbox_exec_req_release(&r);
	cr_assert_null(r.groups);
	free(out);
	free(again);
}

Test(exec_req, round_trip_without_user)
{
	round_trip(0, NULL);
	round_trip(CBOX_EXEC_TTY, NULL);
	round_trip(CBOX_EXEC_NO_NEW_PRIVS, NULL);
}

Test(exec_req, round_trip_user_no_groups)
{
	struct cbox_exec_user u = {1000, 1000, 0, NULL};
	round_trip(0, &u);
	round_trip(CBOX_EXEC_TTY, &u);
	round_trip(CBOX_EXEC_TTY | CBOX_EXEC_NO_NEW_PRIVS, &u);
}

Test(exec_req, round_trip_user_one_group)
{
	uint32_t g[] = {27};
	struct cbox_exec_user u = {0, 0, 1, g};
	round_trip(CBOX_EXEC_TTY, &u);
}

Test(exec_req, round_trip_user_three_groups)
{
	uint32_t g[] = {0, 0xfffffffe, 0x01020304};
	struct cbox_exec_user u = {0xfffffffe, 65534, 3, g};
	round_trip(0, &u);
}

Test(exec_req, wire_layout_of_the_user_section)
{
	uint32_t g[] = {10, 0x01020304};
	struct cbox_exec_user u = {1000, 100, 2, g};
	char *const argv[] = {"id", NULL};
	char *out = NULL;
	size_t len = 0;
	struct msg m;

	hdr(&m, CBOX_EXEC_TTY | CBOX_EXEC_USER, 1, 0);
	u32(&m, 1000);
	u32(&m, 100);
	u32(&m, 2);
	u32(&m, 10);
	u32(&m, 0x01020304);
	str(&m, "id");
	str(&m, "/");
	cr_assert_eq(cbox_exec_req_encode(argv, NULL, "/", CBOX_EXEC_TTY, &u, &out, &len), 0);
	cr_assert_eq(len, m.len);
	cr_assert_arr_eq(out, m.b, m.len);
	free(out);
}

/* The ids sit at offsets that are not multiples of 4 once the message is not aligned itself;
 * under UBSan an unaligned load would fail this. */
Test(exec_req, decode_unaligned_message)
{
	uint32_t g[] = {1, 2, 3};
	struct cbox_exec_user u = {5, 6, 3, g};
	char *out = NULL;
	size_t len = 0;
	struct cbox_exec_req r;

	cr_assert_eq(cbox_exec_req_encode(ARGV, ENVP, "/", 0, &u, &out, &len), 0);
	char *shifted = malloc(len + 1);
	cr_assert_not_null(shifted);
	memcpy(shifted + 1, out, len);
	cr_assert_eq(cbox_exec_req_decode(shifted + 1, len, &r), 0);
	cr_assert_eq(r.ngroups, 3);
	cr_assert_eq(r.groups[2], 3);
	cbox_exec_req_release(&r);
	free(shifted);
	free(out);
}

Test(exec_req, encode_sets_and_clears_the_user_flag)
{
	char *out = NULL;
	size_t len = 0;
	struct cbox_exec_req r;

	/* A caller passing CBOX_EXEC_USER without a user gets no user section. */
	cr_assert_eq(cbox_exec_req_encode(ARGV, ENVP, "/", CBOX_EXEC_USER, NULL, &out, &len), 0);
	cr_assert_eq(cbox_exec_req_decode(out, len, &r), 0);
	cr_assert_not(r.has_user);
	cr_assert_eq(r.flags, 0);
	cbox_exec_req_release(&r);
	free(out);
}

Test(exec_req, user_section_too_short_for_the_ids)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_USER, 1, 0);
	cr_assert_eq(decode(&m, &r), -EINVAL);
	u32(&m, 1000);
	u32(&m, 1000);
	cr_assert_eq(decode(&m, &r), -EINVAL);
	m.b[m.len++] = 0; /* 11 of the 12 bytes */
	cr_assert_eq(decode(&m, &r), -EINVAL);
}

Test(exec_req, user_section_too_short_for_the_groups)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_USER, 1, 0);
	u32(&m, 1000);
	u32(&m, 1000);
	u32(&m, 3);
	u32(&m, 1);
	u32(&m, 2);
	cr_assert_eq(decode(&m, &r), -EINVAL);
	m.b[m.len++] = 3; /* 1 byte of the third id */
	cr_assert_eq(decode(&m, &r), -EINVAL);
}

/* A count larger than the ids sent swallows the start of the strings: the strings left no longer
 * match argc/envc. */
Test(exec_req, groups_count_runs_past_the_strings)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_USER, 1, 0);
	u32(&m, 1000);
	u32(&m, 1000);
	u32(&m, 2);
	u32(&m, 7);
	str(&m, "sh");
	str(&m, "/");
	cr_assert_eq(decode(&m, &r), -EINVAL);

	hdr(&m, CBOX_EXEC_USER, 1, 1);
	u32(&m, 1000);
	u32(&m, 1000);
	u32(&m, 1000); /* far past the end */
	str(&m, "true");
	str(&m, "A=b");
	str(&m, "/");
	cr_assert_eq(decode(&m, &r), -EINVAL);
}

Test(exec_req, too_many_groups)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_USER, 1, 0);
	u32(&m, 0);
	u32(&m, 0);
	u32(&m, CBOX_EXEC_REQ_MAX_GROUPS + 1);
	str(&m, "sh");
	str(&m, "/");
	cr_assert_eq(decode(&m, &r), -E2BIG);
	m.b[24] = 0xff, m.b[25] = 0xff, m.b[26] = 0xff, m.b[27] = 0xff;
	cr_assert_eq(decode(&m, &r), -E2BIG);

	/* Encode: past the limit, and at the limit, where the ids alone fill CBOX_EXEC_REQ_MAX. */
	uint32_t *g = calloc(CBOX_EXEC_REQ_MAX_GROUPS + 1, sizeof(uint32_t));
	cr_assert_not_null(g);
	struct cbox_exec_user u = {0, 0, CBOX_EXEC_REQ_MAX_GROUPS + 1, g};
	char *out = NULL;
	size_t len = 0;
	cr_assert_eq(cbox_exec_req_encode(ARGV, NULL, "/", 0, &u, &out, &len), -E2BIG);
	u.ngroups = CBOX_EXEC_REQ_MAX_GROUPS;
	cr_assert_eq(cbox_exec_req_encode(ARGV, NULL, "/", 0, &u, &out, &len), -E2BIG);
	cr_assert_null(out);
	free(g);
}

/* (uint32_t)-1 is "no id" to setresuid & co: refused as a uid, a gid or a group, both ways. */
Test(exec_req, ids_of_minus_one)
{
	for (int which = 0; which < 3; which++) {
		uint32_t id[3] = {1000, 1000, 5};
		id[which] = 0xffffffff;
		struct cbox_exec_req r;
		struct msg m;
		hdr(&m, CBOX_EXEC_USER, 1, 0);
		u32(&m, id[0]);
		u32(&m, id[1]);
		u32(&m, 2);
		u32(&m, 4);
		u32(&m, id[2]);
		str(&m, "sh");
		str(&m, "/");
		cr_assert_eq(decode(&m, &r), -EINVAL, "id %d", which);

		uint32_t g[] = {4, id[2]};
		struct cbox_exec_user u = {id[0], id[1], 2, g};
		char *out = NULL;
		size_t len = 0;
		cr_assert_eq(cbox_exec_req_encode(ARGV, NULL, "/", 0, &u, &out, &len), -EINVAL,
		             "id %d", which);
	}
}

/* The flag with the strings right after the header: they are read as the user section. */
Test(exec_req, flag_without_a_user_section)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_USER, 1, 0);
	str(&m, "sh");
	str(&m, "/");
	cr_assert_eq(decode(&m, &r), -EINVAL);

	char *out = NULL;
	size_t len = 0;
	cr_assert_eq(cbox_exec_req_encode(ARGV, ENVP, "/work", 0, NULL, &out, &len), 0);
	out[4] |= CBOX_EXEC_USER;
	cr_assert_lt(cbox_exec_req_decode(out, len, &r), 0);
	free(out);
}

Test(exec_req, groups_null_with_a_count)
{
	struct cbox_exec_user u = {1, 1, 2, NULL};
	char *out = NULL;
	size_t len = 0;
	cr_assert_eq(cbox_exec_req_encode(ARGV, NULL, "/", 0, &u, &out, &len), -EINVAL);
}

Test(exec_req, unknown_flags_rejected)
{
	static const uint32_t bad[] = {8u, 16u, 0x80000000u, CBOX_EXEC_TTY | 8u};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cbox_exec_req r;
		struct msg m;
		hdr(&m, bad[i], 1, 0);
		str(&m, "sh");
		str(&m, "/");
		cr_assert_eq(decode(&m, &r), -EINVAL, "flags %#x", bad[i]);

		char *out = NULL;
		size_t len = 0;
		cr_assert_eq(cbox_exec_req_encode(ARGV, NULL, "/", bad[i], NULL, &out, &len),
		             -EINVAL, "flags %#x", bad[i]);
	}
}

Test(exec_req, plain_request_still_decodes)
{
	struct cbox_exec_req r;
	struct msg m;

	hdr(&m, CBOX_EXEC_TTY, 1, 0);
	str(&m, "bash");
	str(&m, "/work");
	cr_assert_eq(decode(&m, &r), 0);
	cr_assert_not(r.has_user);
	cr_assert_null(r.groups);
	cr_assert_str_eq(r.argv[0], "bash");
	cbox_exec_req_release(&r);
}
