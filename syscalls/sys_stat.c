/* stat, lstat, fstat, newfstatat, statx, statfs, fstatfs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/stat.h>
#include <unistd.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

/* Resolve a path argument (or, with AT_EMPTY_PATH and "", the fd itself: *by_fd) to a dentry.
 * Returns 1 when the fd is not a file the sentry serves (the host should answer), 0 with *out
 * set, or -errno. */
static int resolve(struct cbox_sysctx *c, int dirfd, uint64_t upath, int flags,
                   struct cbox_dentry **out, bool *by_fd)
{
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	*by_fd = path[0] == '\0' && (flags & AT_EMPTY_PATH) && dirfd != AT_FDCWD;
	if (*by_fd) {
		int err = 0;
		struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, dirfd, NULL, &err);
		if (!d)
			return err == -ENOENT ? 1 : err;
		*out = cbox_dentry_get(d);
		return 0;
	}
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	return cbox_vfs_walk(c->s, c->task, dirfd, path, wf, out, NULL);
}

/*
 * Resolve and stat a path (or, with AT_EMPTY_PATH and "", the fd). A name the sentry had cached
 * may since lead to another file, or to none (the host removed or replaced it: an editor saves
 * by renaming a new file over the old one); the gofer's stat says so, and the path is then
 * walked once more, as Linux's NFS client retries a lookup after ESTALE. An fd's own file is
 * never stale: it is the file the guest opened, named or not. Returns as resolve, with *st
 * filled on 0.
 */
static int stat_path(struct cbox_sysctx *c, int dirfd, uint64_t upath, int flags, struct stat *st)
{
	for (int tries = 0;; tries++) {
		struct cbox_dentry *d;
		bool by_fd;
		int r = resolve(c, dirfd, upath, flags, &d, &by_fd);
		if (r != 0)
			return r;
		r = by_fd ? cbox_vfs_stat_fd(c->s, c->task, dirfd, d, st)
		          : cbox_vfs_stat(c->s, c->task, d, st);
		bool again = tries == 0 && !by_fd && cbox_vfs_drop_stale(c->s, d, r);
		cbox_dentry_put(c->s, d);
		if (!again)
			return r;
	}
}

int64_t cbox_sys_stat_at(struct cbox_sysctx *c, int dirfd, uint64_t upath, uint64_t ubuf, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT))
		return -EINVAL;
	struct stat st;
	int r = stat_path(c, dirfd, upath, flags, &st);
	if (r == 1)
		return CBOX_SYSRET_CONTINUE; /* a pipe or socket: fd-only, the host answers */
	return r < 0 ? r : cbox_sys_write(c, ubuf, &st, sizeof(st));
}

int64_t sys_stat(struct cbox_sysctx *c)
{
	return cbox_sys_stat_at(c, AT_FDCWD, ARG(0), ARG(1), 0);
}

int64_t sys_lstat(struct cbox_sysctx *c)
{
	return cbox_sys_stat_at(c, AT_FDCWD, ARG(0), ARG(1), AT_SYMLINK_NOFOLLOW);
}

int64_t sys_newfstatat(struct cbox_sysctx *c)
{
	return cbox_sys_stat_at(c, IARG(0), ARG(1), ARG(2), IARG(3));
}

int64_t sys_fstat(struct cbox_sysctx *c)
{
	int err = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), NULL, &err);
	if (!d)
		return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err;
	struct stat st;
	d = cbox_dentry_get(d);
	int r = cbox_vfs_stat_fd(c->s, c->task, IARG(0), d, &st);
	cbox_dentry_put(c->s, d);
	return r < 0 ? r : cbox_sys_write(c, ARG(1), &st, sizeof(st));
}

int64_t sys_statx(struct cbox_sysctx *c)
{
	int flags = IARG(2);
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if ((unsigned)ARG(3) & STATX__RESERVED)
		return -EINVAL;
	struct stat st;
	int r = stat_path(c, IARG(0), ARG(1), flags, &st);
	if (r == 1)
		return CBOX_SYSRET_CONTINUE;
	if (r < 0)
		return r;
	struct statx sx;
	memset(&sx, 0, sizeof(sx));
	sx.stx_mask = STATX_BASIC_STATS;
	sx.stx_blksize = (uint32_t)st.st_blksize;
	sx.stx_nlink = (uint32_t)st.st_nlink;
	sx.stx_uid = st.st_uid;
	sx.stx_gid = st.st_gid;
	sx.stx_mode = (uint16_t)st.st_mode;
	sx.stx_ino = st.st_ino;
	sx.stx_size = (uint64_t)st.st_size;
	sx.stx_blocks = (uint64_t)st.st_blocks;
	sx.stx_atime.tv_sec = st.st_atim.tv_sec;
	sx.stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
	sx.stx_mtime.tv_sec = st.st_mtim.tv_sec;
	sx.stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
	sx.stx_ctime.tv_sec = st.st_ctim.tv_sec;
	sx.stx_ctime.tv_nsec = (uint32_t)st.st_ctim.tv_nsec;
	sx.stx_rdev_major = major(st.st_rdev);
	sx.stx_rdev_minor = minor(st.st_rdev);
	sx.stx_dev_major = major(st.st_dev);
	sx.stx_dev_minor = minor(st.st_dev);
	return cbox_sys_write(c, ARG(4), &sx, sizeof(sx));
}

static int64_t put_statfs(struct cbox_sysctx *c, struct cbox_dentry *d, uint64_t ubuf)
{
	struct statfs sf;
	memset(&sf, 0, sizeof(sf));
	int r = 0;
	if (strcmp(d->mnt->ops->name, "gofer") == 0) {
		struct cbox_gofer_statfs g;
		uint32_t fid;
		r = cbox_dentry_fid(c->s, d, &fid);
		if (r == 0)
			r = cbox_gofer_statfs(cbox_sentry_gofer(c->s), fid, &g);
		if (r == 0) {
			sf.f_type = (long)g.type;
			sf.f_bsize = (long)g.bsize;
			sf.f_blocks = g.blocks;
			sf.f_bfree = g.bfree;
			sf.f_bavail = g.bavail;
			sf.f_files = g.files;
			sf.f_ffree = g.ffree;
			sf.f_namelen = (long)g.namelen;
			sf.f_frsize = (long)g.frsize;
			sf.f_flags = (long)g.flags;
		}
	} else {
		/* PROC_SUPER_MAGIC, TMPFS_MAGIC (devtmpfs reports tmpfs's), or the mount's own */
		sf.f_type = d->mnt->ops->magic                       ? (long)d->mnt->ops->magic(d)
		            : strcmp(d->mnt->ops->name, "proc") == 0 ? 0x9fa0
		                                                     : 0x01021994;
		sf.f_bsize = 4096;
		sf.f_namelen = 255;
		sf.f_frsize = 4096;
		sf.f_flags = d->mnt->readonly ? 1 : 0;
	}
	cbox_dentry_put(c->s, d);
	return r < 0 ? r : cbox_sys_write(c, ubuf, &sf, sizeof(sf));
}

int64_t sys_statfs(struct cbox_sysctx *c)
{
	struct cbox_dentry *d;
	bool by_fd;
	int r = resolve(c, AT_FDCWD, ARG(0), 0, &d, &by_fd);
	if (r < 0)
		return r;
	return put_statfs(c, d, ARG(1));
}

int64_t sys_fstatfs(struct cbox_sysctx *c)
{
	int err = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), NULL, &err);
	if (!d)
		return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err;
	return put_statfs(c, cbox_dentry_get(d), ARG(1));
}
