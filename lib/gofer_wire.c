/*
 * The gofer wire format: the checks of names and fields, and the requests' encoder and strict
 * decoder (the replies' are in gofer_wire_reply.c). Pure code (no syscalls) so that the fuzzer
 * can drive it directly. A decoder accepts a packet only when its body is consumed exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "cbox/gofer_wire.h"
#include "gofer_wire_io.h"

_Static_assert(sizeof(struct cbox_gofer_hdr) == 16, "header is 16 bytes on the wire");
_Static_assert(sizeof(struct cbox_gofer_stat) == 120, "stat has no padding");
_Static_assert(sizeof(struct cbox_gofer_statfs) == 80, "statfs has no padding");
_Static_assert(sizeof(struct cbox_gofer_walked) == 128, "a WALKN entry has no padding");

int cbox_gofer_check_name(const char *name, size_t len)
{
	if (len == 0 || name == NULL)
		return -EINVAL;
	if (len > CBOX_GOFER_NAME_MAX)
		return -ENAMETOOLONG;
	/* "." and ".." would let a walk leave the directory it names; the sentry resolves them. */
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return -EINVAL;
	/* A '/' would make one walk cross several directories (and possibly symlinks) unchecked;
	 * a NUL would make the host see a different name than the one checked. */
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	return 0;
}

int cbox_gofer_check_target(const char *target, size_t len)
{
	if (len == 0 || target == NULL)
		return -EINVAL;
	if (len > CBOX_GOFER_TARGET_MAX)
		return -ENAMETOOLONG;
	if (memchr(target, '\0', len))
		return -EINVAL;
	return 0;
}

int cbox_gofer_check_walk_path(const char *path, size_t len)
{
	if (len == 0 || path == NULL)
		return -EINVAL;
	if (len > CBOX_GOFER_TARGET_MAX)
		return -ENAMETOOLONG;
	int n = 0;
	for (const char *p = path, *end = path + len;; n++) {
		const char *e = memchr(p, '/', (size_t)(end - p));
		size_t one = (size_t)((e ? e : end) - p);
		/* Each name is one WALK would take: an empty one (a doubled, leading or trailing
		 * '/'), "." or ".." is refused, so the walk never leaves the names it was given. */
		int rc = cbox_gofer_check_name(p, one);
		if (rc < 0)
			return rc;
		if (n + 1 > (int)CBOX_GOFER_WALKN_MAX)
			return -EINVAL;
		if (!e)
			return n + 1;
		p = e + 1;
	}
}

int cbox_gofer_check_sockpath(const char *path, size_t len)
{
	if (len == 0 || path == NULL)
		return -EINVAL;
	if (len > CBOX_GOFER_SOCKPATH_MAX)
		return -ENAMETOOLONG;
	/* A NUL would make the host bind a shorter (or an abstract) name than the one checked. */
	return memchr(path, '\0', len) ? -EINVAL : 0;
}

int cbox_gofer_check_xname(const char *name, size_t len)
{
	if (len == 0 || len > CBOX_GOFER_XNAME_MAX)
		return -ERANGE;
	if (name == NULL || memchr(name, '\0', len))
		return -EINVAL;
	return 0;
}

/* SENDTO: the flags the gofer passes on, a datagram of at most CBOX_GOFER_XVALUE_MAX bytes. */
static int check_sendto(const struct cbox_gofer_req *q)
{
	if (q->flags & ~(uint32_t)(MSG_EOR | MSG_CONFIRM | CBOX_GOFER_SENDTO_MEMFD))
		return -EINVAL;
	if ((q->flags & CBOX_GOFER_SENDTO_MEMFD) && q->value_len)
		return -EINVAL; /* (the datagram is the memfd's, all of it) */
	if (q->value_len > CBOX_GOFER_XVALUE_MAX)
		return -EMSGSIZE;
	return q->value_len > 0 && q->value == NULL ? -EINVAL : 0;
}

/* The checks of a SETXATTR or xattr-named request that do not need the file system. */
static int check_xattr_req(const struct cbox_gofer_req *q)
{
	if (q->type == CBOX_GOFER_SETXATTR) {
		if (q->flags > 3) /* XATTR_CREATE | XATTR_REPLACE */
			return -EINVAL;
		if (q->value_len > CBOX_GOFER_XVALUE_MAX)
			return -E2BIG;
		if (q->value_len > 0 && q->value == NULL)
			return -EINVAL;
	}
	return cbox_gofer_check_xname(q->name2, q->name2_len);
}

static bool is_xattr_named(uint32_t type)
{
	return type == CBOX_GOFER_GETXATTR || type == CBOX_GOFER_SETXATTR ||
	       type == CBOX_GOFER_REMOVEXATTR;
}

/* A SETATTR's fields: only known bits, and values the host calls could take. The pad word of the
 * body is checked by the decoder (always encoded as 0). */
static int check_setattr(const struct cbox_gofer_setattr *a)
{
	if (a->valid & ~(CBOX_GOFER_SET_ALL | CBOX_GOFER_SET_BY_NAME))
		return -EINVAL;
	/* A negative size would reach ftruncate as a huge or invalid length. */
	if ((a->valid & CBOX_GOFER_SET_SIZE) && a->size < 0)
		return -EINVAL;
	if (a->valid & CBOX_GOFER_SET_TIMES) {
		int64_t ns[2] = {a->atime_nsec, a->mtime_nsec};
		for (int i = 0; i < 2; i++)
			if ((ns[i] < 0 || ns[i] > 999999999) && ns[i] != UTIME_NOW &&
			    ns[i] != UTIME_OMIT)
				return -EINVAL;
	}
	return 0;
}

static void rd_setattr(struct rd *r, struct cbox_gofer_req *o, uint32_t *pad)
{
	struct cbox_gofer_setattr *a = &o->attr;
	o->fid = rd_u32(r);
	a->valid = rd_u32(r);
	a->mode = rd_u32(r);
	a->uid = rd_u32(r);
	a->gid = rd_u32(r);
	*pad = rd_u32(r);
	a->size = rd_i64(r);
	a->atime_sec = rd_i64(r);
	a->atime_nsec = rd_i64(r);
	a->mtime_sec = rd_i64(r);
	a->mtime_nsec = rd_i64(r);
}

static void wr_setattr(struct wr *w, const struct cbox_gofer_req *q)
{
	const struct cbox_gofer_setattr *a = &q->attr;
	wr_u32(w, q->fid);
	wr_u32(w, a->valid);
	wr_u32(w, a->mode);
	wr_u32(w, a->uid);
	wr_u32(w, a->gid);
	wr_u32(w, 0);
	wr_i64(w, a->size);
	wr_i64(w, a->atime_sec);
	wr_i64(w, a->atime_nsec);
	wr_i64(w, a->mtime_sec);
	wr_i64(w, a->mtime_nsec);
}

/* The requests that make a node, whose body carries its owner after the first u32. */
static bool makes_node(uint32_t type)
{
	return type == CBOX_GOFER_CREATE || type == CBOX_GOFER_TMPFILE ||
	       type == CBOX_GOFER_MKDIR || type == CBOX_GOFER_MKNOD || type == CBOX_GOFER_SYMLINK ||
	       type == CBOX_GOFER_BIND;
}

/* The u32 a body starts with (a fid), then the owner when the request makes a node. */
static void rd_head(struct rd *r, struct cbox_gofer_req *o)
{
	o->fid = rd_u32(r);
	if (makes_node(o->type)) {
		o->uid = rd_u32(r);
		o->gid = rd_u32(r);
	}
}

static void wr_head(struct wr *w, const struct cbox_gofer_req *q)
{
	wr_u32(w, q->fid);
	if (makes_node(q->type)) {
		wr_u32(w, q->uid);
		wr_u32(w, q->gid);
	}
}

/* Header checks shared by both directions: length, then the header's own len field. */
static int decode_req_body(struct rd *r, struct cbox_gofer_req *o)
{
	uint32_t pad = 0;
	switch (o->type) {
	case CBOX_GOFER_WALK:
	case CBOX_GOFER_WALKOPEN:
		o->fid = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_CLUNK:
	case CBOX_GOFER_STAT:
	case CBOX_GOFER_READLINK:
	case CBOX_GOFER_STATFS:
	case CBOX_GOFER_VIEW:
		o->fid = rd_u32(r);
		break;
	case CBOX_GOFER_OPEN:
		o->fid = rd_u32(r);
		o->flags = rd_u32(r);
		break;
	case CBOX_GOFER_CREATE:
	case CBOX_GOFER_TMPFILE:
		rd_head(r, o);
		o->flags = rd_u32(r);
		o->mode = rd_u32(r);
		if (o->type == CBOX_GOFER_CREATE)
			o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_MKDIR:
	case CBOX_GOFER_MKNOD:
		rd_head(r, o);
		o->mode = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_UNLINK:
		o->fid = rd_u32(r);
		o->flags = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_SETATTR:
		rd_setattr(r, o, &pad);
		break;
	case CBOX_GOFER_SYMLINK:
		rd_head(r, o);
		o->name = rd_str(r, &o->name_len);
		o->name2 = rd_str(r, &o->name2_len);
		break;
	case CBOX_GOFER_RENAME:
		o->fid = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		o->fid2 = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		o->flags = rd_u32(r);
		break;
	case CBOX_GOFER_LINK:
		o->fid = rd_u32(r);
		o->fid2 = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_BIND:
		rd_head(r, o);
		o->mode = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		break;
	case CBOX_GOFER_CONNECT:
		o->fid = rd_u32(r);
		o->fid2 = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		break;
	case CBOX_GOFER_SENDTO:
		o->fid = rd_u32(r);
		o->fid2 = rd_u32(r);
		o->flags = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		o->value = rd_blob(r, &o->value_len);
		break;
	case CBOX_GOFER_GETXATTR:
	case CBOX_GOFER_REMOVEXATTR:
		o->fid = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		break;
	case CBOX_GOFER_SETXATTR:
		o->fid = rd_u32(r);
		o->flags = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		o->value = rd_blob(r, &o->value_len);
		break;
	case CBOX_GOFER_LISTXATTR:
		o->fid = rd_u32(r);
		break;
	case CBOX_GOFER_INOTIFY:
		o->fid = rd_u32(r);
		o->flags = rd_u32(r);
		break;
	case CBOX_GOFER_WALKN:
	case CBOX_GOFER_WALKNOPEN:
		o->fid = rd_u32(r);
		o->name2 = rd_str(r, &o->name2_len);
		break;
	case CBOX_GOFER_WALKDIR:
		o->fid = rd_u32(r);
		o->flags = rd_u32(r);
		o->name = rd_str(r, &o->name_len);
		break;
	case CBOX_GOFER_CLUNKN:
		o->value_len = rd_u32(r);
		/* (bounded before the multiplication; a bad count only marks the reader bad) */
		if (o->value_len >= 1 && o->value_len <= CBOX_GOFER_CLUNKN_MAX)
			o->value = rd_take(r, o->value_len * sizeof(uint32_t));
		else
			r->bad = true;
		break;
	default:
		return -EPROTO;
	}
	/* The body must be consumed exactly: trailing bytes mean the peer and we disagree on the
	 * layout, and nothing it says can be trusted. */
	if (r->bad || r->left != 0)
		return -EINVAL;
	/* A pad that is not 0 would not survive a re-encode: refuse what we would not send. */
	return pad == 0 ? 0 : -EINVAL;
}

/* WALKDIR's count word: 1..CBOX_GOFER_WALKDIR_MAX entries, and no other bit than WRAP. */
static bool walkdir_count_ok(uint32_t w)
{
	uint32_t count = w & ~CBOX_GOFER_WALKDIR_WRAP;
	return count >= 1 && count <= CBOX_GOFER_WALKDIR_MAX;
}

/* Field checks after the layout is known to be right. */
static int check_req_fields(const struct cbox_gofer_req *o)
{
	if (o->type == CBOX_GOFER_UNLINK && o->flags > 1)
		return -EINVAL;
	if (o->type == CBOX_GOFER_WALKDIR && !walkdir_count_ok(o->flags))
		return -EINVAL;
	if (o->name && cbox_gofer_check_name(o->name, o->name_len) < 0)
		return -EINVAL;
	if (o->type == CBOX_GOFER_RENAME && cbox_gofer_check_name(o->name2, o->name2_len) < 0)
		return -EINVAL;
	/* RENAME_NOREPLACE (1) or RENAME_EXCHANGE (2), not both; never RENAME_WHITEOUT. */
	if (o->type == CBOX_GOFER_RENAME && o->flags > 2)
		return -EINVAL;
	if (o->type == CBOX_GOFER_SYMLINK && cbox_gofer_check_target(o->name2, o->name2_len) < 0)
		return -EINVAL;
	if ((o->type == CBOX_GOFER_BIND || o->type == CBOX_GOFER_CONNECT ||
	     o->type == CBOX_GOFER_SENDTO) &&
	    cbox_gofer_check_sockpath(o->name2, o->name2_len) < 0)
		return -EINVAL;
	if (o->type == CBOX_GOFER_SENDTO && check_sendto(o) < 0)
		return -EINVAL;
	if (o->type == CBOX_GOFER_BIND && (o->mode & ~0777u))
		return -EINVAL;
	if ((o->type == CBOX_GOFER_WALKN || o->type == CBOX_GOFER_WALKNOPEN) &&
	    cbox_gofer_check_walk_path(o->name2, o->name2_len) < 0)
		return -EINVAL;
	if (is_xattr_named(o->type) && check_xattr_req(o) < 0)
		return -EINVAL;
	if (o->type == CBOX_GOFER_SETATTR)
		return check_setattr(&o->attr);
	return 0;
}

int cbox_gofer_decode_request(const void *buf, size_t len, struct cbox_gofer_req *out)
{
	struct rd r = {.p = buf, .left = len};
	memset(out, 0, sizeof(*out));
	if (buf == NULL)
		return -EPROTO;
	int rc = read_hdr(&r, len, &out->type, &out->tag, &out->cpu);
	if (rc < 0)
		return rc;
	rc = decode_req_body(&r, out);
	if (rc < 0)
		return rc;
	return check_req_fields(out);
}

static void encode_req_body(struct wr *w, const struct cbox_gofer_req *q)
{
	switch (q->type) {
	case CBOX_GOFER_WALK:
	case CBOX_GOFER_WALKOPEN:
		wr_u32(w, q->fid);
		wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_OPEN:
		wr_u32(w, q->fid);
		wr_u32(w, q->flags);
		break;
	case CBOX_GOFER_CREATE:
	case CBOX_GOFER_TMPFILE:
		wr_head(w, q);
		wr_u32(w, q->flags);
		wr_u32(w, q->mode);
		if (q->type == CBOX_GOFER_CREATE)
			wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_MKDIR:
	case CBOX_GOFER_MKNOD:
		wr_head(w, q);
		wr_u32(w, q->mode);
		wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_SETATTR:
		wr_setattr(w, q);
		break;
	case CBOX_GOFER_UNLINK:
		wr_u32(w, q->fid);
		wr_u32(w, q->flags);
		wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_SYMLINK:
		wr_head(w, q);
		wr_str(w, q->name, q->name_len);
		wr_str(w, q->name2, q->name2_len);
		break;
	case CBOX_GOFER_RENAME:
		wr_u32(w, q->fid);
		wr_str(w, q->name, q->name_len);
		wr_u32(w, q->fid2);
		wr_str(w, q->name2, q->name2_len);
		wr_u32(w, q->flags);
		break;
	case CBOX_GOFER_LINK:
		wr_u32(w, q->fid);
		wr_u32(w, q->fid2);
		wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_BIND:
		wr_head(w, q);
		wr_u32(w, q->mode);
		wr_str(w, q->name2, q->name2_len);
		break;
	case CBOX_GOFER_CONNECT:
		wr_u32(w, q->fid);
		wr_u32(w, q->fid2);
		wr_str(w, q->name2, q->name2_len);
		break;
	case CBOX_GOFER_SENDTO:
		wr_u32(w, q->fid);
		wr_u32(w, q->fid2);
		wr_u32(w, q->flags);
		wr_str(w, q->name2, q->name2_len);
		wr_blob(w, q->value, q->value_len);
		break;
	case CBOX_GOFER_GETXATTR:
	case CBOX_GOFER_REMOVEXATTR:
		wr_u32(w, q->fid);
		wr_str(w, q->name2, q->name2_len);
		break;
	case CBOX_GOFER_SETXATTR:
		wr_u32(w, q->fid);
		wr_u32(w, q->flags);
		wr_str(w, q->name2, q->name2_len);
		wr_blob(w, q->value, q->value_len);
		break;
	case CBOX_GOFER_INOTIFY:
		wr_u32(w, q->fid);
		wr_u32(w, q->flags);
		break;
	case CBOX_GOFER_WALKN:
	case CBOX_GOFER_WALKNOPEN:
		wr_u32(w, q->fid);
		wr_str(w, q->name2, q->name2_len);
		break;
	case CBOX_GOFER_WALKDIR:
		wr_u32(w, q->fid);
		wr_u32(w, q->flags);
		wr_str(w, q->name, q->name_len);
		break;
	case CBOX_GOFER_CLUNKN:
		wr_u32(w, (uint32_t)q->value_len);
		wr_put(w, q->value, q->value_len * sizeof(uint32_t));
		break;
	default: /* CLUNK, STAT, READLINK, STATFS, LISTXATTR, VIEW */
		wr_u32(w, q->fid);
		break;
	}
}

static bool req_has_name(uint32_t type)
{
	return type == CBOX_GOFER_WALK || (type >= CBOX_GOFER_CREATE && type <= CBOX_GOFER_LINK) ||
	       type == CBOX_GOFER_MKNOD || type == CBOX_GOFER_WALKDIR ||
	       type == CBOX_GOFER_WALKOPEN;
}

int cbox_gofer_encode_request(const struct cbox_gofer_req *req, void *buf, size_t size)
{
	if (req->type < CBOX_GOFER_WALK || req->type > CBOX_GOFER_TYPE_MAX)
		return -EINVAL;
	int rc = 0;
	if (req_has_name(req->type))
		rc = cbox_gofer_check_name(req->name, req->name_len);
	if (rc == 0 && req->type == CBOX_GOFER_RENAME)
		rc = cbox_gofer_check_name(req->name2, req->name2_len);
	if (rc == 0 && req->type == CBOX_GOFER_RENAME && req->flags > 2)
		rc = -EINVAL;
	if (rc == 0 && req->type == CBOX_GOFER_SYMLINK)
		rc = cbox_gofer_check_target(req->name2, req->name2_len);
	if (rc == 0 && req->type == CBOX_GOFER_UNLINK && req->flags > 1)
		rc = -EINVAL;
	if (rc == 0 && req->type == CBOX_GOFER_WALKDIR && !walkdir_count_ok(req->flags))
		rc = -EINVAL;
	if (rc == 0 && req->type == CBOX_GOFER_CLUNKN &&
	    (req->value_len < 1 || req->value_len > CBOX_GOFER_CLUNKN_MAX || !req->value))
		rc = -EINVAL;
	if (rc == 0 && req->type == CBOX_GOFER_SETATTR)
		rc = check_setattr(&req->attr);
	if (rc == 0 && (req->type == CBOX_GOFER_BIND || req->type == CBOX_GOFER_CONNECT ||
	                req->type == CBOX_GOFER_SENDTO))
		rc = cbox_gofer_check_sockpath(req->name2, req->name2_len);
	if (rc == 0 && req->type == CBOX_GOFER_SENDTO)
		rc = check_sendto(req);
	if (rc == 0 && req->type == CBOX_GOFER_BIND && (req->mode & ~0777u))
		rc = -EINVAL;
	if (rc == 0 && (req->type == CBOX_GOFER_WALKN || req->type == CBOX_GOFER_WALKNOPEN)) {
		int n = cbox_gofer_check_walk_path(req->name2, req->name2_len);
		rc = n < 0 ? n : 0;
	}
	if (rc == 0 && is_xattr_named(req->type))
		rc = check_xattr_req(req);
	if (rc < 0)
		return rc;
	struct wr w = {.p = buf, .size = size};
	put_hdr(&w, req->type, req->tag, req->cpu);
	encode_req_body(&w, req);
	return finish(&w);
}
