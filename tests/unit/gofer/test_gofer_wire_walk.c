/* The gofer wire format of the batched and opening walks: WALKN, WALKDIR, CLUNKN, WALKOPEN and
 * WALKNOPEN round-trip, and the decoders refuse every reply that does not fit (the single
 * requests: test_gofer_wire.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cbox/gofer.h"
#include "cbox/gofer_wire.h"
#include "wire_check.h"

static unsigned char buf[CBOX_GOFER_MSG_MAX];

static int enc_walkn(const char *path)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_WALKN, .tag = 3, .fid = 1, .name2 = path, .name2_len = strlen(path)};
	return cbox_gofer_encode_request(&q, buf, sizeof(buf));
}

Test(gofer_wire, walkn_paths)
{
	cr_expect_eq(cbox_gofer_check_walk_path("usr/lib/x", 9), 3);
	cr_expect_eq(cbox_gofer_check_walk_path("a", 1), 1);
	struct cbox_gofer_req w = {
	    .type = CBOX_GOFER_WALKN, .fid = 1, .name2 = "usr/lib/python3.11", .name2_len = 18};
	expect_name2_round_trip(&w, "usr/lib/python3.11");
	int len;
	struct cbox_gofer_req q;
	/* Each name is one WALK would take: no empty one, no "." or "..", no NUL. */
	static const char *bad[] = {"", "/usr", "usr/", "usr//lib", "usr/../etc", "./usr", "usr/."};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(enc_walkn(bad[i]), -EINVAL, "path '%s'", bad[i]);
	cr_expect_eq(cbox_gofer_check_walk_path("a\0b", 3), -EINVAL);
	/* At most CBOX_GOFER_WALKN_MAX names, each at most 255 bytes. */
	char many[64] = "";
	for (unsigned i = 0; i < CBOX_GOFER_WALKN_MAX; i++)
		strcat(many, i ? "/a" : "a");
	cr_expect_eq(enc_walkn(many) > 0, true);
	strcat(many, "/a");
	cr_expect_eq(enc_walkn(many), -EINVAL);
	char longname[300];
	memset(longname, 'x', 256);
	longname[256] = '\0';
	cr_expect_eq(enc_walkn(longname), -ENAMETOOLONG);
	/* The decoder refuses what the encoder would not send: patch a valid packet. */
	len = enc_walkn("a/b");
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), 0);
	buf[len - 1] = '/'; /* "a//" */
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), -EINVAL);
	buf[len - 1] = '.'; /* "a/." */
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), -EINVAL);
}

Test(gofer_wire, walkn_replies)
{
	struct cbox_gofer_walked w[3] = {{.fid = 5}, {.fid = 6}, {.fid = 7}};
	w[0].stat.mode = S_IFDIR | 0755;
	w[1].stat.mode = S_IFDIR | 0755;
	w[2].stat.mode = S_IFLNK | 0777;
	w[2].stat.flags = CBOX_GOFER_STAT_RDONLY;
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKN,
	                             .tag = 4,
	                             .nwalked = 3,
	                             .walk_error = ENOENT,
	                             .walked = w};
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 8 + 3 * 128);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.nwalked, 3);
	cr_expect_eq(d.walk_error, ENOENT);
	struct cbox_gofer_walked got;
	cbox_gofer_reply_walked(&d, 2, &got);
	cr_expect_eq(got.fid, 7);
	cr_expect(S_ISLNK(got.stat.mode));
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len - 1, &d), -EPROTO);
	/* A count of 0 or past the maximum, a body that does not hold the count, a pad, an
	 * unknown stat flag or an error that is no errno: each refused. */
	static const uint32_t counts[] = {0, 2, 4, CBOX_GOFER_WALKN_MAX + 1, 0xffffffffu};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		cbox_gofer_encode_reply(&r, buf, sizeof(buf));
		memcpy(buf + 16, &counts[i], 4);
		cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL, "count %u",
		             counts[i]);
	}
	int32_t errs[] = {-1, 4096};
	for (size_t i = 0; i < 2; i++) {
		cbox_gofer_encode_reply(&r, buf, sizeof(buf));
		memcpy(buf + 20, &errs[i], 4);
		cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	}
	cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	buf[16 + 8 + 128 + 4] = 1; /* the second entry's pad */
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	w[1].stat.flags = 2;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	w[1].stat.flags = 0;
	r.nwalked = 0;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
}

Test(gofer_wire, walkdir_requests)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_WALKDIR,
	                           .tag = 9,
	                           .fid = 4,
	                           .flags = CBOX_GOFER_WALKDIR_MAX,
	                           .name = "entry",
	                           .name_len = 5};
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 4 + 2 + 5);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.type, CBOX_GOFER_WALKDIR);
	cr_expect_eq(d.fid, 4);
	cr_expect_eq(d.flags, CBOX_GOFER_WALKDIR_MAX);
	cr_expect_eq(d.name_len, 5);
	cr_expect(memcmp(d.name, "entry", 5) == 0);
	/* WRAP travels with the count. */
	q.flags = 3 | CBOX_GOFER_WALKDIR_WRAP;
	cr_assert_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), len);
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.flags, 3 | CBOX_GOFER_WALKDIR_WRAP);
	q.flags = CBOX_GOFER_WALKDIR_MAX;
	/* A count of 0 or past the maximum, with WRAP or not, or another bit: refused by both
	 * ends. */
	static const uint32_t counts[] = {0,
	                                  CBOX_GOFER_WALKDIR_MAX + 1,
	                                  0xffffffffu,
	                                  CBOX_GOFER_WALKDIR_WRAP,
	                                  CBOX_GOFER_WALKDIR_WRAP | (CBOX_GOFER_WALKDIR_MAX + 1),
	                                  0x40000000u | 1,
	                                  0x10000u | 1};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		q.flags = counts[i];
		cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
		q.flags = 1;
		cr_assert_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), len);
		memcpy(buf + 20, &counts[i], 4);
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL, "count %u",
		             counts[i]);
	}
	/* The name is one WALK would take. */
	q.flags = 2;
	q.name = "..";
	q.name_len = 2;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.name = "a/b";
	q.name_len = 3;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.name = "ab";
	q.name_len = 2;
	len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	buf[len - 1] = '/';
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len - 1, &d), -EPROTO);
}

/* Records for a WALKDIR reply: names[i] with fid 10 + i. */
static size_t walkdir_records(char *rec, size_t size, const char *const *names, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		struct cbox_gofer_walked w = {.fid = 10 + (uint32_t)i};
		w.stat.mode = S_IFREG | 0644;
		cr_assert_eq(cbox_gofer_put_dirent(rec, size, &len, &w, names[i], strlen(names[i])),
		             0);
	}
	return len;
}

Test(gofer_wire, walkdir_replies)
{
	static const char *const names[] = {"first", "b", "third-entry"};
	char rec[1024];
	size_t rlen = walkdir_records(rec, sizeof(rec), names, 3);
	cr_assert_eq(rlen, 3 * (128 + 2) + 5 + 1 + 11);
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKDIR,
	                             .tag = 2,
	                             .nwalked = 3,
	                             .walked = rec,
	                             .walked_len = rlen};
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + (int)rlen);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.nwalked, 3);
	size_t off = 0;
	struct cbox_gofer_walked w;
	const char *name;
	size_t nlen;
	for (uint32_t i = 0; i < 3; i++) {
		cr_assert_eq(cbox_gofer_reply_dirent(&d, &off, &w, &name, &nlen), 0);
		cr_expect_eq(w.fid, 10 + i);
		cr_expect_eq(nlen, strlen(names[i]));
		cr_expect(memcmp(name, names[i], nlen) == 0);
	}
	cr_expect_eq(cbox_gofer_reply_dirent(&d, &off, &w, &name, &nlen), -ENOENT);
	/* A count that is not the number of records, 0, or past the maximum. */
	static const uint32_t counts[] = {0, 2, 4, CBOX_GOFER_WALKDIR_MAX + 1};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		cbox_gofer_encode_reply(&r, buf, sizeof(buf));
		memcpy(buf + 16, &counts[i], 4);
		cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL, "count %u",
		             counts[i]);
	}
	/* A record cut short, a pad, an unknown stat flag, a name that is no WALK name. */
	cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len - 1, &d), -EPROTO);
	buf[16 + 4 + 4] = 1; /* the first record's pad */
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	buf[16 + 4 + 8 + offsetof(struct cbox_gofer_stat, flags)] = 2;
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	static const char *const bad[][1] = {{"."}, {".."}, {"a/b"}};
	for (size_t i = 0; i < 3; i++) {
		size_t blen = walkdir_records(rec, sizeof(rec), bad[i], 1);
		struct cbox_gofer_reply b = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKDIR,
		                             .nwalked = 1,
		                             .walked = rec,
		                             .walked_len = blen};
		cr_expect_eq(cbox_gofer_encode_reply(&b, buf, sizeof(buf)), -EINVAL, "%s",
		             bad[i][0]);
	}
	/* A record too large for the space left is not written. */
	size_t used = 0;
	struct cbox_gofer_walked one = {.fid = 1};
	cr_expect_eq(cbox_gofer_put_dirent(rec, 130, &used, &one, "abc", 3), -ENOBUFS);
	cr_expect_eq(used, 0);
	cr_expect_eq(cbox_gofer_put_dirent(rec, 133, &used, &one, "abc", 3), 0);
	cr_expect_eq(used, 133);
}

/* The largest WALKDIR reply fits the largest packet. */
Test(gofer_wire, walkdir_largest)
{
	static char rec[CBOX_GOFER_WALKDIR_MAX * (128 + 2 + CBOX_GOFER_NAME_MAX)];
	size_t len = 0;
	char name[CBOX_GOFER_NAME_MAX];
	memset(name, 'n', sizeof(name));
	for (unsigned i = 0; i < CBOX_GOFER_WALKDIR_MAX; i++) {
		struct cbox_gofer_walked w = {.fid = i + 1};
		snprintf(name, 8, "%07u", i);
		name[7] = 'n';
		cr_assert_eq(cbox_gofer_put_dirent(rec, sizeof(rec), &len, &w, name, sizeof(name)),
		             0);
	}
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKDIR,
	                             .nwalked = CBOX_GOFER_WALKDIR_MAX,
	                             .walked = rec,
	                             .walked_len = len};
	static unsigned char big[CBOX_GOFER_MSG_MAX];
	int n = cbox_gofer_encode_reply(&r, big, sizeof(big));
	cr_assert_gt(n, 0);
	struct cbox_gofer_reply d;
	cr_expect_eq(cbox_gofer_decode_reply(big, (size_t)n, &d), 0);
}

Test(gofer_wire, clunkn)
{
	uint32_t fids[3] = {7, 8, 4242};
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_CLUNKN, .tag = 5, .value = fids, .value_len = 3};
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 12);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.value_len, 3);
	cr_expect_eq(cbox_gofer_req_fid(&d, 0), 7);
	cr_expect_eq(cbox_gofer_req_fid(&d, 2), 4242);
	/* A count of 0, past the maximum, or not the number of fids in the body. */
	static const uint32_t counts[] = {0, 2, 4, CBOX_GOFER_CLUNKN_MAX + 1, 0xffffffffu};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		cbox_gofer_encode_request(&q, buf, sizeof(buf));
		memcpy(buf + 16, &counts[i], 4);
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL, "count %u",
		             counts[i]);
	}
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len - 1, &d), -EPROTO);
	q.value_len = 0;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.value_len = CBOX_GOFER_CLUNKN_MAX + 1;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	/* The largest fits a packet. */
	static uint32_t many[CBOX_GOFER_CLUNKN_MAX];
	q.value = many;
	q.value_len = CBOX_GOFER_CLUNKN_MAX;
	len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	/* Its reply is empty. */
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_CLUNKN, .tag = 5};
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16);
	struct cbox_gofer_reply rd;
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &rd), 0);
}

/* The STALE flag belongs to STAT replies only. */
/* WALKOPEN and WALKNOPEN have WALK's and WALKN's bodies; CBOX_GOFER_STAT_OPENED (an fd comes
 * with the reply) is refused anywhere but on what they opened. */
Test(gofer_wire, walk_open)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_WALKOPEN, .tag = 2, .fid = 1, .name = "os.py", .name_len = 5};
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.type, CBOX_GOFER_WALKOPEN);
	cr_expect_eq(d.fid, 1);
	cr_expect_eq(d.name_len, 5);
	cr_expect_eq(memcmp(d.name, "os.py", 5), 0);
	q.name = "..";
	q.name_len = 2;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	struct cbox_gofer_req n = {
	    .type = CBOX_GOFER_WALKNOPEN, .fid = 1, .name2 = "usr/lib", .name2_len = 7};
	expect_name2_round_trip(&n, "usr/lib");
	expect_name2_refused(&n, "usr//lib", 8);

	struct cbox_gofer_reply r = {
	    .type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKOPEN,
	    .tag = 2,
	    .fid = 9,
	    .stat = {.mode = S_IFREG | 0644,
	             .flags = CBOX_GOFER_STAT_RDONLY | CBOX_GOFER_STAT_OPENED}};
	struct cbox_gofer_reply got;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &got), 0);
	cr_expect_eq(got.fid, 9);
	cr_expect_eq(got.stat.flags, CBOX_GOFER_STAT_RDONLY | CBOX_GOFER_STAT_OPENED);
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALK; /* a WALK never opens */
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &got), -EINVAL);

	struct cbox_gofer_walked w[2] = {{.fid = 5}, {.fid = 6}};
	w[0].stat.mode = S_IFDIR | 0755;
	w[1].stat.mode = S_IFREG | 0644;
	w[1].stat.flags = CBOX_GOFER_STAT_RDONLY | CBOX_GOFER_STAT_OPENED;
	r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKNOPEN,
	                              .tag = 3,
	                              .nwalked = 2,
	                              .walked = w};
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &got), 0);
	struct cbox_gofer_walked last;
	cbox_gofer_reply_walked(&got, 1, &last);
	cr_expect_eq(last.stat.flags, CBOX_GOFER_STAT_RDONLY | CBOX_GOFER_STAT_OPENED);
	/* Refused: the flag on a plain WALKN, after a name that failed, or before the last. */
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKN;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKNOPEN;
	r.walk_error = ENOENT;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	r.walk_error = 0;
	w[0].stat.flags = CBOX_GOFER_STAT_OPENED;
	w[1].stat.flags = 0;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	/* The decoder too, on a packet patched after a valid encode. */
	w[0].stat.flags = 0;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	uint64_t opened = CBOX_GOFER_STAT_OPENED;
	size_t flags_at = 16 + 8 + offsetof(struct cbox_gofer_walked, stat) +
	                  offsetof(struct cbox_gofer_stat, flags);
	memcpy(buf + flags_at, &opened, sizeof(opened)); /* the first entry's */
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &got), -EINVAL);
}
