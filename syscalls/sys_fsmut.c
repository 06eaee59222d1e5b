/*
 * Calls that change the tree: mkdir, unlink, rename, link, symlink, mknod, chmod, chown,
 * truncate, utimes. The rootfs is read-only until the overlay arrives, so after the path is
 * resolved with Linux's checks (ENOENT, ENOTDIR, EEXIST, EISDIR... come first, as on Linux)
 * the answer is EROFS on the read-only root, and EPERM on the sentry's own /proc and /dev.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

enum want {
	MUST_NOT_EXIST, /* mkdir, mknod, symlink, link target */
	MUST_EXIST,     /* unlink, rmdir, chmod, ... */
};

static int64_t denied(struct cbox_dentry *d)
{
	return d->mnt->readonly ? -EROFS : -EPERM;
}

/* Resolve path with the semantics of a create (want MUST_NOT_EXIST) or a change of an existing
 * entry, then refuse the change itself. is_dir: for rmdir/unlink's EISDIR/ENOTDIR. */
static int64_t mutate(struct cbox_sysctx *c, int dirfd, uint64_t upath, enum want want, int walk,
                      int is_dir)
{
	char path[PATH_MAX], last[NAME_MAX + 1];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	struct cbox_dentry *parent, *d;
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_PARENT, &parent, last);
	if (r < 0)
		return r;
	if (want == MUST_NOT_EXIST) {
		if (!strcmp(last, ".") || !strcmp(last, "..") || last[0] == '\0') {
			cbox_dentry_put(c->s, parent);
			return -EEXIST;
		}
		r = cbox_vfs_walk(c->s, c->task, dirfd, path, walk, &d, NULL);
		if (r == 0) {
			cbox_dentry_put(c->s, d);
			r = -EEXIST;
		} else if (r == -ENOENT) {
			r = (int)denied(parent);
		}
		cbox_dentry_put(c->s, parent);
		return r;
	}
	cbox_dentry_put(c->s, parent);
	if (is_dir >= 0 && (!strcmp(last, ".") || !strcmp(last, "..")))
		return is_dir ? (!strcmp(last, ".") ? -EINVAL : -ENOTEMPTY) : -EISDIR;
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, walk | CBOX_WALK_EMPTY_OK, &d, NULL);
	if (r < 0)
		return r;
	if (is_dir == 1 && !S_ISDIR(d->mode))
		r = -ENOTDIR;
	else if (is_dir == 0 && S_ISDIR(d->mode))
		r = -EISDIR;
	else
		r = (int)denied(d);
	cbox_dentry_put(c->s, d);
	return r;
}

int64_t sys_mkdir(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_mkdirat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_mknod(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_mknodat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_symlink(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(1), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_symlinkat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(1), ARG(2), MUST_NOT_EXIST, 0, -1);
}
int64_t sys_link(struct cbox_sysctx *c)
{
	int64_t r = mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, 0, -1);
	return r == -EROFS || r == -EPERM ? mutate(c, AT_FDCWD, ARG(1), MUST_NOT_EXIST, 0, -1) : r;
}
int64_t sys_linkat(struct cbox_sysctx *c)
{
	int follow = (IARG(4) & AT_SYMLINK_FOLLOW) ? CBOX_WALK_FOLLOW : 0;
	int64_t r = mutate(c, IARG(0), ARG(1), MUST_EXIST, follow, -1);
	return r == -EROFS || r == -EPERM ? mutate(c, IARG(2), ARG(3), MUST_NOT_EXIST, 0, -1) : r;
}
int64_t sys_unlink(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, 0, 0);
}
int64_t sys_rmdir(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, 0, 1);
}
int64_t sys_unlinkat(struct cbox_sysctx *c)
{
	if (IARG(2) & ~AT_REMOVEDIR)
		return -EINVAL;
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, 0, (IARG(2) & AT_REMOVEDIR) ? 1 : 0);
}
int64_t sys_rename(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, 0, -1);
}
int64_t sys_renameat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, 0, -1);
}
int64_t sys_renameat2(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, 0, -1);
}
int64_t sys_chmod(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_fchmodat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_chown(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_lchown(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, 0, -1);
}
int64_t sys_fchownat(struct cbox_sysctx *c)
{
	int follow = (IARG(4) & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, follow, -1);
}
int64_t sys_truncate(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, CBOX_WALK_FOLLOW, 0);
}
int64_t sys_utime(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_utimes(struct cbox_sysctx *c)
{
	return mutate(c, AT_FDCWD, ARG(0), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_futimesat(struct cbox_sysctx *c)
{
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, CBOX_WALK_FOLLOW, -1);
}
int64_t sys_utimensat(struct cbox_sysctx *c)
{
	if (ARG(1) == 0) {
		/* utimensat(fd, NULL, ...) = futimens(fd): the fd's own file */
		int err = 0;
		struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), NULL, &err);
		if (!d)
			return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err;
		return denied(d);
	}
	int follow = (IARG(3) & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	return mutate(c, IARG(0), ARG(1), MUST_EXIST, follow, -1);
}

static int64_t fd_change(struct cbox_sysctx *c)
{
	int err = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), NULL, &err);
	if (!d)
		return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err; /* pipes, sockets: the host */
	return denied(d);
}

int64_t sys_fchmod(struct cbox_sysctx *c)
{
	return fd_change(c);
}
int64_t sys_fchown(struct cbox_sysctx *c)
{
	return fd_change(c);
}
