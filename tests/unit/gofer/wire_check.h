#pragma once
/* Checks the gofer wire tests share (wire_check.c): a request whose name2 is s encodes and
 * decodes back to the same fid and name2; the encoder refuses q once its name2 is the len bytes
 * at s. Each uses a packet buffer of its own. */
#include <stddef.h>

#include "cbox/gofer_wire.h"

void expect_name2_round_trip(const struct cbox_gofer_req *q, const char *s);
void expect_name2_refused(struct cbox_gofer_req *q, const char *s, size_t len);
