/*
 * The gofer's request handlers: a table of fids, each naming an O_PATH|O_NOFOLLOW fd, and one
 * handler per request type (the transport is session.c; the requests that change the tree are in
 * serve_mut.c, the batched WALKN, WALKDIR and CLUNKN in serve_batch.c, bind, inotify and xattrs
 * in serve_ext.c). Everything the peer sends was
 * checked by cbox_gofer_decode_request() before a handler sees it; the handlers add the checks that
 * need the file system (types, identity).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/gofer.h"
#include "internal.h"

void cbox_gofer_node_unref(struct cbox_gofer_node *n)
{
	while (n && --n->refs == 0) {
		struct cbox_gofer_node *parent = n->parent;
		close(n->fd);
		free(n);
		n = parent;
	}
}

void cbox_gofer_fill_stat(struct cbox_gofer_stat *o, const struct stat *st)
{
	*o = (struct cbox_gofer_stat){
	    .dev = st->st_dev,
	    .ino = st->st_ino,
	    .mode = st->st_mode,
	    .nlink = (uint32_t)st->st_nlink,
	    .uid = st->st_uid,
	    .gid = st->st_gid,
	    .rdev = st->st_rdev,
	    .size = st->st_size,
	    .blksize = st->st_blksize,
	    .blocks = st->st_blocks,
	    .atime_sec = st->st_atim.tv_sec,
	    .atime_nsec = st->st_atim.tv_nsec,
	    .mtime_sec = st->st_mtim.tv_sec,
	    .mtime_nsec = st->st_mtim.tv_nsec,
	    .ctime_sec = st->st_ctim.tv_sec,
	    .ctime_nsec = st->st_ctim.tv_nsec,
	};
}

int cbox_gofer_stat_node(int fd, struct stat *st, uint64_t *mnt_id)
{
	struct statx x;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID,
	          &x) < 0)
		return -errno;
	*st = (struct stat){
	    .st_dev = makedev(x.stx_dev_major, x.stx_dev_minor),
	    .st_ino = x.stx_ino,
	    .st_mode = x.stx_mode,
	    .st_nlink = x.stx_nlink,
	    .st_uid = x.stx_uid,
	    .st_gid = x.stx_gid,
	    .st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor),
	    .st_size = (off_t)x.stx_size,
	    .st_blksize = x.stx_blksize,
	    .st_blocks = (blkcnt_t)x.stx_blocks,
	    .st_atim = {x.stx_atime.tv_sec, x.stx_atime.tv_nsec},
	    .st_mtim = {x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec},
	    .st_ctim = {x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec},
	};
	*mnt_id = (x.stx_mask & STATX_MNT_ID) ? x.stx_mnt_id : 0;
	return 0;
}

/*
 * Mark o when the node's mount is read-only: the mount, not the file system, decides (a
 * writable bind and the read-only rootfs may share one host file system). Asked once per mount
 * the walks reach, not once per stat: a node on its parent's mount (the same mount id) has its
 * parent's answer, and a mount's flags do not change under the gofer (its mount namespace is
 * its own). du -s of 2000 files made 2000 fstatfs calls.
 */
static void mark_mount(struct cbox_gofer_stat *o, const struct cbox_gofer_server *s, uint32_t fid)
{
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, fid);
	struct statfs sf;
	if (n && n->ro < 0 && fstatfs(n->fd, &sf) == 0)
		n->ro = (sf.f_flags & ST_RDONLY) != 0;
	if (n && n->ro > 0)
		o->flags |= CBOX_GOFER_STAT_RDONLY;
}

/* Find a free slot, growing the table up to CBOX_GOFER_FID_MAX. Fid 0 is never handed out. */
static int alloc_fid(struct cbox_gofer_server *s, uint32_t *fid)
{
	for (uint32_t i = 0; i < s->cap; i++) {
		uint32_t f = (s->hint + i) % s->cap;
		if (f != CBOX_GOFER_ROOT_FID && s->fids[f] == NULL) {
			*fid = f;
			s->hint = f + 1;
			return 0;
		}
	}
	/* A bounded table: a peer that never clunks cannot make the gofer grow without limit. */
	if (s->cap >= CBOX_GOFER_FID_MAX)
		return -EMFILE;
	uint32_t ncap = s->cap * 2;
	struct cbox_gofer_node **n = realloc(s->fids, ncap * sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	memset(n + s->cap, 0, (ncap - s->cap) * sizeof(*n));
	*fid = s->cap;
	s->hint = s->cap + 1;
	s->fids = n;
	s->cap = ncap;
	return 0;
}

/* Make a fid for the O_PATH fd *fd (taken on success) named name in parent. */
int cbox_gofer_add_fid(struct cbox_gofer_server *s, struct cbox_gofer_node *parent,
                       const char *name, int *fd, const struct stat *st, uint32_t *fid)
{
	size_t len = strlen(name);
	int rc = alloc_fid(s, fid);
	if (rc < 0)
		return rc;
	struct cbox_gofer_node *n = malloc(sizeof(*n) + len + 1);
	if (n == NULL)
		return -ENOMEM;
	memcpy(n->name, name, len + 1);
	n->fd = cbox_steal_fd(fd);
	n->refs = 1;
	n->parent = parent;
	parent->refs++;
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->mode = st->st_mode;
	n->anon = false;
	/* (made or walked in parent: on its mount unless the walk says otherwise) */
	n->mnt_id = parent->mnt_id;
	n->ro = parent->ro;
	s->fids[*fid] = n;
	return 0;
}

/* Make a fid for the unnamed file open at *fd (taken on success): a TMPFILE. */
int cbox_gofer_add_anon_fid(struct cbox_gofer_server *s, int *fd, const struct stat *st,
                            uint32_t *fid)
{
	int rc = alloc_fid(s, fid);
	if (rc < 0)
		return rc;
	struct cbox_gofer_node *n = malloc(sizeof(*n) + 1);
	if (n == NULL)
		return -ENOMEM;
	*n = (struct cbox_gofer_node){.fd = cbox_steal_fd(fd),
	                              .refs = 1,
	                              .dev = st->st_dev,
	                              .ino = st->st_ino,
	                              .mode = st->st_mode,
	                              .ro = -1,
	                              .anon = true};
	n->name[0] = '\0';
	s->fids[*fid] = n;
	return 0;
}

void cbox_gofer_cstr(char *out, const char *p, size_t len)
{
	memcpy(out, p, len);
	out[len] = '\0';
}

int cbox_gofer_lookup_dir(const struct cbox_gofer_server *s, uint32_t fid,
                          struct cbox_gofer_node **dir)
{
	*dir = cbox_gofer_server_lookup(s, fid);
	if (*dir == NULL)
		return -EBADF;
	return S_ISDIR((*dir)->mode) ? 0 : -ENOTDIR;
}

int cbox_gofer_walk_name(struct cbox_gofer_server *s, struct cbox_gofer_node *dir, const char *name,
                         uint32_t *fid, struct cbox_gofer_stat *out)
{
	struct stat st;
	/* One component, O_NOFOLLOW: a symlink is returned as itself for the sentry to resolve
	 * within the guest's root, never followed here where it could point at the host. */
	CBOX_AUTOCLOSE int fd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint64_t mnt_id;
	int rc = cbox_gofer_stat_node(fd, &st, &mnt_id);
	if (rc < 0)
		return rc;
	rc = cbox_gofer_add_fid(s, dir, name, &fd, &st, fid);
	if (rc < 0)
		return rc;
	struct cbox_gofer_node *n = s->fids[*fid];
	if (mnt_id == 0 || mnt_id != dir->mnt_id) { /* a mount point, or the kernel cannot say */
		n->mnt_id = mnt_id;
		n->ro = -1;
	}
	cbox_gofer_fill_stat(out, &st);
	mark_mount(out, s, *fid);
	return 0;
}

static int do_walk(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                   struct cbox_gofer_reply *r)
{
	struct cbox_gofer_node *dir;
	char name[CBOX_GOFER_NAME_MAX + 1];
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(name, q->name, q->name_len);
	return cbox_gofer_walk_name(s, dir, name, &r->fid, &r->stat);
}

int cbox_gofer_clunk_one(struct cbox_gofer_server *s, uint32_t fid)
{
	/* The root must outlive the session: every walk starts from it. */
	if (fid == CBOX_GOFER_ROOT_FID)
		return -EINVAL;
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, fid);
	if (n == NULL)
		return -EBADF;
	s->fids[fid] = NULL;
	cbox_gofer_node_unref(n);
	return 0;
}

static int do_clunk(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	return cbox_gofer_clunk_one(s, q->fid);
}

/*
 * The sentry keeps names it walked; the host may remove or replace a file since (an editor saves
 * by renaming a new file over the old one). Whether n's name in its parent no longer leads to
 * its file st goes back with a STAT (and refuses a SETATTR by name), so that a lookup by name
 * can be made again. The root and an unnamed file have no name to check.
 */
bool cbox_gofer_name_moved(const struct cbox_gofer_node *n, const struct stat *st)
{
	struct stat cur;
	return n->parent && !n->anon &&
	       (fstatat(n->parent->fd, n->name, &cur, AT_SYMLINK_NOFOLLOW) < 0 ||
	        cur.st_dev != st->st_dev || cur.st_ino != st->st_ino);
}

static int do_stat(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                   struct cbox_gofer_reply *r)
{
	struct stat st;
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	cbox_gofer_fill_stat(&r->stat, &st);
	mark_mount(&r->stat, s, q->fid);
	if (cbox_gofer_name_moved(n, &st))
		r->stat.flags |= CBOX_GOFER_STAT_STALE;
	return 0;
}

/* Flags an OPEN or CREATE may carry; anything else (O_CREAT, O_EXCL, O_TMPFILE, O_PATH, FASYNC)
 * is refused rather than passed to the host, where it could mean more than the sentry checked. */
#define OPEN_FLAGS                                                                                 \
	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_DIRECTORY | O_TRUNC | O_NOATIME | O_CLOEXEC |       \
	 O_LARGEFILE | O_NOCTTY | O_NOFOLLOW | O_SYNC | O_DSYNC | O_DIRECT)

int cbox_gofer_check_open_flags(const struct cbox_gofer_server *s, uint32_t flags)
{
	if ((flags & ~(uint32_t)OPEN_FLAGS) || (flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	/* Checked here as well as by the read-only mount in the kernel: defence in depth. */
	if (s->readonly && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		return -EROFS;
	return 0;
}

static int check_open_type(mode_t mode)
{
	/* A symlink is never opened through: the sentry resolves it inside the guest's root. */
	if (S_ISLNK(mode))
		return -ELOOP;
	/* A socket in the rootfs could reach a host service (a Docker or D-Bus socket). */
	if (S_ISSOCK(mode))
		return -ENXIO;
	/* The rootfs is served without devices: a device node in an image must not give the guest
	 * a host device. The sentry serves /dev itself. */
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return -EACCES;
	return 0;
}

/* fd must be the inode n was walked to: a name can be replaced between walk and open. */
int cbox_gofer_check_same(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	return st.st_dev == dev && st.st_ino == ino ? 0 : -ESTALE;
}

/* Open n. O_NONBLOCK is always set for the open itself, so that a FIFO (or whatever was swapped
 * in under the name) can never block the single-threaded gofer; it is cleared afterwards unless
 * the caller asked for it. */
int cbox_gofer_reopen(const struct cbox_gofer_node *n, uint32_t flags)
{
	int oflags = (int)flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	CBOX_AUTOCLOSE int fd = -1;
	if (S_ISDIR(n->mode))
		fd = openat(n->fd, ".", oflags);
	else if (n->parent)
		fd = openat(n->parent->fd, n->name, oflags);
	else
		return -EINVAL;
	if (fd < 0)
		return -errno;
	int rc = cbox_gofer_check_same(fd, n->dev, n->ino);
	if (rc < 0)
		return rc;
	if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, (int)flags & ~O_NONBLOCK & ~O_ACCMODE) < 0)
		return -errno;
	return cbox_steal_fd(&fd);
}

/*
 * OPEN with O_PATH: for a socket node, an fd for the sentry's connect or sendto, which reaches
 * it through a magic link of its own /proc/self/fd. Only for sockets a guest of this session
 * bound: a socket that was in the tree already belongs to a host service (the rootfs is the
 * host's own root by default, a bind may hold an agent's socket), and reaching one is what the
 * sandbox exists to prevent. Those answer ECONNREFUSED, as a socket file without a listener.
 */
static int open_path(const struct cbox_gofer_server *s, const struct cbox_gofer_node *n,
                     uint32_t flags)
{
	if ((flags & ~(uint32_t)O_CLOEXEC) != (uint32_t)O_PATH)
		return -EINVAL;
	if (S_ISSOCK(n->mode) && !cbox_gofer_bound_has(s, n->dev, n->ino))
		return -ECONNREFUSED;
	/* Any other file: the guest's own open(O_PATH), which names the file without opening it
	 * (no read, write or exec through it; a symlink itself with O_NOFOLLOW). What can be done
	 * with it goes through the sentry (as a dirfd, to execveat, to linkat) or is a stat. */
	int fd = fcntl(n->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

static int do_open(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int *fd_out)
{
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	/* An unnamed file's node holds the open file itself (TMPFILE), not an O_PATH fd: a copy
	 * of it, even for O_PATH, would share its offset and its access mode. It cannot be reopened
	 * without /proc either. */
	if (n->anon)
		return -EINVAL;
	if (q->flags & O_PATH) {
		int fd = open_path(s, n, q->flags);
		if (fd < 0)
			return fd;
		*fd_out = fd;
		return 0;
	}
	int rc = cbox_gofer_check_open_flags(s, q->flags);
	if (rc == 0)
		rc = check_open_type(n->mode);
	if (rc == 0)
		rc = cbox_gofer_reopen(n, q->flags);
	if (rc < 0)
		return rc;
	*fd_out = rc;
	return 0;
}

/*
 * WALKOPEN, WALKNOPEN: the sentry walks a name to open it for reading. When the walk ends on a
 * regular file or a directory of a read-only mount, open it as an OPEN with O_RDONLY would and
 * mark the stat: the sentry keeps such an fd and reopens it for each open of the file, so the
 * walk and the open are one round trip instead of two (24 of python3 -c pass's 100). Not on a
 * writable mount, whose opens the sentry does not keep. Opening for reading changes nothing on
 * the host (no access time is set before a read). Anything else, or an open that fails, is left
 * to the OPEN that follows, which answers with its error.
 */
static void open_walked(struct cbox_gofer_server *s, uint32_t fid, struct cbox_gofer_stat *st,
                        int *fd_out)
{
	if (!(st->flags & CBOX_GOFER_STAT_RDONLY) || !(S_ISREG(st->mode) || S_ISDIR(st->mode)))
		return;
	const struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, fid);
	uint32_t flags = O_RDONLY | (S_ISDIR(st->mode) ? O_DIRECTORY : 0);
	if (n == NULL || n->anon || cbox_gofer_check_open_flags(s, flags) < 0 ||
	    check_open_type(n->mode) < 0)
		return;
	int fd = cbox_gofer_reopen(n, flags | O_CLOEXEC);
	if (fd < 0)
		return;
	*fd_out = fd;
	st->flags |= CBOX_GOFER_STAT_OPENED;
}

static int do_walk_open(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r, int *fd_out)
{
	int rc = do_walk(s, q, r);
	if (rc == 0)
		open_walked(s, r->fid, &r->stat, fd_out);
	return rc;
}

/* WALKNOPEN opens only the request's last name, and only when the walk got that far. */
static int do_walkn_open(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                         struct cbox_gofer_reply *r, char *buf, size_t size, int *fd_out)
{
	int rc = cbox_gofer_do_walkn(s, q, r, buf, size);
	if (rc < 0 || r->walk_error != 0 ||
	    (int)r->nwalked != cbox_gofer_check_walk_path(q->name2, q->name2_len))
		return rc;
	struct cbox_gofer_walked w;
	char *last = buf + (r->nwalked - 1) * sizeof(w);
	memcpy(&w, last, sizeof(w));
	open_walked(s, w.fid, &w.stat, fd_out);
	memcpy(last, &w, sizeof(w));
	return 0;
}

static int do_readlink(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                       struct cbox_gofer_reply *r, char *buf, size_t size)
{
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	if (!S_ISLNK(n->mode))
		return -EINVAL;
	ssize_t len = readlinkat(n->fd, "", buf, size);
	if (len < 0)
		return -errno;
	if ((size_t)len >= size || cbox_gofer_check_target(buf, (size_t)len) < 0)
		return -ENAMETOOLONG;
	r->target = buf;
	r->target_len = (size_t)len;
	return 0;
}

static int do_statfs(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                     struct cbox_gofer_reply *r)
{
	struct statfs sf;
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	if (fstatfs(n->fd, &sf) < 0)
		return -errno;
	r->statfs = (struct cbox_gofer_statfs){
	    .type = (uint64_t)sf.f_type,
	    .bsize = (uint64_t)sf.f_bsize,
	    .blocks = sf.f_blocks,
	    .bfree = sf.f_bfree,
	    .bavail = sf.f_bavail,
	    .files = sf.f_files,
	    .ffree = sf.f_ffree,
	    .namelen = (uint64_t)sf.f_namelen,
	    .frsize = (uint64_t)sf.f_frsize,
	    .flags = (uint64_t)sf.f_flags,
	};
	return 0;
}

/*
 * VIEW: a copy of the fd of the view (spawn.c, make_view): the tree's root seen through the
 * sandbox's user namespace. Security: the view is a read-only copy of the tree the sentry is
 * served anyway, hides and covers included (the copy is recursive), so it reaches nothing a
 * request could not; through it the sandbox's host id owns the files of the host id the guest's
 * own files are (host root under cbox-run run as root), which a read-only mount lets it read
 * but not change, and whatever the gofer would read for the sentry it reads already. A guest's
 * fd the sentry opens there resolves no path on the host: every call that takes one is the
 * sentry's (syscalls.def).
 */
static int do_view(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int *fd_out)
{
	if (q->fid != CBOX_GOFER_ROOT_FID)
		return -EINVAL;
	if (s->view_fd < 0)
		return -EOPNOTSUPP;
	int fd = fcntl(s->view_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	*fd_out = fd;
	return 0;
}

static bool is_mutation(uint32_t type)
{
	return (type >= CBOX_GOFER_CREATE && type <= CBOX_GOFER_MKNOD) || type == CBOX_GOFER_BIND ||
	       type == CBOX_GOFER_SETXATTR || type == CBOX_GOFER_REMOVEXATTR ||
	       type == CBOX_GOFER_TMPFILE;
}

int cbox_gofer_handle(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                      struct cbox_gofer_reply *r, int *fd_out, char *buf, size_t size, int in_fd,
                      int in_fd2)
{
	/* Refused before touching the file system; the kernel's read-only mount refuses them
	 * again (defence in depth). */
	if (s->readonly && is_mutation(q->type))
		return -EROFS;
	switch (q->type) {
	case CBOX_GOFER_WALK:
		return do_walk(s, q, r);
	case CBOX_GOFER_WALKN:
		return cbox_gofer_do_walkn(s, q, r, buf, size);
	case CBOX_GOFER_WALKOPEN:
		return do_walk_open(s, q, r, fd_out);
	case CBOX_GOFER_WALKNOPEN:
		return do_walkn_open(s, q, r, buf, size, fd_out);
	case CBOX_GOFER_WALKDIR:
		return cbox_gofer_do_walkdir(s, q, r, s->xbuf, CBOX_GOFER_XVALUE_MAX);
	case CBOX_GOFER_CLUNK:
		return do_clunk(s, q);
	case CBOX_GOFER_CLUNKN:
		return cbox_gofer_do_clunkn(s, q);
	case CBOX_GOFER_STAT:
		return do_stat(s, q, r);
	case CBOX_GOFER_OPEN:
		return do_open(s, q, fd_out);
	case CBOX_GOFER_VIEW:
		return do_view(s, q, fd_out);
	case CBOX_GOFER_READLINK:
		return do_readlink(s, q, r, buf, size);
	case CBOX_GOFER_STATFS:
		return do_statfs(s, q, r);
	case CBOX_GOFER_CREATE:
		return cbox_gofer_do_create(s, q, r, fd_out);
	case CBOX_GOFER_TMPFILE:
		return cbox_gofer_do_tmpfile(s, q, r, fd_out);
	case CBOX_GOFER_RENAME:
		return cbox_gofer_do_rename(s, q);
	case CBOX_GOFER_LINK:
		return cbox_gofer_do_link(s, q);
	case CBOX_GOFER_SETATTR:
		return cbox_gofer_do_setattr(s, q);
	case CBOX_GOFER_MKNOD:
		return cbox_gofer_do_mknod(s, q, r);
	case CBOX_GOFER_BIND:
		return cbox_gofer_do_bind(s, q, in_fd);
	case CBOX_GOFER_CONNECT:
		return cbox_gofer_do_connect(s, q, in_fd);
	case CBOX_GOFER_SENDTO:
		return cbox_gofer_do_sendto(s, q, r, in_fd, in_fd2);
	case CBOX_GOFER_INOTIFY:
		return cbox_gofer_do_inotify(s, q, r, in_fd);
	case CBOX_GOFER_GETXATTR:
	case CBOX_GOFER_SETXATTR:
	case CBOX_GOFER_LISTXATTR:
	case CBOX_GOFER_REMOVEXATTR:
		return cbox_gofer_do_xattr(s, q, r);
	default:
		return cbox_gofer_do_dir_op(s, q);
	}
}
