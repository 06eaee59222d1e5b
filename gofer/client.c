/*
 * The sentry's end of the gofer protocol. One request, one reply: each call encodes its request,
 * sends it, and accepts only the reply that answers it (same tag, the OK type of the request or
 * ERROR, an fd exactly when one is due). Anything else means the gofer is broken or hostile; the
 * connection is then marked broken and every later call fails with -EIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/fdpass.h"
#include "cbox/gofer.h"
#include "cbox/log.h"

struct cbox_gofer_client {
	int sock;
	uint32_t next_tag;
	bool broken;
	uint64_t changes; /* requests sent that may have changed a file (cbox_gofer_changes) */
	bool cpu_hint;    /* tell the gofer the CPU each request is sent from */
	/* Requests sent by cbox_gofer_early_send, not yet answered: STAT, VIEW, then the walks. */
	struct cbox_gofer_req early[2 + CBOX_GOFER_EARLY_WALKS];
	size_t n_early;
	bool early_view;
	/* The last reply; a READLINK target points into it until the next call. */
	unsigned char rbuf[CBOX_GOFER_MSG_MAX];
	/* The request being sent: here rather than on the stack, where 68 KiB would make the
	 * sentry's depth depend on a stack limit (ulimit -s) it does not choose. */
	unsigned char sbuf[CBOX_GOFER_MSG_MAX];
};

struct cbox_gofer_client *cbox_gofer_client_new(int sock)
{
	if (sock < 0) {
		errno = EBADF;
		return NULL;
	}
	/* Not calloc: the buffers (68 KiB each) are written by every recvmsg or encoding before
	 * they are read, and zeroing the reply's cost the sentry's start 17 page faults (~0.2 ms
	 * on this VM, where one costs ~11 us). */
	struct cbox_gofer_client *c = malloc(sizeof(*c));
	if (c == NULL)
		return NULL;
	memset(c, 0, offsetof(struct cbox_gofer_client, rbuf));
	c->sock = sock;
	c->next_tag = 1;
	return c;
}

void cbox_gofer_client_free(struct cbox_gofer_client *c)
{
	if (c == NULL)
		return;
	close(c->sock);
	free(c);
}

static int broken(struct cbox_gofer_client *c, const char *why)
{
	cbox_error("gofer client: %s; treating the gofer as gone", why);
	c->broken = true;
	return -EIO;
}

/* Send q, with fd and then fd2 (each when >= 0) as SCM_RIGHTS. */
static int send_req2(struct cbox_gofer_client *c, const struct cbox_gofer_req *q, int fd, int fd2)
{
	int len = cbox_gofer_encode_request(q, c->sbuf, sizeof(c->sbuf));
	if (len < 0)
		return len; /* a caller's bad name: not the connection's fault */
	int fds[2] = {fd, fd2};
	if (cbox_send_fds(c->sock, c->sbuf, (size_t)len, fds, fd2 >= 0 ? 2 : fd >= 0 ? 1 : 0) < 0)
		return broken(c, "cannot send a request");
	return 0;
}

static int send_req(struct cbox_gofer_client *c, const struct cbox_gofer_req *q, int fd)
{
	return send_req2(c, q, fd, -1);
}

/* Take the fds of a received message: at most one is valid, and only when want_fd. */
static int take_fds(struct msghdr *mh, bool want_fd, int *fd)
{
	int rc = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int f;
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (want_fd && *fd < 0) {
				*fd = f;
			} else {
				close(f); /* never keep an fd nobody asked for */
				rc = -EIO;
			}
		}
	}
	return rc;
}

/* The requests whose OK reply may carry an fd or not: the walks that open (WALKOPEN). */
static bool fd_optional(uint32_t type)
{
	return type == CBOX_GOFER_WALKOPEN || type == CBOX_GOFER_WALKNOPEN;
}

/*
 * Receive the reply to q into *r. fd (when not NULL) receives the fd of an OK reply that must
 * carry one (-1 when it may not, for fd_optional types). Returns 0 for OK, -errno for an ERROR
 * reply, -EIO when the reply is malformed.
 */
static int recv_reply(struct cbox_gofer_client *c, const struct cbox_gofer_req *q,
                      struct cbox_gofer_reply *r, int *fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = {.iov_base = c->rbuf, .iov_len = sizeof(c->rbuf)};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = ctl.buf,
	                    .msg_controllen = sizeof(ctl.buf)};
	CBOX_AUTOCLOSE int got = -1;
	ssize_t n;
	n = cbox_recvmsg_spin(c->sock, &mh, MSG_CMSG_CLOEXEC, 64);
	if (n <= 0)
		return broken(c, n == 0 ? "connection closed" : "cannot receive a reply");
	int rc = take_fds(&mh, fd != NULL, &got);
	if (rc < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return broken(c, "reply truncated or with unexpected fds");
	if (cbox_gofer_decode_reply(c->rbuf, (size_t)n, r) < 0)
		return broken(c, "malformed reply");
	if (r->tag != q->tag)
		return broken(c, "reply with an unexpected tag");
	if (r->type == CBOX_GOFER_REPLY_ERROR)
		return got >= 0 ? broken(c, "error reply with an fd") : -r->error;
	if (r->type != (CBOX_GOFER_REPLY_OK | q->type))
		return broken(c, "reply of an unexpected type");
	if (fd != NULL && got < 0 && !fd_optional(q->type))
		return broken(c, "reply without its fd");
	if (fd != NULL)
		*fd = cbox_steal_fd(&got);
	return 0;
}

/* Whether q may change a file's attributes or a directory's entries (counted before it is sent,
 * whatever its outcome). An open for writing counts too: writes through the fd never come here,
 * but the sentry notes the file as written (cbox_text_note_writer). */
static bool may_change(const struct cbox_gofer_req *q)
{
	switch (q->type) {
	case CBOX_GOFER_WALK:
	case CBOX_GOFER_WALKN:
	case CBOX_GOFER_WALKOPEN:
	case CBOX_GOFER_WALKNOPEN:
	case CBOX_GOFER_WALKDIR:
	case CBOX_GOFER_CLUNK:
	case CBOX_GOFER_CLUNKN:
	case CBOX_GOFER_STAT:
	case CBOX_GOFER_READLINK:
	case CBOX_GOFER_STATFS:
	case CBOX_GOFER_VIEW:
	case CBOX_GOFER_GETXATTR:
	case CBOX_GOFER_LISTXATTR:
	case CBOX_GOFER_INOTIFY:
		return false;
	case CBOX_GOFER_OPEN:
		return (q->flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY;
	default:
		return true;
	}
}

void cbox_gofer_client_hint_cpu(struct cbox_gofer_client *c, bool on)
{
	if (c)
		c->cpu_hint = on;
}

uint64_t cbox_gofer_changes(const struct cbox_gofer_client *c)
{
	return c ? c->changes : 0;
}

/* A request's tag, and the CPU it is sent from when the gofer is to follow it. */
static void stamp(struct cbox_gofer_client *c, struct cbox_gofer_req *q)
{
	q->tag = c->next_tag++;
	int cpu = c->cpu_hint ? sched_getcpu() : -1; /* (the vDSO: no syscall) */
	q->cpu = cpu >= 0 ? (uint32_t)cpu + 1 : 0;
}

/* One request (carrying in_fd when >= 0) and its reply (with an fd into *fd when not NULL). */
static int rpc_fd2(struct cbox_gofer_client *c, struct cbox_gofer_req *q,
                   struct cbox_gofer_reply *r, int *fd, int in_fd, int in_fd2)
{
	if (c == NULL || c->broken)
		return -EIO;
	if (c->n_early)
		return broken(c, "a request before the answers to the first ones were taken");
	stamp(c, q);
	if (may_change(q))
		c->changes++;
	int rc = send_req2(c, q, in_fd, in_fd2);
	if (rc < 0)
		return rc;
	return recv_reply(c, q, r, fd);
}

static int rpc_fd(struct cbox_gofer_client *c, struct cbox_gofer_req *q, struct cbox_gofer_reply *r,
                  int *fd, int in_fd)
{
	return rpc_fd2(c, q, r, fd, in_fd, -1);
}

static int rpc(struct cbox_gofer_client *c, struct cbox_gofer_req *q, struct cbox_gofer_reply *r,
               int *fd)
{
	return rpc_fd(c, q, r, fd, -1);
}

static size_t slen(const char *s)
{
	return s ? strlen(s) : 0;
}

int cbox_gofer_walk(struct cbox_gofer_client *c, uint32_t dir, const char *name, uint32_t *newfid,
                    struct cbox_gofer_stat *st)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_WALK, .fid = dir, .name = name, .name_len = slen(name)};
	struct cbox_gofer_reply r;
	int rc = rpc(c, &q, &r, NULL);
	if (rc < 0)
		return rc;
	*newfid = r.fid;
	if (st)
		*st = r.stat;
	return 0;
}

int cbox_gofer_walk_open(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                         uint32_t *newfid, struct cbox_gofer_stat *st, int *fd)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_WALKOPEN, .fid = dir, .name = name, .name_len = slen(name)};
	struct cbox_gofer_reply r;
	CBOX_AUTOCLOSE int got = -1;
	int rc = rpc(c, &q, &r, &got);
	if (rc < 0)
		return rc;
	/* The fd and the flag that announces it come together or not at all. */
	if (((r.stat.flags & CBOX_GOFER_STAT_OPENED) != 0) != (got >= 0))
		return broken(c, "a WALKOPEN reply whose fd and OPENED flag disagree");
	r.stat.flags &= ~(uint64_t)CBOX_GOFER_STAT_OPENED;
	*newfid = r.fid;
	*st = r.stat;
	*fd = cbox_steal_fd(&got);
	return 0;
}

int cbox_gofer_walk_many(struct cbox_gofer_client *c, uint32_t dir, const char *path, size_t len,
                         struct cbox_gofer_walked *out, int *walk_error, int *fd)
{
	int names = cbox_gofer_check_walk_path(path, len);
	if (names < 0)
		return names;
	struct cbox_gofer_req q = {.type = fd ? CBOX_GOFER_WALKNOPEN : CBOX_GOFER_WALKN,
	                           .fid = dir,
	                           .name2 = path,
	                           .name2_len = len};
	struct cbox_gofer_reply r;
	CBOX_AUTOCLOSE int got = -1;
	int rc = rpc(c, &q, &r, fd ? &got : NULL);
	if (rc < 0)
		return rc;
	/* A gofer that answers for names it was not given, goes on past a file or a symlink, or
	 * fails a name it never reached is not following the protocol: nothing it said is used. */
	bool bad = r.nwalked > (uint32_t)names || (r.walk_error && r.nwalked == (uint32_t)names);
	bool opened = false;
	for (uint32_t i = 0; i < r.nwalked; i++) {
		cbox_gofer_reply_walked(&r, i, &out[i]);
		if (i + 1 < r.nwalked && !S_ISDIR(out[i].stat.mode))
			bad = true;
		opened = (out[i].stat.flags & CBOX_GOFER_STAT_OPENED) != 0;
		out[i].stat.flags &= ~(uint64_t)CBOX_GOFER_STAT_OPENED;
	}
	/* Only the request's last name is opened, and its fd comes with the flag. */
	if (opened != (got >= 0) || (opened && r.nwalked != (uint32_t)names))
		bad = true;
	if (bad) {
		/* (its fids are left to the gofer, which is now considered gone) */
		return broken(c, "a WALKN reply that does not fit its request");
	}
	*walk_error = r.walk_error;
	if (fd)
		*fd = cbox_steal_fd(&got);
	return (int)r.nwalked;
}

int cbox_gofer_walk_dir(struct cbox_gofer_client *c, uint32_t dir, const char *name, unsigned count,
                        struct cbox_gofer_dirent *out)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_WALKDIR,
	                           .fid = dir,
	                           .flags = count,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	int rc = rpc(c, &q, &r, NULL);
	if (rc < 0)
		return rc;
	/* The decoder checked each record (valid names, pads, flags); what is left is whether it
	 * answers this request. Otherwise nothing it said is used. */
	bool bad = r.nwalked > (count & ~CBOX_GOFER_WALKDIR_WRAP);
	size_t off = 0;
	for (uint32_t i = 0; !bad && i < r.nwalked; i++) {
		struct cbox_gofer_walked w;
		const char *n;
		size_t len;
		if (cbox_gofer_reply_dirent(&r, &off, &w, &n, &len) < 0)
			return broken(c, "a WALKDIR reply shorter than its count");
		bool is_first = len == q.name_len && memcmp(n, name, len) == 0;
		if (is_first != (i == 0))
			bad = true;
		out[i].fid = w.fid;
		out[i].stat = w.stat;
		memcpy(out[i].name, n, len);
		out[i].name[len] = '\0';
	}
	if (bad)
		return broken(c, "a WALKDIR reply that does not fit its request");
	return (int)r.nwalked;
}

/* Requests whose only argument is a fid and whose OK reply is empty or handled by the caller. */
static int fid_rpc(struct cbox_gofer_client *c, uint32_t type, uint32_t fid,
                   struct cbox_gofer_reply *r)
{
	struct cbox_gofer_req q = {.type = type, .fid = fid};
	return rpc(c, &q, r, NULL);
}

int cbox_gofer_clunk(struct cbox_gofer_client *c, uint32_t fid)
{
	struct cbox_gofer_reply r;
	return fid_rpc(c, CBOX_GOFER_CLUNK, fid, &r);
}

int cbox_gofer_clunk_many(struct cbox_gofer_client *c, const uint32_t *fids, size_t n)
{
	int first = 0;
	for (size_t done = 0; done < n;) {
		size_t k = n - done < CBOX_GOFER_CLUNKN_MAX ? n - done : CBOX_GOFER_CLUNKN_MAX;
		struct cbox_gofer_req q = {
		    .type = CBOX_GOFER_CLUNKN, .value = fids + done, .value_len = k};
		struct cbox_gofer_reply r;
		int rc = rpc(c, &q, &r, NULL);
		if (rc < 0 && first == 0)
			first = rc;
		if (rc == -EIO)
			break; /* the session is gone */
		done += k;
	}
	return first;
}

int cbox_gofer_stat(struct cbox_gofer_client *c, uint32_t fid, struct cbox_gofer_stat *st)
{
	struct cbox_gofer_reply r;
	int rc = fid_rpc(c, CBOX_GOFER_STAT, fid, &r);
	if (rc == 0)
		*st = r.stat;
	return rc;
}

int cbox_gofer_open(struct cbox_gofer_client *c, uint32_t fid, int flags)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_OPEN, .fid = fid, .flags = (uint32_t)flags};
	struct cbox_gofer_reply r;
	int fd = -1;
	int rc = rpc(c, &q, &r, &fd);
	return rc < 0 ? rc : fd;
}

int cbox_gofer_early_send(struct cbox_gofer_client *c, bool view, const char *const *walks,
                          size_t n_walks)
{
	if (c == NULL || c->broken)
		return -EIO;
	if (c->n_early)
		return broken(c, "first requests sent twice");
	if (n_walks > CBOX_GOFER_EARLY_WALKS)
		return -EINVAL;
	size_t n = 0;
	c->early[n++] =
	    (struct cbox_gofer_req){.type = CBOX_GOFER_STAT, .fid = CBOX_GOFER_ROOT_FID};
	if (view)
		c->early[n++] =
		    (struct cbox_gofer_req){.type = CBOX_GOFER_VIEW, .fid = CBOX_GOFER_ROOT_FID};
	for (size_t i = 0; i < n_walks; i++)
		c->early[n++] = (struct cbox_gofer_req){.type = CBOX_GOFER_WALK,
		                                        .fid = CBOX_GOFER_ROOT_FID,
		                                        .name = walks[i],
		                                        .name_len = slen(walks[i])};
	c->early_view = view;
	for (size_t i = 0; i < n; i++) {
		stamp(c, &c->early[i]);
		/* (the walks' names are the caller's: sent now, not kept) */
		int rc = send_req(c, &c->early[i], -1);
		c->early[i].name = NULL;
		if (rc < 0)
			return rc;
		c->n_early = i + 1;
	}
	return 0;
}

int cbox_gofer_early_recv(struct cbox_gofer_client *c, struct cbox_gofer_stat *root, int *view_fd,
                          struct cbox_gofer_early_walk *walks)
{
	*view_fd = -EOPNOTSUPP;
	if (c == NULL || c->broken)
		return -EIO;
	if (c->n_early == 0)
		return broken(c, "no first requests to take the answers of");
	size_t n = c->n_early;
	c->n_early = 0;
	struct cbox_gofer_reply r;
	int rc = recv_reply(c, &c->early[0], &r, NULL);
	if (rc == 0)
		*root = r.stat;
	size_t i = 1;
	if (c->early_view && i < n && !c->broken) {
		int fd = -1;
		int v = recv_reply(c, &c->early[i++], &r, &fd);
		*view_fd = v < 0 ? v : fd;
	}
	/* A walk's error (ENOENT: no such entry) is its answer, as cbox_gofer_walk's. */
	for (size_t w = 0; i < n && !c->broken; i++, w++) {
		walks[w].err = recv_reply(c, &c->early[i], &r, NULL);
		if (walks[w].err == 0) {
			walks[w].fid = r.fid;
			walks[w].stat = r.stat;
		}
	}
	return c->broken ? -EIO : rc;
}

int cbox_gofer_readlink(struct cbox_gofer_client *c, uint32_t fid, char *buf, size_t size)
{
	struct cbox_gofer_reply r;
	int rc = fid_rpc(c, CBOX_GOFER_READLINK, fid, &r);
	if (rc < 0)
		return rc;
	if (r.target_len >= size)
		return -ERANGE;
	memcpy(buf, r.target, r.target_len);
	buf[r.target_len] = '\0';
	return (int)r.target_len;
}

int cbox_gofer_statfs(struct cbox_gofer_client *c, uint32_t fid, struct cbox_gofer_statfs *st)
{
	struct cbox_gofer_reply r;
	int rc = fid_rpc(c, CBOX_GOFER_STATFS, fid, &r);
	if (rc == 0)
		*st = r.statfs;
	return rc;
}

int cbox_gofer_create(struct cbox_gofer_client *c, uint32_t dir, const char *name, int flags,
                      uint32_t mode, uint32_t uid, uint32_t gid, uint32_t *newfid,
                      struct cbox_gofer_stat *st)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_CREATE,
	                           .fid = dir,
	                           .flags = (uint32_t)flags,
	                           .mode = mode,
	                           .uid = uid,
	                           .gid = gid,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	int fd = -1;
	int rc = rpc(c, &q, &r, &fd);
	if (rc < 0)
		return rc;
	*newfid = r.fid;
	if (st)
		*st = r.stat;
	return fd;
}

int cbox_gofer_tmpfile(struct cbox_gofer_client *c, uint32_t dir, int flags, uint32_t mode,
                       uint32_t uid, uint32_t gid, uint32_t *newfid, struct cbox_gofer_stat *st)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_TMPFILE,
	                           .fid = dir,
	                           .flags = (uint32_t)flags,
	                           .mode = mode,
	                           .uid = uid,
	                           .gid = gid};
	struct cbox_gofer_reply r;
	int fd = -1;
	int rc = rpc(c, &q, &r, &fd); /* (a reply without its fd breaks the session) */
	if (rc < 0)
		return rc;
	*newfid = r.fid;
	if (st)
		*st = r.stat;
	return fd;
}

int cbox_gofer_mkdir(struct cbox_gofer_client *c, uint32_t dir, const char *name, uint32_t mode,
                     uint32_t uid, uint32_t gid)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_MKDIR,
	                           .fid = dir,
	                           .mode = mode,
	                           .uid = uid,
	                           .gid = gid,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_unlink(struct cbox_gofer_client *c, uint32_t dir, const char *name, bool is_dir)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_UNLINK,
	                           .fid = dir,
	                           .flags = is_dir ? 1 : 0,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_symlink(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                       const char *target, uint32_t uid, uint32_t gid)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SYMLINK,
	                           .fid = dir,
	                           .uid = uid,
	                           .gid = gid,
	                           .name = name,
	                           .name_len = slen(name),
	                           .name2 = target,
	                           .name2_len = slen(target)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_rename(struct cbox_gofer_client *c, uint32_t olddir, const char *oldname,
                      uint32_t newdir, const char *newname, uint32_t flags)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_RENAME,
	                           .flags = flags,
	                           .fid = olddir,
	                           .name = oldname,
	                           .name_len = slen(oldname),
	                           .fid2 = newdir,
	                           .name2 = newname,
	                           .name2_len = slen(newname)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_link(struct cbox_gofer_client *c, uint32_t target, uint32_t dir, const char *name)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_LINK,
	                           .fid = target,
	                           .fid2 = dir,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_setattr(struct cbox_gofer_client *c, uint32_t fid,
                       const struct cbox_gofer_setattr *a)
{
	if (a == NULL)
		return -EINVAL;
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SETATTR, .fid = fid, .attr = *a};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_mknod(struct cbox_gofer_client *c, uint32_t dir, const char *name, uint32_t mode,
                     uint32_t uid, uint32_t gid, uint32_t *newfid, struct cbox_gofer_stat *st)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_MKNOD,
	                           .fid = dir,
	                           .mode = mode,
	                           .uid = uid,
	                           .gid = gid,
	                           .name = name,
	                           .name_len = slen(name)};
	struct cbox_gofer_reply r;
	int rc = rpc(c, &q, &r, NULL);
	if (rc < 0)
		return rc;
	*newfid = r.fid;
	if (st)
		*st = r.stat;
	return 0;
}

int cbox_gofer_bind(struct cbox_gofer_client *c, uint32_t cwd, const char *path, size_t len,
                    int sockfd, uint32_t mode, uint32_t uid, uint32_t gid)
{
	if (sockfd < 0)
		return -EBADF;
	struct cbox_gofer_req q = {.type = CBOX_GOFER_BIND,
	                           .fid = cwd,
	                           .uid = uid,
	                           .gid = gid,
	                           .mode = mode,
	                           .name2 = path,
	                           .name2_len = len};
	struct cbox_gofer_reply r;
	return rpc_fd(c, &q, &r, NULL, sockfd);
}

int cbox_gofer_connect(struct cbox_gofer_client *c, uint32_t fid, uint32_t dir, const char *path,
                       size_t len, int sockfd)
{
	if (sockfd < 0)
		return -EBADF;
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_CONNECT, .fid = fid, .fid2 = dir, .name2 = path, .name2_len = len};
	struct cbox_gofer_reply r;
	return rpc_fd(c, &q, &r, NULL, sockfd);
}

/*
 * A datagram too long for a request (more than CBOX_GOFER_XVALUE_MAX bytes) goes in a memfd the
 * request carries beside the socket, sealed against any change before it is sent: the gofer maps
 * it and sends from the mapping (serve_ext.c, map_dgram). Returns the memfd, or -errno.
 */
static int dgram_memfd(const void *buf, size_t n)
{
	int mfd = memfd_create("cbox-dgram", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	const char *p = buf;
	for (size_t done = 0; done < n;) {
		ssize_t k = write(mfd, p + done, n - done);
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			close(mfd);
			return -e;
		}
		done += (size_t)k;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		int e = errno;
		close(mfd);
		return -e;
	}
	return mfd;
}

ssize_t cbox_gofer_sendto(struct cbox_gofer_client *c, uint32_t fid, uint32_t dir, const char *name,
                          size_t len, int sockfd, const void *buf, size_t n, int flags)
{
	if (sockfd < 0)
		return -EBADF;
	if (n > CBOX_GOFER_DGRAM_MAX)
		return -EMSGSIZE;
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SENDTO,
	                           .fid = fid,
	                           .fid2 = dir,
	                           .flags = (uint32_t)flags,
	                           .name2 = name,
	                           .name2_len = len,
	                           .value = buf,
	                           .value_len = n};
	CBOX_AUTOCLOSE int mfd = -1;
	if (n > CBOX_GOFER_XVALUE_MAX) {
		mfd = dgram_memfd(buf, n);
		if (mfd < 0)
			return mfd;
		q.flags |= CBOX_GOFER_SENDTO_MEMFD;
		q.value = NULL;
		q.value_len = 0;
	}
	struct cbox_gofer_reply r;
	int rc = rpc_fd2(c, &q, &r, NULL, sockfd, mfd);
	return rc < 0 ? rc : (ssize_t)r.fid;
}

int cbox_gofer_inotify(struct cbox_gofer_client *c, uint32_t fid, uint32_t mask, int ifd)
{
	if (ifd < 0)
		return -EBADF;
	struct cbox_gofer_req q = {.type = CBOX_GOFER_INOTIFY, .fid = fid, .flags = mask};
	struct cbox_gofer_reply r;
	int rc = rpc_fd(c, &q, &r, NULL, ifd);
	return rc < 0 ? rc : (int)r.fid;
}

/* Copy a GETXATTR/LISTXATTR reply's value: its length, or -ERANGE when size (not 0) is short. */
static int copy_value(const struct cbox_gofer_reply *r, void *buf, size_t size)
{
	if (size == 0)
		return (int)r->value_len;
	if (r->value_len > size)
		return -ERANGE;
	if (r->value_len > 0)
		memcpy(buf, r->value, r->value_len);
	return (int)r->value_len;
}

int cbox_gofer_getxattr(struct cbox_gofer_client *c, uint32_t fid, const char *name, void *buf,
                        size_t size)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_GETXATTR, .fid = fid, .name2 = name, .name2_len = slen(name)};
	struct cbox_gofer_reply r;
	int rc = rpc(c, &q, &r, NULL);
	return rc < 0 ? rc : copy_value(&r, buf, size);
}

int cbox_gofer_setxattr(struct cbox_gofer_client *c, uint32_t fid, const char *name,
                        const void *value, size_t len, int flags)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SETXATTR,
	                           .fid = fid,
	                           .flags = (uint32_t)flags,
	                           .name2 = name,
	                           .name2_len = slen(name),
	                           .value = value,
	                           .value_len = len};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}

int cbox_gofer_listxattr(struct cbox_gofer_client *c, uint32_t fid, char *buf, size_t size)
{
	struct cbox_gofer_reply r;
	int rc = fid_rpc(c, CBOX_GOFER_LISTXATTR, fid, &r);
	return rc < 0 ? rc : copy_value(&r, buf, size);
}

int cbox_gofer_removexattr(struct cbox_gofer_client *c, uint32_t fid, const char *name)
{
	struct cbox_gofer_req q = {
	    .type = CBOX_GOFER_REMOVEXATTR, .fid = fid, .name2 = name, .name2_len = slen(name)};
	struct cbox_gofer_reply r;
	return rpc(c, &q, &r, NULL);
}
