/* open, readlink, access, the working directory, directory listing and fd bookkeeping. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/loader_abi.h"
#include "cbox/log.h"
#include "internal.h"

#define ARG(i)   (c->trap->args[i])
#define IARG(i)  ((int)c->trap->args[i])
#define AT_FD(i) ((int)c->trap->args[i])

/*
 * A FIFO's blocking open waits, on Linux, until its other end is opened. The gofer opens FIFOs
 * without blocking (it serves every task), so the wait happens here, without blocking the
 * sentry either (cbox_sys_defer): a reader gets its fd once a writer has written or come and
 * gone (poll on the reader the sentry holds; that reader also lets a writer's open succeed); a
 * writer retries until there is a reader (ENXIO until then).
 */
struct fifo_open {
	struct cbox_dentry *d;
	int flags;
	int host; /* the reader's fd, held while waiting */
	struct cbox_sentry *s;
};

static void fifo_drop(void *arg)
{
	struct fifo_open *f = arg;
	if (f->host >= 0)
		close(f->host);
	cbox_dentry_put(f->s, f->d);
	free(f);
}

static int64_t fifo_step(struct cbox_sysctx *c, void *arg)
{
	struct fifo_open *f = arg;
	if (f->host < 0) {
		int host = cbox_vfs_open(c->s, c->task, f->d, f->flags);
		if (host == -ENXIO)
			return CBOX_SYSRET_DEFER; /* no reader yet */
		if (host < 0)
			return host;
		f->host = host;
	}
	return cbox_sys_install_answer(c, f->host, f->flags, f->d);
}

static int64_t open_fifo(struct cbox_sysctx *c, struct cbox_dentry *d, int flags)
{
	struct fifo_open *f = malloc(sizeof(*f));
	if (!f) {
		cbox_dentry_put(c->s, d);
		return -ENOMEM;
	}
	*f = (struct fifo_open){.d = d, .flags = flags, .host = -1, .s = c->s};
	bool reader = (flags & O_ACCMODE) == O_RDONLY;
	if (reader) {
		int host = cbox_vfs_open(c->s, c->task, d, flags);
		if (host < 0) {
			fifo_drop(f);
			return host;
		}
		f->host = host;
		struct pollfd p = {.fd = host, .events = POLLIN};
		if (poll(&p, 1, 0) == 1) { /* a writer has been here already */
			int64_t r = fifo_step(c, f);
			fifo_drop(f);
			return r;
		}
		return cbox_sys_defer(c, host, POLLIN, 0, fifo_step, fifo_drop, f);
	}
	int64_t r = fifo_step(c, f);
	if (r != CBOX_SYSRET_DEFER) {
		fifo_drop(f);
		return r;
	}
	return cbox_sys_defer(c, -1, 0, 10, fifo_step, fifo_drop, f);
}

/*
 * An O_PATH fd where the platform cannot install one: the seccomp platform installs fds with
 * SECCOMP_IOCTL_NOTIF_ADDFD, which refuses O_PATH files (EBADF); the ptrace platform passes real
 * ones. There the guest gets a stand-in: a new memfd reopened with neither read nor write access
 * (open's access mode 3). read, write and their kin fail on it with EBADF as on an O_PATH fd, and
 * it names nothing of the host. The sentry records it as d's O_PATH fd and answers the calls that
 * name the file through it: fstat and fstatat/readlinkat/fchownat of "", the *at calls with it as
 * dirfd, fchdir, execveat, getdents (EBADF), /proc/self/fd/N (whose open is a new open of the
 * file, with the opener's permission checks).
 *
 * Security: the file itself is not opened. An O_PATH open needs no permission on the file, only
 * search permission on the way to it, so a readable fd in its place would give the guest what
 * Linux does not (the content of a file it may not read); the stand-in gives nothing. Nor is a
 * readable open the answer where it is allowed: the guest could read through an fd it asked to
 * be unreadable (openat.o_path in tests/syscalls).
 *
 * fcntl's F_GETFL and F_SETFL reach the sentry on this platform, which answers them as Linux
 * does on an O_PATH fd (sys_fcntl). What still differs, as these run on the host fd (the
 * filter's fast path): lseek, fsync, fcntl's F_GETLK and F_GET_SEALS, and unlocks (flock's
 * LOCK_UN, F_UNLCK) succeed, and mmap fails with EACCES rather than EBADF.
 */
static int path_stand_in(void)
{
	CBOX_AUTOCLOSE int m = memfd_create("cbox-o-path", MFD_CLOEXEC);
	if (m < 0)
		return -errno;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", m);
	int fd = open(link, O_ACCMODE | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* (O_DIRECTORY's ENOTDIR came from the walk: CBOX_WALK_DIRECTORY) */
static int install_path_stand_in(struct cbox_sysctx *c, struct cbox_dentry *d, int flags)
{
	int host = path_stand_in();
	if (host < 0)
		return host;
	int fd = cbox_sys_install_answer(c, host, flags, d);
	close(host);
	return fd;
}

/* The kernel's __O_TMPFILE (glibc's __O_TMPFILE includes O_DIRECTORY, O_TMPFILE's other bit). */
#define TMPFILE_BIT 020000000

/*
 * O_TMPFILE: an unnamed file in the directory path names, made by the gofer; linkat can name it
 * later (AT_EMPTY_PATH, or /proc/self/fd/N with AT_SYMLINK_FOLLOW) unless O_EXCL was given.
 * Linux's checks after the flags' (do_open), in its order: the directory, write and search
 * permission on it, a writable mount.
 */
static int64_t open_tmpfile(struct cbox_sysctx *c, int dirfd, const char *path, int flags,
                            mode_t mode, int rflags)
{
	struct cbox_dentry *dir, *d;
	int wf = ((flags & O_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW) | CBOX_WALK_DIRECTORY | rflags;
	int r = cbox_vfs_walk(c->s, c->task, dirfd, path, wf, &dir, NULL);
	if (r < 0)
		return r;
	r = cbox_vfs_may(c->task, dir, W_OK | X_OK);
	if (r == 0)
		r = cbox_vfs_writable(c->s, dir);
	int host = r < 0 ? r
	                 : cbox_vfs_tmpfile(c->s, c->task, dir, flags,
	                                    (mode & 07777) & ~c->task->fs->umask, &d);
	cbox_dentry_put(c->s, dir);
	if (host < 0)
		return host;
	int fd = cbox_sys_install_answer(c, host, flags & ~O_TMPFILE, d);
	close(host);
	cbox_dentry_put(c->s, d);
	return fd;
}

static int64_t open_path(struct cbox_sysctx *c, int dirfd, const char *path, int flags, mode_t mode,
                         int rflags, bool may_retry);

/* Flags the kernel accepts for open (others are ignored by Linux too, except the creation ones). */
static int64_t do_open(struct cbox_sysctx *c, int dirfd, uint64_t upath, int flags, mode_t mode,
                       int rflags)
{
	/* The flags are checked before the path is read, as Linux does. O_TMPFILE is the kernel's
	 * __O_TMPFILE bit with O_DIRECTORY; with O_CREAT, without O_DIRECTORY, or on a file that
	 * could not be written, it is EINVAL (the kernel's O_TMPFILE_MASK). (With O_PATH it never
	 * gets here: open and openat drop it, openat2 refuses it.) */
	if ((flags & TMPFILE_BIT) &&
	    ((flags & (TMPFILE_BIT | O_DIRECTORY | O_CREAT)) != O_TMPFILE ||
	     (flags & O_ACCMODE) == O_RDONLY || (flags & O_ACCMODE) == O_ACCMODE))
		return -EINVAL;
	/* Linux 6.4 and later: O_CREAT with O_DIRECTORY is EINVAL. */
	if ((flags & O_CREAT) && (flags & O_DIRECTORY))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	if (flags & TMPFILE_BIT)
		return open_tmpfile(c, dirfd, path, flags, mode, rflags);
	return open_path(c, dirfd, path, flags, mode, rflags, true);
}

/*
 * open of a path (not O_TMPFILE). A name the sentry had cached may since lead to another file or
 * to none (the host removed or replaced it: an editor saves by renaming a new file over the
 * old). The gofer's reopen by name then fails with ESTALE or ENOENT; the name is dropped from
 * the cache and the path walked once more (may_retry), as Linux's NFS client retries a lookup
 * after ESTALE. The guest never sees ESTALE for a file it did not hold.
 */
static int64_t open_path(struct cbox_sysctx *c, int dirfd, const char *path, int flags, mode_t mode,
                         int rflags, bool may_retry)
{
	int r;
	int wf = ((flags & O_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW) | rflags;
	if (flags & O_DIRECTORY)
		wf |= CBOX_WALK_DIRECTORY;
	/* An open for reading: the gofer may open what the walk finds in the same round trip. */
	if ((flags & (O_ACCMODE | O_TRUNC | O_PATH | O_DIRECT | O_CREAT)) == O_RDONLY)
		wf |= CBOX_WALK_OPEN_READ;
	struct cbox_dentry *d = NULL;
	if (flags & O_CREAT) {
		char last[NAME_MAX + 1];
		struct cbox_dentry *parent;
		r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_PARENT | rflags, &parent,
		                  last);
		if (r < 0)
			return r;
		if (last[0] == '\0' || !strcmp(last, ".") || !strcmp(last, "..") ||
		    path[strlen(path) - 1] == '/') {
			cbox_dentry_put(c->s, parent);
			return -EISDIR;
		}
		r = cbox_vfs_walk(c->s, c->task, dirfd, path, wf, &d, NULL);
		if (r == 0 && (flags & O_EXCL)) {
			cbox_dentry_put(c->s, d);
			r = -EEXIST;
		} else if (r == -ENOENT) {
			int host = cbox_vfs_may(c->task, parent, W_OK | X_OK);
			if (host == 0)
				host = cbox_vfs_create(c->s, c->task, parent, last, flags,
				                       (mode & 07777) & ~c->task->fs->umask, &d);
			cbox_dentry_put(c->s, parent);
			if (host < 0)
				return host;
			int fd = cbox_sys_install_answer(c, host, flags, d);
			close(host);
			cbox_dentry_put(c->s, d);
			return fd;
		}
		cbox_dentry_put(c->s, parent);
		if (r < 0)
			return r;
	} else {
		r = cbox_vfs_walk(c->s, c->task, dirfd, path, wf, &d, NULL);
		if (r < 0)
			return r;
	}
	if (!(flags & O_PATH) && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) &&
	    S_ISREG(d->mode) && cbox_text_busy(c->s, d->host_dev, d->host_ino)) {
		/* A running program or interpreter: ETXTBSY (see cbox_text_busy), after the
		 * read-only mount and permission checks Linux makes first. Checked before the host
		 * open, which would already truncate. */
		r = cbox_vfs_writable(c->s, d);
		if (r == 0)
			r = cbox_vfs_may(c->task, d, W_OK);
		cbox_dentry_put(c->s, d);
		return r < 0 ? r : -ETXTBSY;
	}
	if (S_ISFIFO(d->mode) && !(flags & (O_NONBLOCK | O_PATH)) &&
	    (flags & O_ACCMODE) != O_RDWR && d->mnt->ops == cbox_vfs_gofer_ops())
		return open_fifo(c, d, flags); /* takes d */
	if ((flags & O_PATH) && !cbox_sentry_platform(c->s)->ops->installs_o_path) {
		int fd = install_path_stand_in(c, d, flags);
		cbox_dentry_put(c->s, d);
		return fd;
	}
	int host = cbox_vfs_open(c->s, c->task, d, flags);
	if (host < 0) {
		bool again = may_retry && cbox_vfs_drop_stale(c->s, d, host);
		cbox_dentry_put(c->s, d);
		return again ? open_path(c, dirfd, path, flags, mode, rflags, false) : host;
	}
	int fd = cbox_sys_install_answer(c, host, flags, d);
	close(host);
	cbox_dentry_put(c->s, d);
	return fd;
}

/* The flags O_PATH keeps; open and openat drop the others silently (openat2 refuses them). */
#define O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

static int legacy_flags(int flags)
{
	return (flags & O_PATH) ? flags & O_PATH_FLAGS : flags;
}

int64_t sys_open(struct cbox_sysctx *c)
{
	return do_open(c, AT_FDCWD, ARG(0), legacy_flags(IARG(1)), (mode_t)ARG(2), 0);
}

int64_t sys_openat(struct cbox_sysctx *c)
{
	return do_open(c, AT_FD(0), ARG(1), legacy_flags(IARG(2)), (mode_t)ARG(3), 0);
}

int64_t sys_creat(struct cbox_sysctx *c)
{
	return do_open(c, AT_FDCWD, ARG(0), O_CREAT | O_WRONLY | O_TRUNC, (mode_t)ARG(1), 0);
}

/*
 * openat2: openat with a struct open_how and RESOLVE_* rules. Linux's checks: the struct is at
 * least its first version (24 bytes) and any tail beyond what the sentry knows is zero (E2BIG);
 * unknown open or resolve flags, a mode without O_CREAT/O_TMPFILE, O_PATH with a flag it does
 * not keep, and RESOLVE_BENEATH with RESOLVE_IN_ROOT are EINVAL. RESOLVE_CACHED may always fail
 * with EAGAIN, as Linux allows.
 */
int64_t sys_openat2(struct cbox_sysctx *c)
{
	struct open_how how;
	uint64_t size = ARG(3);
	if (size < sizeof(how))
		return -EINVAL;
	if (size > 4096)
		return -E2BIG;
	int r = cbox_sys_read(c, ARG(2), &how, sizeof(how));
	if (r < 0)
		return r;
	for (uint64_t off = sizeof(how); off < size; off++) {
		unsigned char b;
		if ((r = cbox_sys_read(c, ARG(2) + off, &b, 1)) < 0)
			return r;
		if (b)
			return -E2BIG;
	}
	const uint64_t known = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
	                       RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED;
	if ((how.flags >> 32) || (how.resolve & ~known) || (how.mode & ~(uint64_t)07777))
		return -EINVAL;
	if (how.mode && !(how.flags & O_CREAT) && (how.flags & O_TMPFILE) != O_TMPFILE)
		return -EINVAL;
	if ((how.flags & O_PATH) && (how.flags & ~(uint64_t)O_PATH_FLAGS))
		return -EINVAL;
	if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if (how.resolve & RESOLVE_CACHED)
		return -EAGAIN;
	int rflags = ((how.resolve & RESOLVE_NO_XDEV) ? CBOX_WALK_NO_XDEV : 0) |
	             ((how.resolve & RESOLVE_NO_MAGICLINKS) ? CBOX_WALK_NO_MAGICLINKS : 0) |
	             ((how.resolve & RESOLVE_NO_SYMLINKS) ? CBOX_WALK_NO_SYMLINKS : 0) |
	             ((how.resolve & RESOLVE_BENEATH) ? CBOX_WALK_BENEATH : 0) |
	             ((how.resolve & RESOLVE_IN_ROOT) ? CBOX_WALK_IN_ROOT : 0);
	return do_open(c, AT_FD(0), ARG(1), (int)how.flags, (mode_t)how.mode, rflags);
}

/* name_to_handle_at: the path is resolved with Linux's errors, then the answer is that of a file
 * system without file handles: a handle would let open_by_handle_at bypass the sentry's walk. */
int64_t sys_name_to_handle_at(struct cbox_sysctx *c)
{
	int flags = IARG(4);
	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH | 0x200 /* AT_HANDLE_FID */))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, ARG(1), path);
	if (r < 0)
		return r;
	int wf = (flags & AT_SYMLINK_FOLLOW) ? CBOX_WALK_FOLLOW : 0;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	struct cbox_dentry *d;
	r = cbox_vfs_walk(c->s, c->task, AT_FD(0), path, wf, &d, NULL);
	if (r < 0)
		return r;
	cbox_dentry_put(c->s, d);
	return -EOPNOTSUPP;
}

static int64_t do_readlink(struct cbox_sysctx *c, int dirfd, uint64_t upath, uint64_t ubuf,
                           int64_t size)
{
	if (size <= 0)
		return -EINVAL;
	char path[PATH_MAX], target[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	struct cbox_dentry *d;
	/* (A symlink the host replaced is looked up again by the walk itself: vfs.c.) */
	r = cbox_vfs_walk(c->s, c->task, dirfd, path, CBOX_WALK_EMPTY_OK, &d, NULL);
	if (r < 0)
		return r;
	if (!S_ISLNK(d->mode) || !d->mnt->ops->readlink)
		r = -EINVAL;
	else
		r = d->mnt->ops->readlink(c->s, c->task, d, target, sizeof(target));
	cbox_dentry_put(c->s, d);
	if (r < 0)
		return r;
	size_t n = (size_t)r < (size_t)size ? (size_t)r : (size_t)size; /* no NUL, as Linux */
	r = cbox_sys_write(c, ubuf, target, n);
	return r < 0 ? r : (int64_t)n;
}

int64_t sys_readlink(struct cbox_sysctx *c)
{
	return do_readlink(c, AT_FDCWD, ARG(0), ARG(1), (int64_t)(int)ARG(2));
}

int64_t sys_readlinkat(struct cbox_sysctx *c)
{
	return do_readlink(c, AT_FD(0), ARG(1), ARG(2), (int64_t)(int)ARG(3));
}

/*
 * access: the mode bits and capabilities decide (cbox_vfs_may), as for the real ids unless
 * AT_EACCESS (see access_check), and a write is refused on a read-only mount.
 */
static int64_t access_check(struct cbox_sysctx *c, int dirfd, const char *path, int mode, int flags)
{
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	/* A file the gofer serves is checked by its mode now, not the one cached with its name: the
	 * attributes are refreshed as a stat would (cached for a while on a read-only mount), and a
	 * name the host replaced or removed is looked up again. The sentry's own file systems keep
	 * their modes. */
	struct cbox_dentry *d;
	int r = cbox_vfs_walk_current(c->s, c->task, dirfd, path, wf, &d);
	if (r < 0)
		return r;
	r = cbox_vfs_may(c->task, d, mode);
	if (r == 0 && (mode & W_OK) && (S_ISREG(d->mode) || S_ISDIR(d->mode) || S_ISLNK(d->mode)))
		r = cbox_vfs_writable(c->s, d);
	cbox_dentry_put(c->s, d);
	return r;
}

static int64_t do_access(struct cbox_sysctx *c, int dirfd, uint64_t upath, int mode, int flags)
{
	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, upath, path);
	if (r < 0)
		return r;
	if (flags & AT_EACCESS)
		return access_check(c, dirfd, path, mode, flags);
	/* Linux checks access() as the real ids (a set-user-ID program asks what its caller may
	 * do): the walk and the check run with those credentials in place of the task's. */
	struct cbox_cred *own = c->task->cred, *as = cbox_cred_for_access(own);
	if (!as)
		return -ENOMEM;
	c->task->cred = as;
	r = (int)access_check(c, dirfd, path, mode, flags);
	c->task->cred = own;
	cbox_cred_put(as);
	return r;
}

int64_t sys_access(struct cbox_sysctx *c)
{
	return do_access(c, AT_FDCWD, ARG(0), IARG(1), 0);
}

int64_t sys_faccessat(struct cbox_sysctx *c)
{
	return do_access(c, AT_FD(0), ARG(1), IARG(2), 0);
}

int64_t sys_faccessat2(struct cbox_sysctx *c)
{
	return do_access(c, AT_FD(0), ARG(1), IARG(2), IARG(3));
}

static int64_t set_cwd(struct cbox_sysctx *c, struct cbox_dentry *d)
{
	int r = !S_ISDIR(d->mode) ? -ENOTDIR : cbox_vfs_may(c->task, d, X_OK);
	if (r < 0) {
		cbox_dentry_put(c->s, d);
		return r;
	}
	cbox_dentry_put(c->s, c->task->fs->cwd);
	c->task->fs->cwd = d;
	return 0;
}

int64_t sys_chdir(struct cbox_sysctx *c)
{
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, ARG(0), path);
	if (r < 0)
		return r;
	struct cbox_dentry *d;
	r = cbox_vfs_walk(c->s, c->task, AT_FDCWD, path, CBOX_WALK_FOLLOW | CBOX_WALK_DIRECTORY, &d,
	                  NULL);
	return r < 0 ? r : set_cwd(c, d);
}

int64_t sys_fchdir(struct cbox_sysctx *c)
{
	int err = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), NULL, &err);
	if (!d)
		return err == -ENOENT ? -ENOTDIR : err;
	return set_cwd(c, cbox_dentry_get(d));
}

int64_t sys_getcwd(struct cbox_sysctx *c)
{
	char path[PATH_MAX];
	/* A removed working directory has no path (Linux: ENOENT). */
	for (struct cbox_dentry *d = c->task->fs->cwd; d; d = d->parent)
		if (d->unlinked)
			return -ENOENT;
	int n = cbox_vfs_path(c->task->fs->cwd, path, sizeof(path));
	if (n < 0)
		return n;
	if (ARG(1) < (uint64_t)n + 1)
		return -ERANGE;
	int r = cbox_sys_write(c, ARG(0), path, (size_t)n + 1);
	return r < 0 ? r : n + 1;
}

int64_t sys_umask(struct cbox_sysctx *c)
{
	mode_t old = c->task->fs->umask;
	c->task->fs->umask = (mode_t)ARG(0) & 0777;
	return old;
}

/*
 * Copy the records of a synthetic directory in buf (n bytes, in getdents64's form) that fit in
 * cap bytes of out, as getdents64 (is64) or the old getdents gives them: linux_dirent has the
 * type in its last byte, after the name's NUL, and is the same size (both round name + 20 bytes
 * up to 8). *used: the bytes of buf consumed, by which the file's offset moves (the d_off
 * cookies are buf's offsets either way, so lseek and telldir agree). Returns the bytes of out.
 */
static size_t dirents_out(const char *buf, size_t n, bool is64, char *out, size_t cap, size_t *used)
{
	size_t in = 0, o = 0;
	while (in + sizeof(struct cbox_dirent64) <= n) {
		const struct cbox_dirent64 *e = (const struct cbox_dirent64 *)(buf + in);
		if (e->d_reclen == 0 || in + e->d_reclen > n || o + e->d_reclen > cap)
			break;
		if (is64) {
			memcpy(out + o, e, e->d_reclen);
		} else {
			size_t name_max = e->d_reclen - offsetof(struct cbox_dirent64, d_name);
			size_t len = strnlen(e->d_name, name_max);
			char *r = out + o;
			memset(r, 0, e->d_reclen);
			uint64_t ino = e->d_ino, off = (uint64_t)e->d_off;
			unsigned short reclen = e->d_reclen;
			memcpy(r, &ino, 8);
			memcpy(r + 8, &off, 8);
			memcpy(r + 16, &reclen, 2);
			/* name at 18, NUL, then the type in the record's last byte (reclen >= len +
			 * 20) */
			memcpy(r + 18, e->d_name, len);
			r[reclen - 1] = (char)e->d_type;
		}
		in += e->d_reclen;
		o += e->d_reclen;
	}
	*used = in;
	return o;
}

/*
 * getdents64 and getdents on a directory the sentry made (/proc, /dev) copy records from the
 * memfd that stands for it (see cbox_vfs_open_synthetic_dir); the offset lives in the shared
 * open file description, so lseek and rewinddir work. Host directories are listed by the host.
 */
static int64_t do_getdents(struct cbox_sysctx *c, bool is64)
{
	int err = 0, flags = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), &flags, &err);
	if (!d)
		return err == -ENOENT ? CBOX_SYSRET_CONTINUE : err;
	if (flags & O_PATH)
		return -EBADF; /* (a stand-in would say ENOTDIR or EIO: see path_stand_in) */
	if (!d->mnt->ops->readdir) {
		/* A host directory, listed by the host; the names it gives are often looked up
		 * next, one by one (see cbox_vfs_listed). */
		cbox_vfs_listed(d);
		return CBOX_SYSRET_CONTINUE;
	}
	int host = cbox_fd_get(c->s, c->task, IARG(0));
	if (host < 0)
		return -EBADF;
	size_t cap = (size_t)(unsigned)ARG(2);
	if (cap > 65536)
		cap = 65536;
	static char buf[65536], out[65536];
	off_t off = lseek(host, 0, SEEK_CUR);
	ssize_t n = pread(host, buf, cap, off);
	int64_t r = n < 0 ? -EIO : 0;
	size_t used = 0, len = 0;
	if (r == 0)
		len = dirents_out(buf, (size_t)n, is64, out, cap, &used);
	if (r == 0 && used == 0 && n > 0)
		r = -EINVAL; /* the buffer cannot hold one record */
	if (r == 0 && used > 0) {
		r = cbox_sys_write(c, ARG(1), out, len);
		if (r == 0) {
			lseek(host, off + (off_t)used, SEEK_SET);
			r = (int64_t)len;
		}
	}
	close(host);
	return r;
}

int64_t sys_getdents64(struct cbox_sysctx *c)
{
	return do_getdents(c, true);
}

int64_t sys_getdents(struct cbox_sysctx *c)
{
	return do_getdents(c, false);
}

/* The ptrace platform's install socket looks closed to the guest (cbox_fd_reserved). */
static bool reserved(struct cbox_sysctx *c, int fd)
{
	return cbox_fd_reserved(c->s, fd);
}

int64_t sys_close(struct cbox_sysctx *c)
{
	if (reserved(c, IARG(0)))
		return -EBADF;
	cbox_fd_forget(c->s, c->task, IARG(0));
	return CBOX_SYSRET_CONTINUE;
}

int64_t sys_dup(struct cbox_sysctx *c)
{
	return reserved(c, IARG(0)) ? -EBADF : CBOX_SYSRET_CONTINUE;
}

int64_t sys_dup2(struct cbox_sysctx *c)
{
	return reserved(c, IARG(0)) || reserved(c, IARG(1)) ? -EBADF : CBOX_SYSRET_CONTINUE;
}

int64_t sys_dup3(struct cbox_sysctx *c)
{
	return sys_dup2(c);
}

int64_t sys_close_range(struct cbox_sysctx *c)
{
	unsigned first = (unsigned)ARG(0), last = (unsigned)ARG(1);
	if (first > last)
		return -EINVAL;
	if (!reserved(c, CBOX_PTRACE_INSTALL_FD) || first > CBOX_PTRACE_INSTALL_FD ||
	    last < CBOX_PTRACE_INSTALL_FD)
		return CBOX_SYSRET_CONTINUE;
	if (first == CBOX_PTRACE_INSTALL_FD)
		return 0;
	/* The range covers the ptrace platform's install socket. The call is at a ptrace stop
	 * there, so its registers can be narrowed to end just below the socket before it runs;
	 * fds above the socket then stay open (rare: fd numbers past 1022). */
	struct user_regs_struct r = c->trap->regs;
	r.rsi = CBOX_PTRACE_INSTALL_FD - 1;
	if (ptrace(PTRACE_SETREGS, c->trap->tid, 0, &r) < 0)
		return -EBADF;
	return CBOX_SYSRET_CONTINUE;
}

/*
 * fcntl reaches the sentry for F_NOTIFY, F_SETLEASE, F_GETFL and F_SETFL (platform/filter.c),
 * under --strict for every command. On an O_PATH fd Linux allows only the fd's own commands and
 * F_GETFL, which shows O_PATH with O_DIRECTORY and O_NOFOLLOW as given (check_fcntl_cmd,
 * build_open_flags); anything else is EBADF. The host would show a stand-in's "no access" flags
 * (seccomp) or those of the sentry's own O_PATH open (ptrace), and F_SETFL would succeed on a
 * stand-in. Any other fd's status flags are the host's: those of a file the gofer opened show
 * O_NOFOLLOW where it made the file, and lack it where the guest gave it to a plain open.
 */
int64_t sys_fcntl(struct cbox_sysctx *c)
{
	int cmd = IARG(1);
	if (reserved(c, IARG(0)))
		return -EBADF;
	struct cbox_dentry *d = NULL;
	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC && cmd != F_GETFD && cmd != F_SETFD) {
		int err = 0, flags = 0;
		d = cbox_fd_lookup(c->s, c->task, IARG(0), &flags, &err);
		if (d && (flags & O_PATH))
			return cmd == F_GETFL ? flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW)
			                      : -EBADF;
	}
	/* A lease would let the guest hold up other processes of the host: whoever opens a
	 * leased file of the working folder or of a -v volume (the user's editor, a build) waits
	 * for the guest to give the lease back, up to lease-break-time (45 s). Refused as Linux
	 * does with leases disabled (fs.leases-enable = 0). */
	if (cmd == F_SETLEASE)
		return -EINVAL;
	/* Directory notification (dnotify) on a directory of the tree runs on the host: the fd is
	 * the directory the gofer opened, and the host raises an event for each change in it,
	 * made by the guest through the sentry and the gofer or by anyone else, as it does for
	 * inotify watches (sys_inotify.c); the signal goes to the caller, the fd's owner. A
	 * directory the sentry makes up (/proc, /sys, /dev) is a memfd on the host, which would
	 * answer ENOTDIR: Linux sets the notification there and, as nothing in it is created,
	 * renamed or written through the file system, raises none. */
	if (cmd == F_NOTIFY && d && d->mnt->ops != cbox_vfs_gofer_ops() && S_ISDIR(d->mode))
		return 0;
	return CBOX_SYSRET_CONTINUE;
}

int64_t sys_ioctl(struct cbox_sysctx *c)
{
	if ((unsigned)ARG(1) == CBOX_LOADER_IOCTL && c->task->exec)
		return cbox_exec_loader_request(c);
	if (reserved(c, IARG(0)))
		return -EBADF;
	/* TIOCSTI pushes bytes into a terminal's input, and TIOCLINUX can read and write the
	 * console: on the caller's own terminal either would type commands into the user's shell
	 * once the sandbox is gone. The guest never gets them, whatever terminal it holds (Linux
	 * refuses TIOCSTI to a process without CAP_SYS_ADMIN on a terminal that is not its
	 * controlling one: EPERM). */
	if ((unsigned)ARG(1) == TIOCSTI || (unsigned)ARG(1) == TIOCLINUX)
		return -EPERM;
	int err = 0, flags = 0;
	struct cbox_dentry *d = cbox_fd_lookup(c->s, c->task, IARG(0), &flags, &err);
	if (d && (flags & O_PATH))
		return -EBADF; /* as Linux for an O_PATH fd (a stand-in would say ENOTTY) */
	/* Files the sentry generates (memfds standing for /proc files and directories) have no
	 * ioctls; host files the gofer opened and devices are the host's business. */
	if (d && strcmp(d->mnt->ops->name, "proc") == 0)
		return -ENOTTY;
	if (!d && err == -EBADF)
		return -EBADF;
	/* Terminals, pipes and sockets the guest inherited or made: the host answers. */
	return CBOX_SYSRET_CONTINUE;
}
