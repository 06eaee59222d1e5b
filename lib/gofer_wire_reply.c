/*
 * The gofer wire format: the replies' encoder and strict decoder, and the records of the batched
 * walks (WALKN, WALKDIR) inside a reply. Pure code, as gofer_wire.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include "cbox/gofer_wire.h"
#include "gofer_wire_io.h"

void cbox_gofer_reply_walked(const struct cbox_gofer_reply *r, uint32_t i,
                             struct cbox_gofer_walked *out)
{
	memcpy(out, (const unsigned char *)r->walked + (size_t)i * sizeof(*out), sizeof(*out));
}

static bool known_ok_type(uint32_t type)
{
	if ((type & ~0x7fu) != CBOX_GOFER_REPLY_OK)
		return false;
	uint32_t t = type & 0x7fu;
	return t >= CBOX_GOFER_WALK && t <= CBOX_GOFER_TYPE_MAX;
}

static void decode_reply_body(struct rd *r, struct cbox_gofer_reply *o)
{
	const void *p;
	switch (o->type & 0x7fu) {
	case CBOX_GOFER_WALK:
	case CBOX_GOFER_WALKOPEN:
	case CBOX_GOFER_CREATE:
	case CBOX_GOFER_TMPFILE:
	case CBOX_GOFER_MKNOD:
		o->fid = rd_u32(r);
		__attribute__((fallthrough));
	case CBOX_GOFER_STAT:
		if ((p = rd_take(r, sizeof(o->stat))))
			memcpy(&o->stat, p, sizeof(o->stat));
		break;
	case CBOX_GOFER_STATFS:
		if ((p = rd_take(r, sizeof(o->statfs))))
			memcpy(&o->statfs, p, sizeof(o->statfs));
		break;
	case CBOX_GOFER_READLINK:
		o->target = rd_str(r, &o->target_len);
		break;
	case CBOX_GOFER_GETXATTR:
	case CBOX_GOFER_LISTXATTR:
		o->value = rd_blob(r, &o->value_len);
		break;
	case CBOX_GOFER_INOTIFY:
	case CBOX_GOFER_SENDTO:
		o->fid = rd_u32(r); /* the watch descriptor; the bytes sent */
		break;
	case CBOX_GOFER_WALKN:
	case CBOX_GOFER_WALKNOPEN:
		o->nwalked = rd_u32(r);
		o->walk_error = (int32_t)rd_u32(r);
		/* (bounded before the multiplication; a bad count only marks the reader bad) */
		if (o->nwalked >= 1 && o->nwalked <= CBOX_GOFER_WALKN_MAX)
			o->walked = rd_take(r, o->nwalked * sizeof(struct cbox_gofer_walked));
		else
			r->bad = true;
		break;
	case CBOX_GOFER_WALKDIR:
		/* The records are checked one by one after the layout (check_walkdir_reply). */
		o->nwalked = rd_u32(r);
		o->walked_len = r->left;
		o->walked = rd_take(r, r->left);
		break;
	default: /* empty bodies */
		break;
	}
}

/* A walked entry as WALKN and WALKDIR carry it: pad 0, and no stat flag but RDONLY (and
 * OPENED where opened is allowed). */
static bool walked_ok(const struct cbox_gofer_walked *w, bool opened)
{
	uint64_t known = CBOX_GOFER_STAT_RDONLY | (opened ? CBOX_GOFER_STAT_OPENED : 0);
	return w->pad == 0 && !(w->stat.flags & ~known);
}

/* A WALKN or WALKNOPEN reply's entries and error, checked as a decoded reply is: the caller may
 * trust each entry's pad and stat flags, and an error that is a real errno. Only WALKNOPEN's
 * last entry, and only when no name failed after it, may say it was opened. */
static int check_walkn_reply(const struct cbox_gofer_reply *o)
{
	if (o->nwalked < 1 || o->nwalked > CBOX_GOFER_WALKN_MAX || o->walked == NULL)
		return -EINVAL;
	if (o->walk_error < 0 || o->walk_error > 4095)
		return -EINVAL;
	bool may_open = (o->type & 0x7fu) == CBOX_GOFER_WALKNOPEN && o->walk_error == 0;
	for (uint32_t i = 0; i < o->nwalked; i++) {
		struct cbox_gofer_walked w;
		cbox_gofer_reply_walked(o, i, &w);
		if (!walked_ok(&w, may_open && i + 1 == o->nwalked))
			return -EINVAL;
	}
	return 0;
}

int cbox_gofer_reply_dirent(const struct cbox_gofer_reply *r, size_t *off,
                            struct cbox_gofer_walked *out, const char **name, size_t *name_len)
{
	if (r->walked == NULL || *off >= r->walked_len)
		return -ENOENT;
	struct rd rd = {.p = (const unsigned char *)r->walked + *off, .left = r->walked_len - *off};
	const void *p = rd_take(&rd, sizeof(*out));
	const char *n = rd_str(&rd, name_len);
	if (rd.bad || p == NULL)
		return -ENOENT;
	memcpy(out, p, sizeof(*out));
	*name = n;
	*off = r->walked_len - rd.left;
	return 0;
}

uint32_t cbox_gofer_req_fid(const struct cbox_gofer_req *q, size_t i)
{
	uint32_t fid;
	memcpy(&fid, (const unsigned char *)q->value + i * sizeof(fid), sizeof(fid));
	return fid;
}

int cbox_gofer_put_dirent(void *buf, size_t size, size_t *len, const struct cbox_gofer_walked *w,
                          const char *name, size_t name_len)
{
	if (name_len > CBOX_GOFER_NAME_MAX || *len > size)
		return -ENOBUFS;
	struct wr wr = {.p = buf, .size = size, .len = *len};
	wr_put(&wr, w, sizeof(*w));
	wr_str(&wr, name, name_len);
	if (wr.bad)
		return -ENOBUFS;
	*len = wr.len;
	return 0;
}

/* A WALKDIR reply: nwalked records exactly filling the body, each with pad 0, known stat flags
 * and a valid name, so that a caller may use every record it reads. */
static int check_walkdir_reply(const struct cbox_gofer_reply *o)
{
	if (o->nwalked < 1 || o->nwalked > CBOX_GOFER_WALKDIR_MAX || o->walked == NULL)
		return -EINVAL;
	size_t off = 0;
	uint32_t n = 0;
	struct cbox_gofer_walked w;
	const char *name;
	size_t len;
	while (n < o->nwalked && cbox_gofer_reply_dirent(o, &off, &w, &name, &len) == 0) {
		if (!walked_ok(&w, false) || cbox_gofer_check_name(name, len) < 0)
			return -EINVAL;
		n++;
	}
	return n == o->nwalked && off == o->walked_len ? 0 : -EINVAL;
}

/* A GETXATTR value or LISTXATTR list: bounded, and a list is NUL-separated names, so a caller
 * splitting it never runs off its end. */
static int check_value_reply(uint32_t t, const void *value, size_t len)
{
	if (t != CBOX_GOFER_GETXATTR && t != CBOX_GOFER_LISTXATTR)
		return 0;
	if (len > CBOX_GOFER_XVALUE_MAX || (len > 0 && value == NULL))
		return -EINVAL;
	if (t == CBOX_GOFER_LISTXATTR && len > 0 && ((const char *)value)[len - 1] != '\0')
		return -EINVAL;
	return 0;
}

int cbox_gofer_decode_reply(const void *buf, size_t len, struct cbox_gofer_reply *out)
{
	struct rd r = {.p = buf, .left = len};
	memset(out, 0, sizeof(*out));
	if (buf == NULL)
		return -EPROTO;
	int rc = read_hdr(&r, len, &out->type, &out->tag, NULL);
	if (rc < 0)
		return rc;
	if (out->type == CBOX_GOFER_REPLY_ERROR) {
		out->error = (int32_t)rd_u32(&r);
		if (r.bad || r.left != 0)
			return -EINVAL;
		/* Only a real errno may reach the caller, which returns it negated as a result. */
		return out->error >= 1 && out->error <= 4095 ? 0 : -EINVAL;
	}
	if (!known_ok_type(out->type))
		return -EPROTO;
	decode_reply_body(&r, out);
	if (r.bad || r.left != 0)
		return -EINVAL;
	uint64_t known = CBOX_GOFER_STAT_RDONLY;
	if (out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT))
		known |= CBOX_GOFER_STAT_STALE;
	if (out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKOPEN))
		known |= CBOX_GOFER_STAT_OPENED;
	if (out->stat.flags & ~known)
		return -EINVAL; /* a flag this sentry does not know, or one out of place */
	if (out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_READLINK) &&
	    cbox_gofer_check_target(out->target, out->target_len) < 0)
		return -EINVAL;
	if ((out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKN) ||
	     out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKNOPEN)) &&
	    check_walkn_reply(out) < 0)
		return -EINVAL;
	if (out->type == (CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKDIR) && check_walkdir_reply(out) < 0)
		return -EINVAL;
	return check_value_reply(out->type & 0x7fu, out->value, out->value_len);
}

int cbox_gofer_encode_reply(const struct cbox_gofer_reply *rep, void *buf, size_t size)
{
	struct wr w = {.p = buf, .size = size};
	if (rep->type == CBOX_GOFER_REPLY_ERROR) {
		if (rep->error < 1 || rep->error > 4095)
			return -EINVAL;
		put_hdr(&w, rep->type, rep->tag, 0);
		wr_u32(&w, (uint32_t)rep->error);
		return finish(&w);
	}
	if (!known_ok_type(rep->type))
		return -EINVAL;
	uint32_t t = rep->type & 0x7fu;
	if (t == CBOX_GOFER_READLINK) {
		int rc = cbox_gofer_check_target(rep->target, rep->target_len);
		if (rc < 0)
			return rc;
	}
	if (check_value_reply(t, rep->value, rep->value_len) < 0)
		return -EINVAL;
	if ((t == CBOX_GOFER_WALKN || t == CBOX_GOFER_WALKNOPEN) && check_walkn_reply(rep) < 0)
		return -EINVAL;
	if (t == CBOX_GOFER_WALKDIR && check_walkdir_reply(rep) < 0)
		return -EINVAL;
	put_hdr(&w, rep->type, rep->tag, 0);
	bool new_fid = t == CBOX_GOFER_WALK || t == CBOX_GOFER_WALKOPEN || t == CBOX_GOFER_CREATE ||
	               t == CBOX_GOFER_TMPFILE || t == CBOX_GOFER_MKNOD;
	if (new_fid)
		wr_u32(&w, rep->fid);
	if (new_fid || t == CBOX_GOFER_STAT)
		wr_put(&w, &rep->stat, sizeof(rep->stat));
	else if (t == CBOX_GOFER_STATFS)
		wr_put(&w, &rep->statfs, sizeof(rep->statfs));
	else if (t == CBOX_GOFER_READLINK)
		wr_str(&w, rep->target, rep->target_len);
	else if (t == CBOX_GOFER_GETXATTR || t == CBOX_GOFER_LISTXATTR)
		wr_blob(&w, rep->value, rep->value_len);
	else if (t == CBOX_GOFER_INOTIFY || t == CBOX_GOFER_SENDTO)
		wr_u32(&w, rep->fid);
	else if (t == CBOX_GOFER_WALKN || t == CBOX_GOFER_WALKNOPEN) {
		wr_u32(&w, rep->nwalked);
		wr_u32(&w, (uint32_t)rep->walk_error);
		wr_put(&w, rep->walked, rep->nwalked * sizeof(struct cbox_gofer_walked));
	} else if (t == CBOX_GOFER_WALKDIR) {
		wr_u32(&w, rep->nwalked);
		wr_put(&w, rep->walked, rep->walked_len);
	}
	return finish(&w);
}
