/* The owner the requests that make a node carry (CREATE, TMPFILE, MKDIR, MKNOD, SYMLINK, BIND):
 * where it travels, that any value decodes back, and that a body without it (the layout before
 * it existed) or cut short anywhere is refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cbox/gofer_wire.h"

static unsigned char buf[CBOX_GOFER_MSG_MAX];

static const uint32_t makers[] = {CBOX_GOFER_CREATE, CBOX_GOFER_TMPFILE, CBOX_GOFER_MKDIR,
                                  CBOX_GOFER_MKNOD,  CBOX_GOFER_SYMLINK, CBOX_GOFER_BIND};

/* A request of type t with every field its body has, and owner uid/gid. */
static struct cbox_gofer_req req(uint32_t t, uint32_t uid, uint32_t gid)
{
	struct cbox_gofer_req q = {.type = t, .tag = 9, .fid = 3, .uid = uid, .gid = gid};
	if (t == CBOX_GOFER_CREATE || t == CBOX_GOFER_TMPFILE)
		q.flags = O_RDWR;
	if (t != CBOX_GOFER_SYMLINK && t != CBOX_GOFER_BIND)
		q.mode = t == CBOX_GOFER_MKNOD ? S_IFIFO | 0640 : 0750;
	if (t != CBOX_GOFER_TMPFILE && t != CBOX_GOFER_BIND) {
		q.name = "name";
		q.name_len = 4;
	}
	if (t == CBOX_GOFER_SYMLINK) {
		q.name2 = "../target";
		q.name2_len = 9;
	}
	if (t == CBOX_GOFER_BIND) {
		q.name2 = "s/x";
		q.name2_len = 3;
	}
	return q;
}

/* Set the packet's header length to n (the packet is then n bytes). */
static void set_len(size_t n)
{
	uint32_t l = (uint32_t)n;
	memcpy(buf + offsetof(struct cbox_gofer_hdr, len), &l, sizeof(l));
}

Test(gofer_wire_owner, each_maker_round_trips_any_owner)
{
	static const uint32_t ids[][2] = {
	    {1234, 5678}, {(uint32_t)-1, (uint32_t)-1}, {1234, (uint32_t)-1}, {(uint32_t)-1, 5678},
	    {0, 0},       {0xfffffffeu, 0x80000000u}};
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			uint32_t t = makers[i];
			struct cbox_gofer_req q = req(t, ids[k][0], ids[k][1]), d;
			int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
			cr_assert_gt(len, 0, "type %u", t);
			/* The owner travels right after the body's first u32 (dirfid, cwdfid). */
			uint32_t w[3];
			memcpy(w, buf + sizeof(struct cbox_gofer_hdr), sizeof(w));
			cr_expect_eq(w[0], 3, "type %u", t);
			cr_expect_eq(w[1], ids[k][0], "type %u uid", t);
			cr_expect_eq(w[2], ids[k][1], "type %u gid", t);
			cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0, "type %u",
			             t);
			cr_expect_eq(d.type, t);
			cr_expect_eq(d.fid, 3);
			cr_expect_eq(d.uid, ids[k][0], "type %u", t);
			cr_expect_eq(d.gid, ids[k][1], "type %u", t);
			cr_expect_eq(d.flags, q.flags, "type %u", t);
			cr_expect_eq(d.mode, q.mode, "type %u", t);
			cr_expect_eq(d.name_len, q.name_len, "type %u", t);
			cr_expect_eq(d.name2_len, q.name2_len, "type %u", t);
			if (q.name2)
				cr_expect_eq(memcmp(d.name2, q.name2, q.name2_len), 0);
		}
	}
}

Test(gofer_wire_owner, short_bodies_and_the_old_layout_refused)
{
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
		uint32_t t = makers[i];
		struct cbox_gofer_req q = req(t, 1234, 5678), d;
		int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
		cr_assert_gt(len, 0);
		/* Cut anywhere in the body (the header's length saying so): malformed. */
		for (size_t n = sizeof(struct cbox_gofer_hdr); n < (size_t)len; n++) {
			set_len(n);
			cr_expect_eq(cbox_gofer_decode_request(buf, n, &d), -EINVAL,
			             "type %u, %zu bytes", t, n);
		}
		/* The same request without its owner, as it was sent before: malformed too. */
		set_len((size_t)len);
		size_t at = sizeof(struct cbox_gofer_hdr) + 4;
		memmove(buf + at, buf + at + 8, (size_t)len - at - 8);
		set_len((size_t)len - 8);
		cr_expect_eq(cbox_gofer_decode_request(buf, (size_t)len - 8, &d), -EINVAL,
		             "type %u in the old layout", t);
	}
}

Test(gofer_wire_owner, other_requests_carry_no_owner)
{
	/* WALK, UNLINK, LINK, GETXATTR: the owner fields are not sent and decode as 0. */
	struct cbox_gofer_req q = {.type = CBOX_GOFER_UNLINK,
	                           .tag = 1,
	                           .fid = 3,
	                           .uid = 1234,
	                           .gid = 5678,
	                           .name = "x",
	                           .name_len = 1},
	                      d;
	int len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 4 + 2 + 1);
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.uid, 0);
	cr_expect_eq(d.gid, 0);
	q = (struct cbox_gofer_req){
	    .type = CBOX_GOFER_GETXATTR, .fid = 3, .uid = 7, .name2 = "user.a", .name2_len = 6};
	len = cbox_gofer_encode_request(&q, buf, sizeof(buf));
	cr_assert_eq(len, 16 + 4 + 2 + 6, "BIND's sibling layout keeps no owner");
	cr_assert_eq(cbox_gofer_decode_request(buf, (size_t)len, &d), 0);
	cr_expect_eq(d.uid, 0);
}
