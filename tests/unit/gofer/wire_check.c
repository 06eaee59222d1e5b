/* Checks the gofer wire tests share (see wire_check.h). */
#include "wire_check.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static unsigned char pkt[CBOX_GOFER_MSG_MAX];

void expect_name2_round_trip(const struct cbox_gofer_req *q, const char *s)
{
	int len = cbox_gofer_encode_request(q, pkt, sizeof(pkt));
	cr_assert_gt(len, 0, "encode '%s'", s);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(pkt, (size_t)len, &d), 0, "decode '%s'", s);
	cr_expect_eq(d.fid, q->fid);
	cr_expect_eq(d.name2_len, strlen(s));
	cr_expect_eq(memcmp(d.name2, s, strlen(s)), 0);
}

void expect_name2_refused(struct cbox_gofer_req *q, const char *s, size_t len)
{
	q->name2 = s;
	q->name2_len = len;
	cr_expect_eq(cbox_gofer_encode_request(q, pkt, sizeof(pkt)), -EINVAL, "'%.*s'", (int)len,
	             s);
}
