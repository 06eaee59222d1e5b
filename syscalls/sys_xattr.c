/*
 * Extended attributes: setxattr, getxattr, listxattr, removexattr and their l* (the link itself)
 * and f* (an fd) forms. The sentry makes Linux's checks in Linux's order (flags, name, value,
 * lookup, read-only mount, xattr_permission, the file's permission bits) on its view of the tree,
 * then asks the gofer, which works on the fid's inode and applies the same namespace policy again.
 *
 * Only the user.* namespace is served. security.capability would be file capabilities for
 * whoever runs the file on the host later; security.* and trusted.* are privileged on Linux and
 * system.* carries ACLs the sentry does not enforce. The guest is a root without capabilities, so
 * EPERM (write) and ENODATA (read) are what Linux tells it for trusted.*; security.* answers the
 * same here (a deviation: Linux would let it read security.selinux). system.* is refused as a
 * file system mounted without ACL support refuses it: ENODATA on a read (no ACL), EOPNOTSUPP on
 * a write, which cp -p, mv across mounts, tar and rsync take as "no ACLs here" and go on with
 * the mode bits. EPERM there made them fail ("preserving permissions: Operation not permitted").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cbox/cleanup.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

#define XNAME_MAX  255u   /* XATTR_NAME_MAX */
#define XVALUE_MAX 65536u /* XATTR_SIZE_MAX and XATTR_LIST_MAX */

/* The file an xattr call names: a path (followed or not) or an fd. */
struct xtarget {
	bool by_fd;
	int fd;         /* f* forms */
	uint64_t upath; /* path forms */
	bool follow;
};

/* The name argument, as Linux's strncpy_from_user into 256 bytes: ERANGE when empty or longer
 * than 255 bytes, EFAULT. */
static int read_xname(struct cbox_sysctx *c, uint64_t uname, char *name /* PATH_MAX */)
{
	int r = cbox_sys_read_path(c, uname, name);
	if (r == -ENAMETOOLONG)
		return -ERANGE;
	if (r < 0)
		return r;
	return r == 0 || (unsigned)r > XNAME_MAX ? -ERANGE : r;
}

static bool has_prefix(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/*
 * Linux's xattr_permission for the guest (no CAP_SYS_ADMIN, ever) plus the namespace policy
 * above. write: a set or remove. Returns 0 or -errno.
 */
static int xattr_permission(const struct cbox_task *t, const struct cbox_dentry *d,
                            const char *name, bool write)
{
	if (has_prefix(name, "trusted.") || has_prefix(name, "security."))
		return write ? -EPERM : -ENODATA;
	if (has_prefix(name, "system."))
		return write ? -EOPNOTSUPP : -ENODATA;
	if (has_prefix(name, "user.")) {
		/* user.* lives only on regular files and directories (Linux: quota abuse of
		 * device and fifo inodes). */
		if (!S_ISREG(d->mode) && !S_ISDIR(d->mode))
			return write ? -EPERM : -ENODATA;
		/* A sticky directory's user.* belong to its owner. */
		if (write && S_ISDIR(d->mode) && (d->mode & S_ISVTX) &&
		    !cbox_cred_owner(t->cred, d->uid))
			return -EPERM;
	}
	int r = cbox_vfs_may(t, d, write ? W_OK : R_OK);
	if (r < 0)
		return r;
	/* An unknown prefix: no handler takes it (after the permission check, as Linux). */
	return has_prefix(name, "user.") ? 0 : -EOPNOTSUPP;
}

static bool on_gofer(const struct cbox_dentry *d)
{
	return strcmp(d->mnt->ops->name, "gofer") == 0;
}

/*
 * Resolve the target to a dentry (a reference in *out). Returns 0, -errno, or
 * CBOX_SYSRET_CONTINUE for an fd that is not a file the sentry served (a pipe, a socket, an
 * eventfd): the host answers for those, and they are not files of the tree.
 */
static int64_t resolve(struct cbox_sysctx *c, const struct xtarget *x, struct cbox_dentry **out)
{
	if (x->by_fd) {
		int flags = 0, err = 0;
		struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, x->fd, &flags, &err);
		if (d == NULL)
			return err == -ENOENT ? CBOX_SYSRET_CONTINUE : -EBADF;
		/* The f*xattr calls refuse O_PATH fds, as the host's do. */
		if (flags & O_PATH)
			return -EBADF;
		*out = cbox_dentry_get(d);
		return 0;
	}
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, x->upath, path);
	if (r < 0)
		return r;
	/* A name the host replaced or removed is looked up again, so that the attribute goes to
	 * the file the name leads to now; the permission check reads its current mode. */
	return cbox_vfs_walk_current(c->s, c->task, AT_FDCWD, path,
	                             x->follow ? CBOX_WALK_FOLLOW : 0, out);
}

/* set (value != NULL or len 0 with set) and remove share their checks after the lookup. */
static int64_t do_set(struct cbox_sysctx *c, const struct xtarget *x, uint64_t uname,
                      uint64_t uvalue, uint64_t size, uint64_t flags, bool remove)
{
	char name[PATH_MAX];
	if (!remove && (flags & ~(uint64_t)(XATTR_CREATE | XATTR_REPLACE)))
		return -EINVAL;
	int r = read_xname(c, uname, name);
	if (r < 0)
		return r;
	CBOX_AUTOFREE void *value = NULL;
	if (!remove && size > XVALUE_MAX)
		return -E2BIG;
	if (!remove && size > 0) {
		value = malloc(size);
		if (value == NULL)
			return -ENOMEM;
		if (cbox_sys_read(c, uvalue, value, size) < 0)
			return -EFAULT;
	}
	struct cbox_dentry *d = NULL;
	int64_t rr = resolve(c, x, &d);
	if (rr != 0)
		return rr;
	if (!on_gofer(d))
		r = -EOPNOTSUPP; /* /proc and /dev keep no extended attributes */
	else if ((r = cbox_vfs_writable(c->s, d)) == 0 &&
	         (r = xattr_permission(c->task, d, name, true)) == 0) {
		struct cbox_gofer_client *g = cbox_sentry_gofer(c->s);
		uint32_t fid;
		r = cbox_dentry_fid(c->s, d, &fid);
		if (r == 0)
			r = remove ? cbox_gofer_removexattr(g, fid, name)
			           : cbox_gofer_setxattr(g, fid, name, value, size, (int)flags);
	}
	cbox_dentry_put(c->s, d);
	return r;
}

/* Copy a value or list of len bytes to the guest's buffer of size bytes (0: only the size). */
static int64_t give(struct cbox_sysctx *c, uint64_t ubuf, uint64_t size, const void *v, int len)
{
	if (size == 0)
		return len;
	if ((uint64_t)len > size)
		return -ERANGE;
	if (len > 0 && cbox_sys_write(c, ubuf, v, (size_t)len) < 0)
		return -EFAULT;
	return len;
}

static int64_t do_get(struct cbox_sysctx *c, const struct xtarget *x, uint64_t uname, uint64_t ubuf,
                      uint64_t size)
{
	char name[PATH_MAX];
	int r = read_xname(c, uname, name);
	if (r < 0)
		return r;
	struct cbox_dentry *d = NULL;
	int64_t rr = resolve(c, x, &d);
	if (rr != 0)
		return rr;
	CBOX_AUTOFREE char *v = NULL;
	uint32_t fid;
	if (!on_gofer(d))
		r = -EOPNOTSUPP;
	else if ((r = xattr_permission(c->task, d, name, false)) == 0 && !(v = malloc(XVALUE_MAX)))
		r = -ENOMEM;
	else if (r == 0 && (r = cbox_dentry_fid(c->s, d, &fid)) == 0)
		r = cbox_gofer_getxattr(cbox_sentry_gofer(c->s), fid, name, v, XVALUE_MAX);
	cbox_dentry_put(c->s, d);
	return r < 0 ? r : give(c, ubuf, size, v, r);
}

/* listxattr: no permission check on Linux; the gofer lists only user.* names. */
static int64_t do_list(struct cbox_sysctx *c, const struct xtarget *x, uint64_t ubuf, uint64_t size)
{
	struct cbox_dentry *d = NULL;
	int64_t rr = resolve(c, x, &d);
	if (rr != 0)
		return rr;
	CBOX_AUTOFREE char *v = NULL;
	uint32_t fid;
	int r = 0;
	if (!on_gofer(d))
		r = 0; /* nothing to list, as Linux answers for /proc */
	else if (!(v = malloc(XVALUE_MAX)))
		r = -ENOMEM;
	else if ((r = cbox_dentry_fid(c->s, d, &fid)) == 0)
		r = cbox_gofer_listxattr(cbox_sentry_gofer(c->s), fid, v, XVALUE_MAX);
	cbox_dentry_put(c->s, d);
	return r < 0 ? r : give(c, ubuf, size, v, r);
}

#define PATH_X(follow_)                                                                            \
	(struct xtarget)                                                                           \
	{                                                                                          \
		.by_fd = false, .fd = -1, .upath = ARG(0), .follow = (follow_)                     \
	}
#define FD_X                                                                                       \
	(struct xtarget)                                                                           \
	{                                                                                          \
		.by_fd = true, .fd = IARG(0), .upath = 0, .follow = false                          \
	}

int64_t sys_setxattr(struct cbox_sysctx *c)
{
	return do_set(c, &PATH_X(true), ARG(1), ARG(2), ARG(3), ARG(4), false);
}
int64_t sys_lsetxattr(struct cbox_sysctx *c)
{
	return do_set(c, &PATH_X(false), ARG(1), ARG(2), ARG(3), ARG(4), false);
}
int64_t sys_fsetxattr(struct cbox_sysctx *c)
{
	return do_set(c, &FD_X, ARG(1), ARG(2), ARG(3), ARG(4), false);
}
int64_t sys_getxattr(struct cbox_sysctx *c)
{
	return do_get(c, &PATH_X(true), ARG(1), ARG(2), ARG(3));
}
int64_t sys_lgetxattr(struct cbox_sysctx *c)
{
	return do_get(c, &PATH_X(false), ARG(1), ARG(2), ARG(3));
}
int64_t sys_fgetxattr(struct cbox_sysctx *c)
{
	return do_get(c, &FD_X, ARG(1), ARG(2), ARG(3));
}
int64_t sys_listxattr(struct cbox_sysctx *c)
{
	return do_list(c, &PATH_X(true), ARG(1), ARG(2));
}
int64_t sys_llistxattr(struct cbox_sysctx *c)
{
	return do_list(c, &PATH_X(false), ARG(1), ARG(2));
}
int64_t sys_flistxattr(struct cbox_sysctx *c)
{
	return do_list(c, &FD_X, ARG(1), ARG(2));
}
int64_t sys_removexattr(struct cbox_sysctx *c)
{
	return do_set(c, &PATH_X(true), ARG(1), 0, 0, 0, true);
}
int64_t sys_lremovexattr(struct cbox_sysctx *c)
{
	return do_set(c, &PATH_X(false), ARG(1), 0, 0, 0, true);
}
int64_t sys_fremovexattr(struct cbox_sysctx *c)
{
	return do_set(c, &FD_X, ARG(1), 0, 0, 0, true);
}
