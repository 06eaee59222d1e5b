/* The gofer wire format: every request and reply type round-trips, and the decoders refuse every
 * kind of malformed packet the brief lists. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cbox/gofer.h"
#include "cbox/gofer_wire.h"

static unsigned char buf[CBOX_GOFER_MSG_MAX];

static int enc(uint32_t type, const char *name, const char *name2)
{
	static const uint32_t one_fid = 3; /* CLUNKN's list */
	bool list = type == CBOX_GOFER_CLUNKN;
	struct cbox_gofer_req q = {.type = type,
	                           .value = list ? &one_fid : NULL,
	                           .value_len = list ? 1 : 0,
	                           .tag = 7,
	                           .fid = 3,
	                           .fid2 = 4,
	                           .flags = type == CBOX_GOFER_UNLINK ||
	                                            type == CBOX_GOFER_SETXATTR ||
	                                            type == CBOX_GOFER_RENAME
	                                        ? 1
	                                        : 0x42,
	                           .mode = 0644,
	                           .name = name,
	                           .name_len = name ? strlen(name) : 0,
	                           .name2 = name2,
	                           .name2_len = name2 ? strlen(name2) : 0};
	return cbox_gofer_encode_request(&q, buf, sizeof(buf));
}

Test(gofer_wire, every_request_round_trips)
{
	for (uint32_t t = CBOX_GOFER_WALK; t <= CBOX_GOFER_TYPE_MAX; t++) {
		int len = enc(t, "name", t == CBOX_GOFER_SYMLINK ? "../target" : "other");
		cr_assert_gt(len, 16, "type %u", t);
		struct cbox_gofer_req q;
		cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), 0, "type %u", t);
		cr_expect_eq(q.type, t);
		cr_expect_eq(q.tag, 7);
		cr_expect_eq(t == CBOX_GOFER_CLUNKN ? cbox_gofer_req_fid(&q, 0) : q.fid, 3);
		if (q.name)
			cr_expect_eq(memcmp(q.name, "name", 4), 0);
		if (t == CBOX_GOFER_RENAME || t == CBOX_GOFER_LINK)
			cr_expect_eq(q.fid2, 4);
		if (t == CBOX_GOFER_SYMLINK)
			cr_expect_eq(q.name2_len, 9);
		/* One byte too many or too few is a body of the wrong length. */
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len - 1, &q), -EPROTO);
		uint32_t l = (uint32_t)len + 1;
		memcpy(buf + 4, &l, 4);
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len + 1, &q), -EINVAL,
		             "type %u with a trailing byte", t);
		l = (uint32_t)len - 1;
		memcpy(buf + 4, &l, 4);
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len - 1, &q), -EINVAL,
		             "type %u one byte short", t);
	}
}

Test(gofer_wire, header_checks)
{
	struct cbox_gofer_req q;
	int len = enc(CBOX_GOFER_STAT, NULL, NULL);
	cr_assert_eq(len, 20);
	cr_expect_eq(cbox_gofer_decode_request(buf, 0, &q), -EPROTO);
	cr_expect_eq(cbox_gofer_decode_request(buf, 15, &q), -EPROTO);
	cr_expect_eq(cbox_gofer_decode_request(buf, 19, &q), -EPROTO); /* len field says 20 */
	uint32_t bad = 99;
	memcpy(buf, &bad, 4);
	cr_expect_eq(cbox_gofer_decode_request(buf, 20, &q), -EPROTO);
	bad = 0;
	memcpy(buf, &bad, 4);
	cr_expect_eq(cbox_gofer_decode_request(buf, 20, &q), -EPROTO);
	cr_expect_eq(cbox_gofer_decode_request(NULL, 20, &q), -EPROTO);
}

/* Patch a WALK packet's name bytes directly, bypassing the encoder's checks. */
static int raw_walk(const char *name, size_t n)
{
	struct cbox_gofer_hdr h = {.type = CBOX_GOFER_WALK, .len = (uint32_t)(16 + 4 + 2 + n)};
	uint32_t fid = 0;
	uint16_t nl = (uint16_t)n;
	memcpy(buf, &h, 16);
	memcpy(buf + 16, &fid, 4);
	memcpy(buf + 20, &nl, 2);
	memcpy(buf + 22, name, n);
	struct cbox_gofer_req q;
	return cbox_gofer_decode_request(buf, h.len, &q);
}

Test(gofer_wire, bad_names_refused)
{
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	cr_expect_eq(raw_walk("ok", 2), 0);
	cr_expect_eq(raw_walk(longname, 255), 0);
	cr_expect_eq(raw_walk(longname, 256), -EINVAL);
	cr_expect_eq(raw_walk("", 0), -EINVAL);
	cr_expect_eq(raw_walk(".", 1), -EINVAL);
	cr_expect_eq(raw_walk("..", 2), -EINVAL);
	cr_expect_eq(raw_walk("a/b", 3), -EINVAL);
	cr_expect_eq(raw_walk("a\0b", 3), -EINVAL);
	cr_expect_eq(raw_walk("...", 3), 0);
	/* The encoder refuses the same names, with ENAMETOOLONG for the long one. */
	longname[256] = '\0';
	cr_expect_eq(enc(CBOX_GOFER_WALK, longname, NULL), -ENAMETOOLONG);
	cr_expect_eq(enc(CBOX_GOFER_WALK, "..", NULL), -EINVAL);
	cr_expect_eq(enc(CBOX_GOFER_RENAME, "a", "b/c"), -EINVAL);
	cr_expect_eq(enc(CBOX_GOFER_MKDIR, "", NULL), -EINVAL);
}

Test(gofer_wire, symlink_targets)
{
	static char target[4100];
	memset(target, 'x', sizeof(target) - 1);
	target[4095] = '\0';
	cr_expect_gt(enc(CBOX_GOFER_SYMLINK, "l", target), 0);
	target[4095] = 'x';
	target[4096] = '\0';
	cr_expect_eq(enc(CBOX_GOFER_SYMLINK, "l", target), -ENAMETOOLONG);
	cr_expect_eq(enc(CBOX_GOFER_SYMLINK, "l", ""), -EINVAL);
	/* A NUL inside the target, forged on the wire. */
	int len = enc(CBOX_GOFER_SYMLINK, "l", "abc");
	buf[len - 2] = '\0';
	struct cbox_gofer_req q;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), -EINVAL);
}

Test(gofer_wire, unlink_isdir_must_be_boolean)
{
	int len = enc(CBOX_GOFER_UNLINK, "x", NULL);
	cr_assert_gt(len, 0);
	uint32_t two = 2;
	memcpy(buf + 20, &two, 4);
	struct cbox_gofer_req q;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), -EINVAL);
}

Test(gofer_wire, replies_round_trip)
{
	struct cbox_gofer_reply r = {
	    .type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALK, .tag = 9, .fid = 5};
	r.stat.ino = 1234;
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 120);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.fid, 5);
	cr_expect_eq(d.stat.ino, 1234);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len - 1, &d), -EPROTO);

	r = (struct cbox_gofer_reply){
	    .type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_READLINK, .target = "/etc", .target_len = 4};
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.target_len, 4);
	cr_expect_eq(memcmp(d.target, "/etc", 4), 0);

	r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_ERROR, .error = ENOENT};
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.error, ENOENT);
	r.error = 0;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	int32_t bad = -5;
	memcpy(buf + 16, &bad, 4);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | 0x7f};
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, 8), -EINVAL);
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, 20), -ENOBUFS);
}

Test(gofer_wire, allowed_syscalls_sorted_unique)
{
	size_t n = 0;
	const int *v = cbox_gofer_allowed_syscalls(&n);
	cr_assert_gt(n, 10);
	for (size_t i = 1; i < n; i++)
		cr_expect_lt(v[i - 1], v[i], "entry %zu", i);
}

static int enc_setattr(const struct cbox_gofer_setattr *a)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SETATTR, .tag = 3, .fid = 9, .attr = *a};
	return cbox_gofer_encode_request(&q, buf, sizeof(buf));
}

Test(gofer_wire, setattr_round_trips)
{
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_ALL | CBOX_GOFER_SET_BY_NAME,
	                               .mode = 0640,
	                               .uid = 1000,
	                               .gid = (uint32_t)-1,
	                               .size = 1 << 20,
	                               .atime_sec = -5,
	                               .atime_nsec = 999999999,
	                               .mtime_sec = 1700000000,
	                               .mtime_nsec = UTIME_OMIT};
	int len = enc_setattr(&a);
	cr_assert_eq(len, 16 + 6 * 4 + 5 * 8);
	struct cbox_gofer_req q;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), 0);
	cr_expect_eq(q.type, CBOX_GOFER_SETATTR);
	cr_expect_eq(q.fid, 9);
	cr_expect_eq(memcmp(&q.attr, &a, sizeof(a)), 0);
	cr_expect_null(q.name);
	/* The pad word must be 0. */
	buf[16 + 20] = 1;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), -EINVAL);
	/* An OK reply to SETATTR is empty. */
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_SETATTR, .tag = 3};
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &r), 0);
}

/* Encode a valid SETATTR, patch one field's bytes and decode it. */
static int patched_setattr(size_t off, const void *val, size_t n)
{
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_SIZE | CBOX_GOFER_SET_TIMES};
	int len = enc_setattr(&a);
	cr_assert_gt(len, 0);
	memcpy(buf + 16 + off, val, n);
	struct cbox_gofer_req q;
	return cbox_gofer_decode_request(buf, (size_t)len, &q);
}

Test(gofer_wire, setattr_fields_checked)
{
	uint32_t v = 64; /* 32 is CBOX_GOFER_SET_BY_NAME */
	cr_expect_eq(patched_setattr(4, &v, 4), -EINVAL, "unknown valid bit");
	int64_t neg = -1, big = 1000000000, now = UTIME_NOW, omit = UTIME_OMIT, ok = 999999999;
	cr_expect_eq(patched_setattr(24, &neg, 8), -EINVAL, "negative size");
	cr_expect_eq(patched_setattr(40, &big, 8), -EINVAL, "atime nsec too big");
	cr_expect_eq(patched_setattr(56, &neg, 8), -EINVAL, "negative mtime nsec");
	cr_expect_eq(patched_setattr(40, &now, 8), 0, "UTIME_NOW");
	cr_expect_eq(patched_setattr(56, &omit, 8), 0, "UTIME_OMIT");
	cr_expect_eq(patched_setattr(56, &ok, 8), 0);
	cr_expect_eq(patched_setattr(32, &neg, 8), 0, "a negative second is a valid time");
	/* Without their bits, size and nsec are not checked (not used). */
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_MODE, .size = -1, .atime_nsec = -1};
	cr_expect_gt(enc_setattr(&a), 0);
	/* The encoder refuses what the decoder would. */
	a = (struct cbox_gofer_setattr){.valid = 64};
	cr_expect_eq(enc_setattr(&a), -EINVAL);
	a = (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE, .size = -2};
	cr_expect_eq(enc_setattr(&a), -EINVAL);
	a = (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_TIMES, .mtime_nsec = 1000000000};
	cr_expect_eq(enc_setattr(&a), -EINVAL);
}

Test(gofer_wire, mknod_round_trips)
{
	int len = enc(CBOX_GOFER_MKNOD, "fifo", NULL);
	cr_assert_eq(len, 16 + 4 + 8 + 4 + 2 + 4);
	struct cbox_gofer_req q;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &q), 0);
	cr_expect_eq(q.fid, 3);
	cr_expect_eq(q.mode, 0644);
	cr_expect_eq(q.name_len, 4);
	cr_expect_eq(enc(CBOX_GOFER_MKNOD, "..", NULL), -EINVAL);
	cr_expect_eq(enc(CBOX_GOFER_MKNOD, "a/b", NULL), -EINVAL);
	struct cbox_gofer_reply r = {
	    .type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_MKNOD, .tag = 2, .fid = 77};
	r.stat.mode = 010644;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 120);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.fid, 77);
	cr_expect_eq(d.stat.mode, 010644);
	/* A MKNOD reply without its stat is malformed. */
	uint32_t l = 20;
	memcpy(buf + 4, &l, 4);
	cr_expect_eq(cbox_gofer_decode_reply(buf, 20, &d), -EINVAL);
}

/* q, whose name2 is s, encodes and decodes back to its fid and that name2. */
static void expect_name2_round_trip(const struct cbox_gofer_req *q, const char *s)
{
	int len = cbox_gofer_encode_request(q, buf, sizeof(buf));
	cr_assert_gt(len, 0, "encode '%s'", s);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0, "decode '%s'", s);
	cr_expect_eq(d.fid, q->fid);
	cr_expect_eq(d.name2_len, strlen(s));
	cr_expect_eq(memcmp(d.name2, s, strlen(s)), 0);
}

/* The encoder refuses q with name2 set to the len bytes at s. */
static void expect_name2_refused(struct cbox_gofer_req *q, const char *s, size_t len)
{
	q->name2 = s;
	q->name2_len = len;
	cr_expect_eq(cbox_gofer_encode_request(q, buf, sizeof(buf)), -EINVAL, "'%.*s'", (int)len,
	             s);
}

Test(gofer_wire, bind_paths)
{
	char p[CBOX_GOFER_SOCKPATH_MAX + 2];
	memset(p, 'a', sizeof(p));
	p[0] = '/';
	cr_expect_eq(cbox_gofer_check_sockpath(p, CBOX_GOFER_SOCKPATH_MAX), 0);
	cr_expect_eq(cbox_gofer_check_sockpath(p, CBOX_GOFER_SOCKPATH_MAX + 1), -ENAMETOOLONG);
	cr_expect_eq(cbox_gofer_check_sockpath(p, 0), -EINVAL);
	cr_expect_eq(cbox_gofer_check_sockpath("a\0b", 3), -EINVAL);
	/* A path with '/' and ".." is what BIND carries (unlike a name): the gofer's kernel
	 * resolves it inside the tree. */
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_BIND, .fid = 5, .name2 = "../x/s", .name2_len = 6};
	expect_name2_round_trip(&q, "../x/s");
	expect_name2_refused(&q, "a\0b", 3);
	/* A NUL smuggled past the encoder is refused by the decoder. */
	q.name2 = "abc";
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	buf[len - 2] = '\0';
	struct cbox_gofer_req d;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
}

Test(gofer_wire, xattr_requests)
{
	static char big[CBOX_GOFER_XVALUE_MAX + 1];
	char name[CBOX_GOFER_XNAME_MAX + 2];
	memset(name, 'n', sizeof(name));
	cr_expect_eq(cbox_gofer_check_xname(name, CBOX_GOFER_XNAME_MAX), 0);
	cr_expect_eq(cbox_gofer_check_xname(name, CBOX_GOFER_XNAME_MAX + 1), -ERANGE);
	cr_expect_eq(cbox_gofer_check_xname(name, 0), -ERANGE);
	cr_expect_eq(cbox_gofer_check_xname("user.\0", 6), -EINVAL);
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SETXATTR,
	                           .fid = 9,
	                           .flags = 2,
	                           .name2 = name,
	                           .name2_len = CBOX_GOFER_XNAME_MAX,
	                           .value = big,
	                           .value_len = CBOX_GOFER_XVALUE_MAX};
	/* The largest request fits the largest packet. */
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, (int)CBOX_GOFER_XVALUE_MAX);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.value_len, CBOX_GOFER_XVALUE_MAX);
	cr_expect_eq(d.flags, 2);
	q.value_len++;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -E2BIG);
	q.value_len = 1;
	q.flags = 4;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.flags = 0;
	q.value_len = 0;
	len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	/* flags is the 5th word: 0x10 is not an xattr flag. */
	buf[20] = 0x10;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
	/* A value length that runs past the packet. */
	buf[20] = 0;
	uint32_t huge = 0xffffffffu;
	memcpy(buf + len - 4, &huge, 4);
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
}

Test(gofer_wire, xattr_replies)
{
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_GETXATTR,
	                             .tag = 3,
	                             .value = "v\0w",
	                             .value_len = 3};
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.value_len, 3);
	cr_expect_eq(memcmp(d.value, "v\0w", 3), 0);
	/* A list must end in NUL, so that a caller splitting it stays inside. */
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_LISTXATTR;
	r.value = "user.a\0user.b";
	r.value_len = 13;
	cr_expect_eq(cbox_gofer_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	r.value_len = 14;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	buf[len - 1] = 'x';
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	r.value_len = 0;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.value_len, 0);
}

Test(gofer_wire, inotify_round_trips)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_INOTIFY, .tag = 9, .fid = 4, .flags = 0x102};
	int n = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)n, &d), 0);
	cr_expect_eq(d.fid, 4);
	cr_expect_eq(d.flags, 0x102);
	/* One byte short of the mask: the body has the wrong length. */
	struct cbox_gofer_hdr h;
	memcpy(&h, buf, sizeof(h));
	h.len = (uint32_t)n - 1;
	memcpy(buf, &h, sizeof(h));
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)n - 1, &d), -EINVAL);
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_INOTIFY, .fid = 7};
	n = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct cbox_gofer_reply rd;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)n, &rd), 0);
	cr_expect_eq(rd.fid, 7, "the watch descriptor");
}

Test(gofer_wire, tmpfile_round_trips)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_TMPFILE, .tag = 5, .fid = 3, .flags = O_RDWR | O_EXCL, .mode = 0600};
	int n = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)n, &d), 0);
	cr_expect_eq(d.fid, 3);
	cr_expect_eq(d.flags, (uint32_t)(O_RDWR | O_EXCL));
	cr_expect_eq(d.mode, 0600);
	cr_expect_null(d.name, "TMPFILE carries no name");
	/* A name's worth of extra bytes: the body has the wrong length. */
	struct cbox_gofer_hdr h;
	memcpy(&h, buf, sizeof(h));
	h.len = (uint32_t)n + 2;
	memcpy(buf, &h, sizeof(h));
	buf[n] = 0;
	buf[n + 1] = 0;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)n + 2, &d), -EINVAL);
	/* The reply: a new fid and the file's attributes, as CREATE's. */
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_TMPFILE, .fid = 11};
	r.stat.ino = 99;
	n = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct cbox_gofer_reply rd;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)n, &rd), 0);
	cr_expect_eq(rd.fid, 11);
	cr_expect_eq(rd.stat.ino, 99);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)n - 4, &rd), -EPROTO, "len mismatch");
}

Test(gofer_wire, rename_flags_checked)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_RENAME,
	                           .tag = 1,
	                           .fid = 3,
	                           .fid2 = 4,
	                           .name = "a",
	                           .name_len = 1,
	                           .name2 = "b",
	                           .name2_len = 1,
	                           .flags = 2 /* RENAME_EXCHANGE */};
	int n = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)n, &d), 0);
	cr_expect_eq(d.flags, 2);
	/* RENAME_WHITEOUT (4) or both NOREPLACE and EXCHANGE (3) never travel. */
	q.flags = 4;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.flags = 3;
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
}

Test(gofer_wire, stat_flags_checked)
{
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT, .tag = 1};
	r.stat.flags = CBOX_GOFER_STAT_RDONLY;
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.stat.flags, CBOX_GOFER_STAT_RDONLY);
	/* A flag the sentry does not know is refused, not ignored (2, STALE, is known: see
	 * stale_flag_on_stat_only). */
	r.stat.flags = 8;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
}

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
	/* A count of 0 or past the maximum, refused by both ends. */
	static const uint32_t counts[] = {0, CBOX_GOFER_WALKDIR_MAX + 1, 0xffffffffu};
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
Test(gofer_wire, stale_flag_on_stat_only)
{
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT, .tag = 1};
	r.stat.flags = CBOX_GOFER_STAT_STALE | CBOX_GOFER_STAT_RDONLY;
	int len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	struct cbox_gofer_reply d;
	cr_assert_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.stat.flags, CBOX_GOFER_STAT_STALE | CBOX_GOFER_STAT_RDONLY);
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALK;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
	r.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT;
	r.stat.flags = 4;
	len = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	cr_expect_eq(cbox_gofer_decode_reply(buf, (size_t)len, &d), -EINVAL);
}

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
