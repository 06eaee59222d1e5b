/*
 * Calls that change the tree: mkdir, mknod, symlink, link, unlink, rmdir, rename, chmod, chown,
 * truncate and the utimes family. Each resolves its paths with the sentry's walk and makes the
 * checks Linux makes before touching the file system (EEXIST, ENOTDIR, EISDIR, EINVAL for bad
 * flags...), then asks the VFS (sentry/vfs_mut.c), which asks the gofer: the host kernel gives
 * the rest of the answers (EROFS on the read-only rootfs, ENOTEMPTY, EXDEV...).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <utime.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

static bool ends_with_slash(const char *path)
{
	size_t n = strlen(path);
	return n > 0 && path[n - 1] == '/';
}

static bool is_dot(const char *last)
{
	return last[0] == '\0' || !strcmp(last, ".") || !strcmp(last, "..");
}

/* A new entry: *dir is the parent (a reference) and last its name; EEXIST when it exists. */
static int at_new(struct cbox_sysctx *c, int dirfd, uint64_t upath, struct cbox_dentry **dir,
                  char *last)
{
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_PARENT, dir, last);
	if (r < 0)
		return r;
	struct cbox_dentry *d;
	if (is_dot(last))
		r = -EEXIST;
	else if ((r = cbox_vfs_walk(c->s, c->task, dirfd, path, 0, &d, NULL)) == 0) {
		cbox_dentry_put(c->s, d);
		r = -EEXIST;
	} else if (r == -ENOENT) {
		r = cbox_vfs_may(c->task, *dir,
		                 W_OK | X_OK); /* adding a name writes the directory */
	}
	if (r < 0)
		cbox_dentry_put(c->s, *dir);
	return r;
}

/* An existing entry, not followed: *dir its parent, last its name, *d the entry (references).
 * path gets the guest's path. */
static int at_old(struct cbox_sysctx *c, int dirfd, uint64_t upath, char *path,
                  struct cbox_dentry **dir, char *last, struct cbox_dentry **d)
{
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_PARENT, dir, last);
	if (r < 0)
		return r;
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_EMPTY_OK, d, NULL);
	if (r < 0)
		cbox_dentry_put(c->s, *dir);
	return r;
}

/* Removing or replacing victim in dir: write and search on dir, and in a sticky directory
 * (/tmp) the caller must own the directory or the entry (EPERM). */
/* Removing a name writes its directory; in a sticky directory only the owner of the file or of
 * the directory (or CAP_FOWNER) may (Linux's check_sticky). */
static int may_delete(const struct cbox_task *t, const struct cbox_dentry *dir,
                      const struct cbox_dentry *victim)
{
	int r = cbox_vfs_may(t, dir, W_OK | X_OK);
	if (r == 0 && (dir->mode & S_ISVTX) && dir->uid != t->cred->fsuid &&
	    !cbox_cred_owner(t->cred, victim->uid))
		r = -EPERM;
	return r;
}

static mode_t umasked(struct cbox_sysctx *c, mode_t mode)
{
	return mode & ~c->task->fs->umask;
}

static int64_t do_mkdir(struct cbox_sysctx *c, int dirfd, uint64_t upath, mode_t mode)
{
	struct cbox_dentry *dir;
	char last[NAME_MAX + 1];
	int r = at_new(c, dirfd, upath, &dir, last);
	if (r < 0)
		return r;
	r = cbox_vfs_mkdir(c->s, c->task, dir, last, umasked(c, mode & 01777));
	cbox_dentry_put(c->s, dir);
	return r;
}

int64_t sys_mkdir(struct cbox_sysctx *c)
{
	return do_mkdir(c, AT_FDCWD, ARG(0), (mode_t)ARG(1));
}
int64_t sys_mkdirat(struct cbox_sysctx *c)
{
	return do_mkdir(c, IARG(0), ARG(1), (mode_t)ARG(2));
}

static int64_t do_mknod(struct cbox_sysctx *c, int dirfd, uint64_t upath, mode_t mode)
{
	mode_t type = mode & S_IFMT;
	if (type == 0)
		type = S_IFREG;
	/* Linux's may_mknod, before the path: a directory is EPERM, an unknown type EINVAL;
	 * devices are refused after the path is resolved. */
	if (type == S_IFDIR)
		return -EPERM;
	if (type != S_IFCHR && type != S_IFBLK && type != S_IFREG && type != S_IFIFO &&
	    type != S_IFSOCK)
		return -EINVAL;
	struct cbox_dentry *dir;
	char last[NAME_MAX + 1];
	int r = at_new(c, dirfd, upath, &dir, last);
	if (r < 0)
		return r;
	/* No device nodes: the guest has no CAP_MKNOD, and a node made here would be a door to
	 * a host device for whoever opens it on the host later. */
	if (type == S_IFCHR || type == S_IFBLK)
		r = -EPERM;
	else
		r = cbox_vfs_mknod(c->s, c->task, dir, last, type | umasked(c, mode & 07777));
	cbox_dentry_put(c->s, dir);
	return r;
}

int64_t sys_mknod(struct cbox_sysctx *c)
{
	return do_mknod(c, AT_FDCWD, ARG(0), (mode_t)ARG(1));
}
int64_t sys_mknodat(struct cbox_sysctx *c)
{
	return do_mknod(c, IARG(0), ARG(1), (mode_t)ARG(2));
}

static int64_t do_symlink(struct cbox_sysctx *c, uint64_t utarget, int dirfd, uint64_t upath)
{
	char target[PATH_MAX];
	int r = cbox_sys_read_path(c, utarget, target);
	if (r < 0)
		return r;
	if (target[0] == '\0')
		return -ENOENT;
	struct cbox_dentry *dir;
	char last[NAME_MAX + 1];
	r = at_new(c, dirfd, upath, &dir, last);
	if (r < 0)
		return r;
	r = cbox_vfs_symlink(c->s, c->task, dir, last, target);
	cbox_dentry_put(c->s, dir);
	return r;
}

int64_t sys_symlink(struct cbox_sysctx *c)
{
	return do_symlink(c, ARG(0), AT_FDCWD, ARG(1));
}
int64_t sys_symlinkat(struct cbox_sysctx *c)
{
	return do_symlink(c, ARG(0), IARG(1), ARG(2));
}

static int64_t do_link(struct cbox_sysctx *c, int odirfd, uint64_t opath, int ndirfd,
                       uint64_t npath, int flags)
{
	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, opath, path);
	if (r < 0)
		return r;
	int wf = (flags & AT_SYMLINK_FOLLOW) ? CBOX_WALK_FOLLOW : 0;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	struct cbox_dentry *d, *dir;
	r = cbox_vfs_walk(c->s, c->task, odirfd, path, wf, &d, NULL);
	if (r < 0)
		return r;
	char last[NAME_MAX + 1];
	r = at_new(c, ndirfd, npath, &dir, last);
	if (r == 0) {
		r = S_ISDIR(d->mode) ? -EPERM : cbox_vfs_link(c->s, d, dir, last);
		cbox_dentry_put(c->s, dir);
	}
	cbox_dentry_put(c->s, d);
	return r;
}

int64_t sys_link(struct cbox_sysctx *c)
{
	return do_link(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
}
int64_t sys_linkat(struct cbox_sysctx *c)
{
	return do_link(c, IARG(0), ARG(1), IARG(2), ARG(3), IARG(4));
}

static int64_t do_unlink(struct cbox_sysctx *c, int dirfd, uint64_t upath, bool rmdir)
{
	char path[PATH_MAX], last[NAME_MAX + 1];
	struct cbox_dentry *dir, *d;
	int r = at_old(c, dirfd, upath, path, &dir, last, &d);
	if (r < 0)
		return r;
	if (rmdir && last[0] == '\0')
		r = -EBUSY; /* the root */
	else if (rmdir && is_dot(last))
		r = !strcmp(last, ".") ? -EINVAL : -ENOTEMPTY;
	else if (!rmdir && is_dot(last))
		r = -EISDIR;
	else if (rmdir && !S_ISDIR(d->mode))
		r = -ENOTDIR;
	else if (!rmdir && S_ISDIR(d->mode))
		r = -EISDIR;
	else if (!rmdir && ends_with_slash(path))
		r = -ENOTDIR;
	else if (d->mnt != dir->mnt)
		r = -EBUSY; /* a mount point */
	else
		r = may_delete(c->task, dir, d) ?: cbox_vfs_unlink(c->s, dir, last, rmdir);
	cbox_dentry_put(c->s, d);
	cbox_dentry_put(c->s, dir);
	return r;
}

int64_t sys_unlink(struct cbox_sysctx *c)
{
	return do_unlink(c, AT_FDCWD, ARG(0), false);
}
int64_t sys_rmdir(struct cbox_sysctx *c)
{
	return do_unlink(c, AT_FDCWD, ARG(0), true);
}
int64_t sys_unlinkat(struct cbox_sysctx *c)
{
	if (IARG(2) & ~AT_REMOVEDIR)
		return -EINVAL;
	return do_unlink(c, IARG(0), ARG(1), (IARG(2) & AT_REMOVEDIR) != 0);
}

static int rename_allowed(const struct cbox_task *t, const struct cbox_dentry *odir,
                          const struct cbox_dentry *od, const struct cbox_dentry *ndir,
                          const struct cbox_dentry *nd)
{
	int r = may_delete(t, odir, od);
	if (r == 0)
		r = nd ? may_delete(t, ndir, nd) : cbox_vfs_may(t, ndir, W_OK | X_OK);
	/* A directory moved to another parent rewrites its "..". */
	if (r == 0 && S_ISDIR(od->mode) && odir != ndir)
		r = cbox_vfs_may(t, od, W_OK);
	return r;
}

static int64_t do_rename(struct cbox_sysctx *c, int odirfd, uint64_t opath, int ndirfd,
                         uint64_t npath, unsigned flags)
{
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	char opathbuf[PATH_MAX], npathbuf[PATH_MAX], olast[NAME_MAX + 1], nlast[NAME_MAX + 1];
	struct cbox_dentry *odir, *od, *ndir, *nd = NULL;
	int r = at_old(c, odirfd, opath, opathbuf, &odir, olast, &od);
	if (r < 0)
		return r;
	r = cbox_sys_read_path(c, npath, npathbuf);
	if (r >= 0)
		r = cbox_vfs_walk(c->s, c->task, ndirfd, npathbuf, CBOX_WALK_PARENT, &ndir, nlast);
	if (r < 0)
		goto out_old;
	r = cbox_vfs_walk(c->s, c->task, ndirfd, npathbuf, 0, &nd, NULL);
	if (r == -ENOENT)
		nd = NULL;
	else if (r < 0)
		goto out;
	if (is_dot(olast) || is_dot(nlast))
		r = (flags & RENAME_NOREPLACE) && nd ? -EEXIST : -EBUSY;
	else if (nd && (flags & RENAME_NOREPLACE))
		r = -EEXIST;
	else if (!nd && (flags & RENAME_EXCHANGE))
		r = -ENOENT;
	else if (flags & RENAME_WHITEOUT)
		r = -EPERM; /* needs CAP_MKNOD: a whiteout is a device node */
	else if (!S_ISDIR(od->mode) && (ends_with_slash(opathbuf) || ends_with_slash(npathbuf)))
		r = -ENOTDIR;
	else
		r = rename_allowed(c->task, odir, od, ndir, nd)
		        ?: cbox_vfs_rename(c->s, odir, olast, ndir, nlast, flags);
out:
	if (nd)
		cbox_dentry_put(c->s, nd);
	cbox_dentry_put(c->s, ndir);
out_old:
	cbox_dentry_put(c->s, od);
	cbox_dentry_put(c->s, odir);
	return r;
}

int64_t sys_rename(struct cbox_sysctx *c)
{
	return do_rename(c, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
}
int64_t sys_renameat(struct cbox_sysctx *c)
{
	return do_rename(c, IARG(0), ARG(1), IARG(2), ARG(3), 0);
}
int64_t sys_renameat2(struct cbox_sysctx *c)
{
	return do_rename(c, IARG(0), ARG(1), IARG(2), ARG(3), (unsigned)ARG(4));
}

/* ---- attributes --------------------------------------------------------------------------- */

/*
 * Linux's checks (setattr_prepare), with a's uid and gid as the guest names them: only the
 * owner (or CAP_FOWNER) changes the mode or sets explicit times (EPERM); a new owner needs
 * CAP_CHOWN, a new group the owner being in it (or CAP_CHOWN); truncating needs write
 * permission, and so does touching the times to "now" for a non-owner (EACCES).
 */
static int may_setattr(const struct cbox_task *t, const struct cbox_dentry *d,
                       const struct cbox_gofer_setattr *a)
{
	const struct cbox_cred *cr = t->cred;
	bool owner = cbox_cred_owner(cr, d->uid);
	bool chown_cap = cbox_cred_capable_wrt(cr, CAP_CHOWN, d->uid, d->gid);
	if ((a->valid & CBOX_GOFER_SET_MODE) && !owner)
		return -EPERM;
	if ((a->valid & CBOX_GOFER_SET_UID) && !chown_cap &&
	    !(cr->fsuid == d->uid && a->uid == d->uid))
		return -EPERM;
	if ((a->valid & CBOX_GOFER_SET_GID) && !chown_cap &&
	    !(cr->fsuid == d->uid && (a->gid == d->gid || cbox_cred_in_group(cr, a->gid))))
		return -EPERM;
	if (a->valid & CBOX_GOFER_SET_SIZE) {
		int r = cbox_vfs_may(t, d, W_OK);
		if (r < 0)
			return r;
	}
	if ((a->valid & CBOX_GOFER_SET_TIMES) && !owner) {
		bool now = a->atime_nsec == UTIME_NOW && a->mtime_nsec == UTIME_NOW;
		return now ? cbox_vfs_may(t, d, W_OK) : -EPERM;
	}
	return 0;
}

/*
 * What Linux's setattr does to the set-ID bits on the caller's behalf (setattr_prepare,
 * should_remove_suid): a chmod by a caller neither in the file's group nor with CAP_FSETID gives
 * no set-group-ID, and a truncation by a caller without CAP_FSETID drops both (the sentry keeps
 * them: CBOX_VFS_KILL_SETID). A chown drops them whoever makes it (chown_attr).
 */
static struct cbox_gofer_setattr setid_rules(const struct cbox_task *t, const struct cbox_dentry *d,
                                             const struct cbox_gofer_setattr *a)
{
	struct cbox_gofer_setattr b = *a;
	const struct cbox_cred *cr = t->cred;
	if ((b.valid & CBOX_GOFER_SET_MODE) && (b.mode & S_ISGID) &&
	    !cbox_cred_in_group(cr, d->gid) &&
	    !cbox_cred_capable_wrt(cr, CAP_FSETID, d->uid, d->gid))
		b.mode &= ~(uint32_t)S_ISGID;
	if ((b.valid & CBOX_GOFER_SET_SIZE) && !cbox_cred_capable(cr, CAP_FSETID))
		b.valid |= CBOX_VFS_KILL_SETID;
	return b;
}

/* set_path's checks and change on the walked file d (named: a with SET_BY_NAME). */
static int set_walked(struct cbox_sysctx *c, struct cbox_dentry *d,
                      const struct cbox_gofer_setattr *a, const struct cbox_gofer_setattr *named)
{
	int r = 0;
	if ((a->valid & CBOX_GOFER_SET_SIZE) && S_ISDIR(d->mode))
		r = -EISDIR;
	else if ((a->valid & CBOX_GOFER_SET_SIZE) && !S_ISREG(d->mode))
		r = -EINVAL;
	else if (a->valid && (r = may_setattr(c->task, d, a)) == 0) {
		/* truncate(2) of a running program: ETXTBSY, as for an open for writing. */
		if ((a->valid & CBOX_GOFER_SET_SIZE) &&
		    cbox_text_busy(c->s, d->host_dev, d->host_ino))
			r = cbox_vfs_writable(c->s, d) ?: -ETXTBSY;
		else {
			struct cbox_gofer_setattr b = setid_rules(c->task, d, named);
			r = cbox_vfs_setattr(c->s, d, &b);
		}
	}
	return r;
}

/*
 * Resolve a path (walk flags wf) and set attributes on it. The host may have replaced or removed
 * the file since its name was cached: the gofer then refuses (SET_BY_NAME, ESTALE) and the path
 * is walked once more, as stat_path does. An empty path names dirfd's own file, never stale.
 */
static int64_t set_path(struct cbox_sysctx *c, int dirfd, uint64_t upath, int wf,
                        const struct cbox_gofer_setattr *a)
{
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	struct cbox_gofer_setattr named = *a;
	if (path[0] != '\0')
		named.valid |= CBOX_GOFER_SET_BY_NAME;
	for (int tries = 0;; tries++) {
		struct cbox_dentry *d;
		r = cbox_vfs_walk(c->s, c->task, dirfd, path, wf, &d, NULL);
		if (r < 0)
			return r;
		r = set_walked(c, d, a, &named);
		bool again = tries == 0 && r == -ESTALE && cbox_vfs_drop_stale(c->s, d, r);
		cbox_dentry_put(c->s, d);
		if (!again)
			return r == -ESTALE ? -ENOENT
			                    : r; /* replaced twice in a row: gone for now */
	}
}

/* Set attributes through an fd: the sentry's files only; the host answers for pipes and
 * sockets (CONTINUE), as their attributes are the host kernel's own business. */
static int64_t set_fd(struct cbox_sysctx *c, int fd, const struct cbox_gofer_setattr *a)
{
	int err = 0, flags = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, fd, &flags, &err);
	if (!d)
		return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err;
	if (flags & O_PATH)
		return -EBADF;
	if (!a->valid)
		return 0;
	int r = may_setattr(c->task, d, a);
	if (r < 0)
		return r;
	struct cbox_gofer_setattr b = setid_rules(c->task, d, a);
	return cbox_vfs_setattr(c->s, d, &b);
}

static struct cbox_gofer_setattr chmod_attr(uint64_t mode)
{
	return (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE,
	                                   .mode = (uint32_t)(mode & 07777)};
}

int64_t sys_chmod(struct cbox_sysctx *c)
{
	struct cbox_gofer_setattr a = chmod_attr(ARG(1));
	return set_path(c, AT_FDCWD, ARG(0), CBOX_WALK_FOLLOW, &a);
}
int64_t sys_fchmodat(struct cbox_sysctx *c)
{
	struct cbox_gofer_setattr a = chmod_attr(ARG(2));
	return set_path(c, IARG(0), ARG(1), CBOX_WALK_FOLLOW, &a);
}
int64_t sys_fchmodat2(struct cbox_sysctx *c)
{
	int flags = (int)ARG(3);
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	struct cbox_gofer_setattr a = chmod_attr(ARG(2));
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	return set_path(c, IARG(0), ARG(1), wf, &a);
}

int64_t sys_fchmod(struct cbox_sysctx *c)
{
	struct cbox_gofer_setattr a = chmod_attr(ARG(1));
	return set_fd(c, IARG(0), &a);
}

/*
 * chown's ids as the guest names them (-1: unchanged). An id that is no guest id is EINVAL, as
 * Linux answers for an unmapped one. may_setattr then checks the caller may give it;
 * cbox_vfs_setattr maps the ids to the host's: under cbox-run every guest id stands for the one
 * host id that owns what cbox-run serves, so no file is ever given to another host user there
 * (the sentry remembers the owner the guest gave: sentry/owners.c).
 */
static int chown_attr(struct cbox_sysctx *c, uint64_t uid, uint64_t gid,
                      struct cbox_gofer_setattr *a)
{
	uint32_t u = (uint32_t)uid, g = (uint32_t)gid;
	const struct cbox_cred *cr = c->task->cred;
	if ((u != (uint32_t)-1 && !cbox_cred_id_valid(cr, u)) ||
	    (g != (uint32_t)-1 && !cbox_cred_id_valid(cr, g)))
		return -EINVAL;
	/* (even with both ids -1: Linux's chown drops them all the same) */
	*a = (struct cbox_gofer_setattr){.valid = CBOX_VFS_KILL_SETID};
	if (u != (uint32_t)-1) {
		a->valid |= CBOX_GOFER_SET_UID;
		a->uid = u;
	}
	if (g != (uint32_t)-1) {
		a->valid |= CBOX_GOFER_SET_GID;
		a->gid = g;
	}
	return 0;
}

static int64_t do_chown(struct cbox_sysctx *c, int dirfd, uint64_t upath, uint64_t uid,
                        uint64_t gid, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	struct cbox_gofer_setattr a;
	int r = chown_attr(c, uid, gid, &a);
	if (r < 0)
		return r;
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	return set_path(c, dirfd, upath, wf, &a);
}

int64_t sys_chown(struct cbox_sysctx *c)
{
	return do_chown(c, AT_FDCWD, ARG(0), ARG(1), ARG(2), 0);
}
int64_t sys_lchown(struct cbox_sysctx *c)
{
	return do_chown(c, AT_FDCWD, ARG(0), ARG(1), ARG(2), AT_SYMLINK_NOFOLLOW);
}
int64_t sys_fchownat(struct cbox_sysctx *c)
{
	return do_chown(c, IARG(0), ARG(1), ARG(2), ARG(3), IARG(4));
}
int64_t sys_fchown(struct cbox_sysctx *c)
{
	struct cbox_gofer_setattr a;
	int r = chown_attr(c, ARG(1), ARG(2), &a);
	return r < 0 ? r : set_fd(c, IARG(0), &a);
}

int64_t sys_truncate(struct cbox_sysctx *c)
{
	if ((int64_t)ARG(1) < 0)
		return -EINVAL;
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_SIZE, .size = (int64_t)ARG(1)};
	return set_path(c, AT_FDCWD, ARG(0), CBOX_WALK_FOLLOW, &a);
}

/* Times: ts[0] atime, ts[1] mtime, each a timespec that may say UTIME_NOW or UTIME_OMIT. */
static int times_attr(const struct timespec ts[2], struct cbox_gofer_setattr *a)
{
	for (int i = 0; i < 2; i++)
		if (ts[i].tv_nsec != UTIME_NOW && ts[i].tv_nsec != UTIME_OMIT &&
		    (ts[i].tv_nsec < 0 || ts[i].tv_nsec > 999999999))
			return -EINVAL;
	*a = (struct cbox_gofer_setattr){0};
	/* Both omitted: nothing to change, and Linux returns 0 after the lookup. */
	if (ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
		return 0;
	a->valid = CBOX_GOFER_SET_TIMES;
	a->atime_sec = ts[0].tv_sec;
	a->atime_nsec = ts[0].tv_nsec;
	a->mtime_sec = ts[1].tv_sec;
	a->mtime_nsec = ts[1].tv_nsec;
	return 0;
}

static const struct timespec now2[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};

/* timeval[2] at addr (NULL: now) as timespecs; usec out of range is EINVAL. */
static int read_timevals(struct cbox_sysctx *c, uint64_t addr, struct timespec ts[2])
{
	if (addr == 0) {
		memcpy(ts, now2, sizeof(now2));
		return 0;
	}
	struct timeval tv[2];
	int r = cbox_sys_read(c, addr, tv, sizeof(tv));
	if (r < 0)
		return r;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
			return -EINVAL;
		ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
	}
	return 0;
}

static int64_t do_times(struct cbox_sysctx *c, int dirfd, uint64_t upath,
                        const struct timespec ts[2], int wf)
{
	struct cbox_gofer_setattr a;
	int r = times_attr(ts, &a);
	return r < 0 ? r : set_path(c, dirfd, upath, wf, &a);
}

int64_t sys_utime(struct cbox_sysctx *c)
{
	struct timespec ts[2];
	memcpy(ts, now2, sizeof(now2));
	if (ARG(1)) {
		struct utimbuf u;
		int r = cbox_sys_read(c, ARG(1), &u, sizeof(u));
		if (r < 0)
			return r;
		ts[0] = (struct timespec){u.actime, 0};
		ts[1] = (struct timespec){u.modtime, 0};
	}
	return do_times(c, AT_FDCWD, ARG(0), ts, CBOX_WALK_FOLLOW);
}
int64_t sys_utimes(struct cbox_sysctx *c)
{
	struct timespec ts[2];
	int r = read_timevals(c, ARG(1), ts);
	return r < 0 ? r : do_times(c, AT_FDCWD, ARG(0), ts, CBOX_WALK_FOLLOW);
}
int64_t sys_futimesat(struct cbox_sysctx *c)
{
	struct timespec ts[2];
	int r = read_timevals(c, ARG(2), ts);
	return r < 0 ? r : do_times(c, IARG(0), ARG(1), ts, CBOX_WALK_FOLLOW);
}
int64_t sys_utimensat(struct cbox_sysctx *c)
{
	int flags = IARG(3);
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	struct timespec ts[2];
	memcpy(ts, now2, sizeof(now2));
	if (ARG(2)) {
		int r = cbox_sys_read(c, ARG(2), ts, sizeof(ts));
		if (r < 0)
			return r;
	}
	struct cbox_gofer_setattr a;
	int r = times_attr(ts, &a);
	if (r < 0)
		return r;
	if (ARG(1) == 0) {
		/* utimensat(fd, NULL, ...) is futimens(fd): the fd's own file. */
		if (flags & AT_SYMLINK_NOFOLLOW)
			return -EINVAL;
		return set_fd(c, IARG(0), &a);
	}
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	return set_path(c, IARG(0), ARG(1), wf, &a);
}
