/* The gofer wire format: every request and reply type round-trips, and the decoders refuse every
 * kind of malformed packet the brief lists (the batched and opening walks' own checks:
 * test_gofer_wire_walk.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cbox/gofer.h"
#include "cbox/gofer_wire.h"
#include "wire_check.h"

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
	                           .flags = type == CBOX_GOFER_SENDTO ? MSG_EOR
	                                    : type == CBOX_GOFER_UNLINK ||
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
		if (t == CBOX_GOFER_RENAME || t == CBOX_GOFER_LINK || t == CBOX_GOFER_CONNECT ||
		    t == CBOX_GOFER_SENDTO)
			cr_expect_eq(q.fid2, 4);
		if (t == CBOX_GOFER_BIND)
			cr_expect_eq(q.mode, 0644);
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

/* BIND's mode is permission bits only; SENDTO passes on two flags and 64 KiB at most (more comes
 * in a memfd, CBOX_GOFER_SENDTO_MEMFD, with an empty value). */
Test(gofer_wire, socket_requests_bounded)
{
	static char big[CBOX_GOFER_XVALUE_MAX + 1];
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_BIND, .mode = 04755, .name2 = "s", .name2_len = 1};
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q = (struct cbox_gofer_req){.type = CBOX_GOFER_SENDTO,
	                            .flags = MSG_OOB,
	                            .name2 = "s",
	                            .name2_len = 1,
	                            .value = big,
	                            .value_len = 1};
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	q.flags = MSG_EOR | MSG_CONFIRM;
	cr_expect_gt(cbox_gofer_encode_request(&q, buf, sizeof(buf)), 0);
	q.value_len = sizeof(big);
	cr_expect_eq(cbox_gofer_encode_request(&q, buf, sizeof(buf)), -EMSGSIZE);
	/* and decoded: a flag patched in after encoding is refused */
	q.value_len = 1;
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	uint32_t flags = MSG_OOB;
	memcpy(buf + 16 + 8, &flags, 4);
	struct cbox_gofer_req d;
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
	/* the datagram in a memfd: then the request's own value must be empty */
	flags = CBOX_GOFER_SENDTO_MEMFD;
	memcpy(buf + 16 + 8, &flags, 4);
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), -EINVAL);
	q.flags = CBOX_GOFER_SENDTO_MEMFD | MSG_EOR;
	q.value = NULL;
	q.value_len = 0;
	len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.flags, CBOX_GOFER_SENDTO_MEMFD | MSG_EOR);
	cr_expect_eq(d.value_len, 0);
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
