#pragma once
/*
 * The gofer wire format's bounded readers and writers, shared by the request side
 * (gofer_wire.c) and the reply side (gofer_wire_reply.c). Private to lib/. Every read goes
 * through struct rd, which checks the remaining length first; every write through struct wr,
 * which stops at the buffer's end and marks itself bad.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cbox/gofer_wire.h"

struct rd {
	const unsigned char *p;
	size_t left;
	bool bad;
};

static inline const void *rd_take(struct rd *r, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = true;
		return NULL;
	}
	const void *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static inline uint32_t rd_u32(struct rd *r)
{
	uint32_t v = 0;
	const void *p = rd_take(r, sizeof(v));
	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

static inline int64_t rd_i64(struct rd *r)
{
	int64_t v = 0;
	const void *p = rd_take(r, sizeof(v));
	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

/* A u16 length followed by that many bytes. */
static inline const char *rd_str(struct rd *r, size_t *len)
{
	uint16_t n = 0;
	const void *p = rd_take(r, sizeof(n));
	if (p)
		memcpy(&n, p, sizeof(n));
	*len = n;
	return rd_take(r, n);
}

/* A u32 length followed by that many bytes (xattr values). The length is checked against what is
 * left before anything is taken, so a huge length only marks the reader bad. */
static inline const void *rd_blob(struct rd *r, size_t *len)
{
	uint32_t n = rd_u32(r);
	*len = n;
	return rd_take(r, n);
}

struct wr {
	unsigned char *p;
	size_t size, len;
	bool bad;
};

static inline void wr_put(struct wr *w, const void *src, size_t n)
{
	if (w->bad || w->size - w->len < n) {
		w->bad = true;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static inline void wr_u32(struct wr *w, uint32_t v)
{
	wr_put(w, &v, sizeof(v));
}

static inline void wr_i64(struct wr *w, int64_t v)
{
	wr_put(w, &v, sizeof(v));
}

static inline void wr_str(struct wr *w, const char *s, size_t len)
{
	uint16_t n = (uint16_t)len;
	wr_put(w, &n, sizeof(n));
	wr_put(w, s, len);
}

static inline void wr_blob(struct wr *w, const void *p, size_t len)
{
	wr_u32(w, (uint32_t)len);
	if (len > 0)
		wr_put(w, p, len);
}

static inline void put_hdr(struct wr *w, uint32_t type, uint32_t tag, uint32_t pad)
{
	struct cbox_gofer_hdr h = {.type = type, .tag = tag, .pad = pad};
	wr_put(w, &h, sizeof(h));
}

/* Write the final length into the header. */
static inline int finish(struct wr *w)
{
	if (w->bad)
		return -ENOBUFS;
	uint32_t len = (uint32_t)w->len;
	memcpy(w->p + offsetof(struct cbox_gofer_hdr, len), &len, sizeof(len));
	return (int)w->len;
}

/* The header of a packet of len bytes (its length field must say len): its type, tag and (when
 * pad is not NULL) pad. */
static inline int read_hdr(struct rd *r, size_t len, uint32_t *type, uint32_t *tag, uint32_t *pad)
{
	struct cbox_gofer_hdr h;
	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, rd_take(r, sizeof(h)), sizeof(h));
	if (h.len != len)
		return -EPROTO;
	*type = h.type;
	*tag = h.tag;
	if (pad)
		*pad = h.pad;
	return 0;
}
