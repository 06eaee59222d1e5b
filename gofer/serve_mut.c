/*
 * The gofer's requests that change the tree: CREATE, TMPFILE, LINK, RENAME, MKDIR, UNLINK,
 * SYMLINK, SETATTR and MKNOD (the rest of the handlers and the fid table are in serve.c). Each
 * node made gets the owner the request carries before the reply, or is removed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/gofer.h"
#include "internal.h"

/* Permission bits a guest may set: no setuid/setgid, so that a file written in the box never
 * becomes a privileged program for whoever runs it later on the host. A directory's setgid bit
 * runs nothing (its new nodes take its group, one the host lets the gofer give), so it stays. */
static mode_t safe_mode(uint32_t mode, bool dir)
{
	return (mode_t)(mode & (dir ? 03777 : 01777));
}

/*
 * Why every creation sets its owner before the reply, or is undone: a guest user's node left
 * owned by the gofer's identity (host root under the OCI runtime) is one that user's later
 * writes, chmods and unlinks in it could not reach; one left with ids the guest did not ask for
 * could be reached by a guest user who should not. Linux makes a node with its owner in one step,
 * so the only right outcomes are the node with that owner or no node at all.
 * The chown names the new inode through an fd of it (AT_EMPTY_PATH, not following a symlink),
 * never by a name someone on the host could swap meanwhile. An open file's fd works as well as
 * an O_PATH one: fchownat on it is fchown, and spares the seccomp filter a second syscall.
 * Modes: the kernel clears setuid (and setgid with group exec) of a non-directory it chowns; the
 * gofer never makes those bits (safe_mode), so the mode stays the one asked for. A directory's
 * mode is left alone, keeping the setgid bit a set-group-ID parent gave it.
 */
int cbox_gofer_own_new(int fd, const struct cbox_gofer_req *q, struct stat *st)
{
	/* Already the owner asked for (the usual case: root making a node as host root): no chown.
	 */
	if ((q->uid == (uint32_t)-1 || q->uid == st->st_uid) &&
	    (q->gid == (uint32_t)-1 || q->gid == st->st_gid))
		return 0;
	if (fchownat(fd, "", (uid_t)q->uid, (gid_t)q->gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return fstat(fd, st) < 0 ? -errno : 0; /* the reply shows the new owner (and ctime) */
}

void cbox_gofer_unmake(int dirfd, const char *name, mode_t type, const struct stat *st)
{
	struct stat cur;
	if (fstatat(dirfd, name, &cur, AT_SYMLINK_NOFOLLOW) < 0 || (cur.st_mode & S_IFMT) != type)
		return;
	if (st && (cur.st_dev != st->st_dev || cur.st_ino != st->st_ino))
		return;
	unlinkat(dirfd, name, type == S_IFDIR ? AT_REMOVEDIR : 0);
}

int cbox_gofer_do_create(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                         struct cbox_gofer_reply *r, int *fd_out)
{
	struct cbox_gofer_node *dir;
	char name[CBOX_GOFER_NAME_MAX + 1];
	struct stat st;
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	if (rc == 0 && (q->flags & O_DIRECTORY))
		rc = -EINVAL;
	/* O_CREAT and O_EXCL are what CREATE means anyway; the guest's flags may carry them. */
	uint32_t flags = q->flags & ~(uint32_t)(O_CREAT | O_EXCL);
	if (rc == 0)
		rc = cbox_gofer_check_open_flags(s, flags);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(name, q->name, q->name_len);
	/* O_EXCL: create makes a new regular file or fails; it never opens (or follows) an existing
	 * entry, which is OPEN's job after a walk. */
	int oflags = (int)flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	CBOX_AUTOCLOSE int fd = openat(dir->fd, name, oflags, safe_mode(q->mode, false));
	if (fd < 0)
		return -errno;
	CBOX_AUTOCLOSE int pfd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		rc = -errno;
	else if (cbox_gofer_check_same(fd, st.st_dev, st.st_ino) < 0)
		rc = -ESTALE;
	else
		rc = cbox_gofer_own_new(fd, q, &st);
	if (rc == 0)
		rc = cbox_gofer_add_fid(s, dir, name, &pfd, &st, &r->fid);
	if (rc < 0) {
		/* Undo the create so that a failed CREATE leaves nothing behind, and no file with
		 * an owner the guest did not ask for (see cbox_gofer_own_new). */
		if (rc != -ESTALE)
			unlinkat(dir->fd, name, 0);
		return rc;
	}
	cbox_gofer_fill_stat(&r->stat, &st);
	*fd_out = cbox_steal_fd(&fd);
	return 0;
}

/*
 * TMPFILE: an unnamed regular file in a directory of the tree (open(2)'s O_TMPFILE). The same
 * flag checks as OPEN, plus O_EXCL (which the kernel keeps: such a file can never be linked); it
 * must be writable, as Linux requires. The reply's fd and the fid's are the same open file: the
 * fid is what a later LINK names.
 */
int cbox_gofer_do_tmpfile(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, int *fd_out)
{
	struct cbox_gofer_node *dir;
	struct stat st;
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	uint32_t flags = q->flags & ~(uint32_t)O_EXCL;
	if (rc == 0 && (flags & O_DIRECTORY))
		rc = -EINVAL;
	if (rc == 0)
		rc = cbox_gofer_check_open_flags(s, flags);
	if (rc == 0 && (flags & O_ACCMODE) == O_RDONLY)
		rc = -EINVAL;
	if (rc < 0)
		return rc;
	/* O_TMPFILE includes O_DIRECTORY: the open can only make a file in dir, never open or
	 * follow anything. */
	int oflags = (int)q->flags | O_TMPFILE | O_CLOEXEC;
	CBOX_AUTOCLOSE int fd = openat(dir->fd, ".", oflags, safe_mode(q->mode, false));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A chown that fails needs no undo: the file has no name, and goes with fd. */
	rc = cbox_gofer_own_new(fd, q, &st);
	if (rc < 0)
		return rc;
	CBOX_AUTOCLOSE int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (mine < 0)
		return -errno;
	rc = cbox_gofer_add_anon_fid(s, &mine, &st, &r->fid);
	if (rc < 0)
		return rc;
	cbox_gofer_fill_stat(&r->stat, &st);
	*fd_out = cbox_steal_fd(&fd);
	return 0;
}

int cbox_gofer_do_link(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	struct cbox_gofer_node *dir;
	char name[CBOX_GOFER_NAME_MAX + 1];
	struct stat st;
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	int rc = cbox_gofer_lookup_dir(s, q->fid2, &dir);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(name, q->name, q->name_len);
	if (n->anon) {
		/* An unnamed file this gofer made: AT_EMPTY_PATH on the fd it opened needs no
		 * capability since Linux 6.10 (the opener's own credentials); older kernels answer
		 * ENOENT, as they do an unprivileged caller. An O_EXCL one is ENOENT too. */
		if (linkat(n->fd, "", dir->fd, name, AT_EMPTY_PATH) < 0)
			return -errno;
		return 0;
	}
	if (n->parent == NULL || S_ISDIR(n->mode))
		return -EPERM;
	/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which the gofer does not keep;
	 * link by parent and name (never following a symlink) and check the result is the file. */
	if (linkat(n->parent->fd, n->name, dir->fd, name, 0) < 0)
		return -errno;
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_dev != n->dev || st.st_ino != n->ino) {
		unlinkat(dir->fd, name, 0);
		return -ESTALE;
	}
	return 0;
}

int cbox_gofer_do_rename(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	struct cbox_gofer_node *d1, *d2;
	char n1[CBOX_GOFER_NAME_MAX + 1], n2[CBOX_GOFER_NAME_MAX + 1];
	int rc = cbox_gofer_lookup_dir(s, q->fid, &d1);
	if (rc == 0)
		rc = cbox_gofer_lookup_dir(s, q->fid2, &d2);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(n1, q->name, q->name_len);
	cbox_gofer_cstr(n2, q->name2, q->name2_len);
	return syscall(SYS_renameat2, d1->fd, n1, d2->fd, n2, q->flags) < 0 ? -errno : 0;
}

/*
 * MKDIR, SYMLINK: give the node just made as name in dirfd q's owner. Their replies carry no fid,
 * so the node is opened here (O_PATH, the name's last component not followed) and must be of the
 * type just made: anything else under the name was put there by someone on the host since, and
 * is neither given away nor removed (-EIO: the creation happened but cannot be finished, which
 * no errno of mkdir(2) or symlink(2) describes better). When the node is ours but cannot be
 * given its owner, it is removed (see cbox_gofer_own_new).
 */
static int own_made(int dirfd, const char *name, mode_t type, const struct cbox_gofer_req *q)
{
	struct stat st;
	if (!cbox_gofer_wants_owner(q))
		return 0;
	CBOX_AUTOCLOSE int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		int e = errno; /* (out of fds or memory: not left behind with the gofer's ids) */
		cbox_gofer_unmake(dirfd, name, type, NULL);
		return -e;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != type)
		return -EIO;
	int rc = cbox_gofer_own_new(fd, q, &st);
	if (rc < 0)
		cbox_gofer_unmake(dirfd, name, type, &st);
	return rc;
}

/* MKDIR, UNLINK, SYMLINK: one directory and one name. */
int cbox_gofer_do_dir_op(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	struct cbox_gofer_node *dir;
	char name[CBOX_GOFER_NAME_MAX + 1], target[CBOX_GOFER_TARGET_MAX + 1];
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(name, q->name, q->name_len);
	switch (q->type) {
	case CBOX_GOFER_MKDIR:
		if (mkdirat(dir->fd, name, safe_mode(q->mode, false)) < 0)
			return -errno;
		return own_made(dir->fd, name, S_IFDIR, q);
	case CBOX_GOFER_UNLINK:
		return unlinkat(dir->fd, name, q->flags ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
	default:
		cbox_gofer_cstr(target, q->name2, q->name2_len);
		if (symlinkat(target, dir->fd, name) < 0)
			return -errno;
		return own_made(dir->fd, name, S_IFLNK, q);
	}
}

/* fchmodat2 (Linux 6.6) is the only chmod that takes AT_EMPTY_PATH, i.e. works on the O_PATH fd
 * itself instead of re-resolving a name; glibc 2.36's headers do not number it yet. */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

static int set_mode(const struct cbox_gofer_node *n, uint32_t mode)
{
	/* Linux does not change a symlink's mode (EOPNOTSUPP); answer that before asking the host.
	 */
	if (S_ISLNK(n->mode))
		return -EOPNOTSUPP;
	if (syscall(__NR_fchmodat2, n->fd, "", safe_mode(mode & 07777, S_ISDIR(n->mode)),
	            AT_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

static int set_size(const struct cbox_gofer_node *n, int64_t size)
{
	if (S_ISDIR(n->mode))
		return -EISDIR;
	if (!S_ISREG(n->mode))
		return -EINVAL;
	/* ftruncate needs a writable fd; reopen checks the name still holds the fid's inode. */
	CBOX_AUTOCLOSE int fd = cbox_gofer_reopen(n, O_WRONLY);
	if (fd < 0)
		return fd;
	return ftruncate(fd, (off_t)size) < 0 ? -errno : 0;
}

int cbox_gofer_do_setattr(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	const struct cbox_gofer_setattr *a = &q->attr;
	const struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	struct stat st;
	if ((a->valid & CBOX_GOFER_SET_BY_NAME) &&
	    (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ||
	     cbox_gofer_name_moved(n, &st)))
		return -ESTALE;
	int rc = 0;
	if (a->valid & CBOX_GOFER_SET_MODE)
		rc = set_mode(n, a->mode);
	/* Every call below names the fid's own inode (AT_EMPTY_PATH) and never follows a symlink:
	 * a name swapped in by someone else cannot redirect it. */
	if (rc == 0 && (a->valid & (CBOX_GOFER_SET_UID | CBOX_GOFER_SET_GID))) {
		uid_t uid = (a->valid & CBOX_GOFER_SET_UID) ? (uid_t)a->uid : (uid_t)-1;
		gid_t gid = (a->valid & CBOX_GOFER_SET_GID) ? (gid_t)a->gid : (gid_t)-1;
		if (fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			rc = -errno;
	}
	if (rc == 0 && (a->valid & CBOX_GOFER_SET_SIZE))
		rc = set_size(n, a->size);
	if (rc == 0 && (a->valid & CBOX_GOFER_SET_TIMES)) {
		struct timespec ts[2] = {{.tv_sec = a->atime_sec, .tv_nsec = a->atime_nsec},
		                         {.tv_sec = a->mtime_sec, .tv_nsec = a->mtime_nsec}};
		if (utimensat(n->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			rc = -errno;
	}
	return rc;
}

/* The node types MKNOD may make: a FIFO, a socket node (what bind(2) of an AF_UNIX path leaves)
 * or an empty regular file. Returns the full mode to create or -errno. */
static int mknod_mode(uint32_t mode, mode_t *out)
{
	if (mode & ~(uint32_t)(S_IFMT | 07777))
		return -EINVAL;
	mode_t type = (mode_t)(mode & S_IFMT);
	switch (type) {
	case 0: /* mknod(2): no type means a regular file */
		type = S_IFREG;
		break;
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	case S_IFCHR:
	case S_IFBLK:
		/* The tree is served without devices: a device node made here would give the
		 * guest (or a later host user of a writable bind) a host device. */
		return -EPERM;
	default:
		return -EINVAL;
	}
	*out = type | safe_mode(mode, false);
	return 0;
}

int cbox_gofer_do_mknod(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r)
{
	struct cbox_gofer_node *dir;
	char name[CBOX_GOFER_NAME_MAX + 1];
	struct stat st;
	mode_t mode = 0;
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	if (rc == 0)
		rc = mknod_mode(q->mode, &mode);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(name, q->name, q->name_len);
	if (mknodat(dir->fd, name, mode, 0) < 0)
		return -errno;
	CBOX_AUTOCLOSE int pfd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		rc = -errno;
	else if ((st.st_mode & S_IFMT) != (mode & S_IFMT))
		rc = -ESTALE; /* replaced under us: not ours to remove */
	else
		rc = cbox_gofer_own_new(pfd, q, &st); /* the new fid's own fd */
	if (rc == 0)
		rc = cbox_gofer_add_fid(s, dir, name, &pfd, &st, &r->fid);
	if (rc < 0) {
		/* As CREATE: nothing left behind, nor with the wrong owner. */
		if (rc != -ESTALE)
			unlinkat(dir->fd, name, 0);
		return rc;
	}
	cbox_gofer_fill_stat(&r->stat, &st);
	return 0;
}
