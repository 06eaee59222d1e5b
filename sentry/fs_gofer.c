/* The guest's root file system, served by the gofer. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

/*
 * Read-only file systems (the rootfs, -v ...:ro) do not change through the sandbox, so the sentry
 * keeps what it learned of their files instead of asking the gofer again: the attributes from
 * the walk (for a short while, since the host may still change its own files), and one open fd
 * per file, reopened locally through the sentry's /proc/self/fd for each later open (that fd
 * comes with the walk when the walk was made to open the file: cbox_fs_gofer_lookup_open). A reopen
 * gives a new open file description, as every open must, and reads nothing the gofer's open did
 * not already grant (it is read-only, and the host checks the sentry's own identity too).
 */
#define RO_STAT_TTL_NS 2000000000ULL
/* (a name the sentry looks up itself holds one too, fs_gofer_local.c: as many as the dcache) */
#define RO_FDS_MAX 4096
/* Unnamed files whose fd the sentry keeps for a reopen (cbox_fs_gofer_keep_anon). Past this, a
 * reopen of one through /proc/PID/fd/N is EINVAL, as before they were kept: a guest making
 * thousands of O_TMPFILE files cannot run the sentry out of fds. */
#define ANON_FDS_MAX 1024

uint64_t cbox_vfs_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

bool cbox_vfs_ro_fresh(const struct cbox_dentry *d)
{
	return cbox_vfs_now_ns() - d->ro_stat_ns < RO_STAT_TTL_NS;
}

/*
 * Under cbox-run the guest's user namespace maps only one host id (the one cbox-run runs as,
 * which owns what the gofer creates), and every guest id stands for it. As Linux shows files of
 * a user namespace, the host owner that is mapped appears as the guest's first ids (0:0 unless
 * `cbox-run --user`, as bwrap --uid maps the caller; unless the guest gave the file another
 * owner: owners.c), every other one as unmapped, shown as the overflow id 65534
 * (nobody): the guest learns nothing of the host's users, and tools that check ownership (git's
 * safe.directory) see their working folder as their own. Under the OCI runtime run as root
 * (all_ids) the ids are the host's, as runc shows a container's files without a user
 * namespace: an image's files keep the owners its layers gave them.
 */
uint32_t cbox_id_to_guest(const struct cbox_sentry *s, uint32_t host, bool group)
{
	if (s->cfg->all_ids)
		return host;
	if (host != (group ? s->cfg->owner_gid : s->cfg->owner_uid))
		return CBOX_UNMAPPED_ID;
	return group ? s->cfg->gid : s->cfg->uid;
}

uint32_t cbox_id_shown(const struct cbox_sentry *s, uint32_t id)
{
	return !s->cfg->all_ids && id == CBOX_UNMAPPED_ID ? CBOX_OVERFLOW_ID : id;
}

uint32_t cbox_id_to_host(const struct cbox_sentry *s, uint32_t id, bool group)
{
	if (s->cfg->all_ids || id == (uint32_t)-1)
		return id;
	return group ? s->cfg->owner_gid : s->cfg->owner_uid;
}

static void fill_stat(const struct cbox_sentry *s, const struct cbox_gofer_stat *g, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = g->dev;
	st->st_ino = g->ino;
	st->st_nlink = g->nlink;
	uint32_t uid, gid, mode;
	cbox_owner_of(s, g, &uid, &gid, &mode);
	st->st_mode = mode;
	st->st_uid = cbox_id_shown(s, uid);
	st->st_gid = cbox_id_shown(s, gid);
	st->st_rdev = g->rdev;
	st->st_size = g->size;
	st->st_blksize = g->blksize;
	st->st_blocks = g->blocks;
	st->st_atim.tv_sec = g->atime_sec;
	st->st_atim.tv_nsec = g->atime_nsec;
	st->st_mtim.tv_sec = g->mtime_sec;
	st->st_mtim.tv_nsec = g->mtime_nsec;
	st->st_ctim.tv_sec = g->ctime_sec;
	st->st_ctim.tv_nsec = g->ctime_nsec;
}

struct cbox_dentry *cbox_fs_gofer_dentry(struct cbox_sentry *s, struct cbox_dentry *dir,
                                         const char *name, uint32_t fid,
                                         const struct cbox_gofer_stat *st)
{
	struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, st->mode);
	if (!d) {
		if (fid != CBOX_DENTRY_NO_FID)
			cbox_gofer_clunk(s->gofer, fid);
		return NULL;
	}
	d->fid = fid;
	d->ino = st->ino;
	cbox_owner_of(s, st, &d->uid, &d->gid, &d->mode);
	d->host_dev = st->dev;
	d->host_ino = st->ino;
	return d;
}

struct cbox_dentry *cbox_fs_gofer_walked(struct cbox_sentry *s, struct cbox_dentry *dir,
                                         const char *name, uint32_t fid,
                                         const struct cbox_gofer_stat *st)
{
	struct cbox_dentry *d = cbox_fs_gofer_dentry(s, dir, name, fid, st);
	if (d)
		cbox_fs_gofer_keep_stat(s, d, st);
	return d;
}

/* The attributes of writable d a walk or a STAT just fetched, as the gofer gave them (owners are
 * shown from them when used: owners.c may change meanwhile), kept for walk_is_current. Not while
 * a guest task may be writing the file: its size and times change without a request. */
static void keep_fetched(struct cbox_sentry *s, struct cbox_dentry *d,
                         const struct cbox_gofer_stat *g)
{
	if (cbox_text_maybe_written(s, d->host_dev, d->host_ino) ||
	    (!d->walk_stat && !(d->walk_stat = malloc(sizeof(*d->walk_stat)))))
		return;
	*d->walk_stat = *g;
	d->walk_stat->flags &= ~(uint64_t)CBOX_GOFER_STAT_STALE;
	d->walk_trap = s->trap_seq;
	d->walk_ns = cbox_vfs_now_ns();
	d->walk_changes = cbox_gofer_changes(s->gofer);
}

void cbox_fs_gofer_keep_stat(struct cbox_sentry *s, struct cbox_dentry *d,
                             const struct cbox_gofer_stat *st)
{
	if ((st->flags & CBOX_GOFER_STAT_RDONLY) && (d->ro_stat = malloc(sizeof(struct stat)))) {
		fill_stat(s, st, d->ro_stat);
		d->ro_stat_ns = cbox_vfs_now_ns();
	} else if (!(st->flags & CBOX_GOFER_STAT_RDONLY)) {
		keep_fetched(s, d, st);
	}
}

/* An eighth of the limit each: with a limit of 256 the sentry's other fds (listeners, pidfds,
 * the fd being installed, /dev) still fit, and a guest cannot make the sentry fail to receive an
 * fd from the gofer, which would break the connection. */
void cbox_fs_gofer_fd_budget(struct cbox_sentry *s, long fd_limit)
{
	size_t share = fd_limit > 0 ? (size_t)fd_limit / 8 : 0;
	s->ro_fds_max = share < 8 ? 8 : share > RO_FDS_MAX ? RO_FDS_MAX : share;
	s->anon_fds_max = share < 8 ? 8 : share > ANON_FDS_MAX ? ANON_FDS_MAX : share;
}

static int g_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	(void)t;
	int r = cbox_fs_gofer_local_lookup(s, dir, name, out);
	if (r <= 0)
		return r;
	if (cbox_fs_gofer_local_absent(s, dir, name))
		return -ENOENT;
	uint32_t fid, dfid;
	struct cbox_gofer_stat st;
	r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	r = cbox_gofer_walk(s->gofer, dfid, name, &fid, &st);
	if (cbox_vfs_relieve(s, r))
		r = cbox_gofer_walk(s->gofer, dfid, name, &fid, &st);
	if (r < 0)
		return r;
	*out = cbox_fs_gofer_walked(s, dir, name, fid, &st);
	return *out ? 0 : -ENOMEM;
}

void cbox_fs_gofer_keep_walk_fd(struct cbox_sentry *s, struct cbox_dentry *d, int fd)
{
	if (fd < 0)
		return;
	/* Only where g_open would have kept the OPEN's fd: a read-only mount, within the budget. */
	if (d && d->ro_stat && !d->ro_fd1 && (S_ISREG(d->mode) || S_ISDIR(d->mode)) &&
	    s->n_ro_fds < s->ro_fds_max) {
		d->ro_fd1 = fd + 1;
		d->ro_fd_fresh = true;
		s->n_ro_fds++;
		return;
	}
	close(fd);
}

/*
 * The fd a walk brought (cbox_fs_gofer_keep_walk_fd) is an open of its own that nobody used:
 * the first open for reading of the file takes it as it is, when the flags asked for are ones
 * it has or can be given (a reopen costs 5 us more). A later open asks the gofer, whose fd is
 * kept in turn (as a copy of its own: keep_copy).
 */
static int take_walk_fd(struct cbox_sentry *s, struct cbox_dentry *d, int flags)
{
	int as_is = O_ACCMODE | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
	/* (a directory's stays: local lookups in it use it, local_dir_fd) */
	if (!d->ro_fd_fresh || (flags & ~as_is) || S_ISDIR(d->mode))
		return -1;
	int fd = d->ro_fd1 - 1;
	d->ro_fd1 = 0;
	d->ro_fd_fresh = false;
	s->n_ro_fds--;
	/* (the gofer opened it with O_RDONLY alone) */
	if ((flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int cbox_fs_gofer_lookup_open(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                              struct cbox_dentry **out)
{
	int r = cbox_fs_gofer_local_lookup(s, dir, name, out);
	if (r <= 0)
		return r;
	uint32_t fid, dfid;
	struct cbox_gofer_stat st;
	int fd = -1;
	r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	r = cbox_gofer_walk_open(s->gofer, dfid, name, &fid, &st, &fd);
	if (cbox_vfs_relieve(s, r))
		r = cbox_gofer_walk_open(s->gofer, dfid, name, &fid, &st, &fd);
	if (r < 0)
		return r;
	*out = cbox_fs_gofer_walked(s, dir, name, fid, &st);
	cbox_fs_gofer_keep_walk_fd(s, *out, fd);
	return *out ? 0 : -ENOMEM;
}

/*
 * A walk's attributes of a writable file are still the file's own when the guest cannot have
 * changed them since: no request that may change a file went to the gofer (each of the guest's
 * own changes but a write through an fd is one), no guest task may hold the file open for
 * writing (every open for writing is noted, task.c), and little time passed, as the host (or
 * another sandbox sharing the folder) may change its files at any time. du, find, ls -l and
 * rm -r stat each entry of a directory the sentry has just read ahead (vfs.c): 2000 files were
 * 2000 STAT round trips after the read-aheads' walks had brought the same attributes. A change
 * the host makes shows after at most WALK_STAT_TTL_NS, as on NFS with a short attribute cache;
 * an access time a read updates in the meantime shows late likewise. A STAT's answer is kept on
 * the same terms (keep_fetched): python stats its working folder before every import, which
 * were as many STAT round trips (16 for `import json, sqlite3`).
 */
#define WALK_STAT_TTL_NS 100000000ULL

static bool walk_is_current(struct cbox_sentry *s, const struct cbox_dentry *d)
{
	return cbox_vfs_now_ns() - d->walk_ns < WALK_STAT_TTL_NS &&
	       cbox_gofer_changes(s->gofer) == d->walk_changes &&
	       !cbox_text_maybe_written(s, d->host_dev, d->host_ino);
}

static int g_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	(void)t;
	if (d->ro_stat && cbox_vfs_ro_fresh(d)) {
		*st = *d->ro_stat;
		return 0;
	}
	/* A writable file's attributes are asked for afresh every time (the host and the guest's
	 * own writes, which the sentry does not see, may change them), except once after the walk
	 * that brought them: within the same call (stat("new/path") was a WALK and then a STAT
	 * round trip for the same answer; the walk is part of the call, any other write is
	 * concurrent), or soon after while the guest cannot have changed them (walk_is_current). */
	struct cbox_gofer_stat g;
	int r = 1;
	if (d->walk_stat) {
		if (d->walk_trap == s->trap_seq || walk_is_current(s, d)) {
			fill_stat(s, d->walk_stat, st);
			return 0;
		}
		/* Past that, the sentry's own stat of the name may still show the same file
		 * unchanged (fs_gofer_local.c, cbox_fs_gofer_local_check). */
		g = *d->walk_stat;
		r = cbox_fs_gofer_local_check(s, d, &g);
	}
	if (r > 0)
		r = cbox_fs_gofer_local_restat(s, d, &g);
	if (r > 0) {
		uint32_t fid;
		r = cbox_dentry_fid(s, d, &fid);
		if (r == 0)
			r = cbox_gofer_stat(s->gofer, fid, &g);
	}
	if (r < 0)
		return r;
	d->stale = (g.flags & CBOX_GOFER_STAT_STALE) != 0;
	fill_stat(s, &g, st);
	if (d->ro_stat) {
		*d->ro_stat = *st;
		d->ro_stat_ns = cbox_vfs_now_ns();
	} else {
		keep_fetched(s, d, &g);
	}
	/* Refresh what the permission checks rely on. */
	d->mode = st->st_mode;
	cbox_owner_of(s, &g, &d->uid, &d->gid, NULL);
	return 0;
}

int cbox_vfs_stat_fd(struct cbox_sentry *s, struct cbox_task *t, int fd, struct cbox_dentry *d,
                     struct stat *st)
{
	int r = cbox_vfs_stat(s, t, d, st);
	if (r != -ESTALE || d->mnt->ops != &cbox_fs_gofer || d->fid != CBOX_DENTRY_NO_FID)
		return r;
	/* An fd's own file is never stale, named or not: a file the sentry opened itself has
	 * no fid for the gofer to stat (cbox_fs_gofer_local_open), so its fd is stat'ed. */
	int host = cbox_fd_get(s, t, fd);
	if (host < 0)
		return r;
	struct cbox_gofer_stat g;
	int k = cbox_fs_gofer_local_fd_stat(s, d, host, &g);
	close(host);
	if (k != 0)
		return r;
	fill_stat(s, &g, st);
	return 0;
}

/*
 * A copy of fd that later opens of its file reopen through /proc/self/fd: an O_PATH open of its
 * own, not a dup. A dup would share the open file description the guest was given, and with it
 * the guest's flock(2) lock, which Linux drops only with the description's last fd: after the
 * guest closed its fd the lock stayed (held by the sentry's copy), and the next flock of the
 * file by any guest process waited forever.
 */
static int keep_copy(int fd)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return open(link, O_PATH | O_CLOEXEC);
}

void cbox_fs_gofer_keep_anon(struct cbox_sentry *s, struct cbox_dentry *d, int fd)
{
	if (d->anon_fd1 || s->n_anon_fds >= s->anon_fds_max)
		return;
	int kept = keep_copy(fd);
	if (kept >= 0) {
		d->anon_fd1 = kept + 1;
		s->n_anon_fds++;
	}
}

/*
 * An unnamed file reached through /proc/PID/fd/N is reopened as Linux's magic link reopens it:
 * a new open file description with the access mode asked for, whatever the first open's mode
 * (cbox_vfs_open has made the permission checks on the file's mode and owner, as Linux does).
 * The gofer cannot do it (its node holds the open file itself, and it has no /proc), so the
 * sentry reopens the fd it kept through its own /proc/self/fd.
 */
static int reopen_anon(const struct cbox_dentry *d, int flags)
{
	int keep = O_PATH | O_ACCMODE | O_APPEND | O_NONBLOCK | O_TRUNC | O_NOATIME | O_DSYNC |
	           O_SYNC | O_DIRECT;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", d->anon_fd1 - 1);
	int fd = open(link, (flags & keep) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * A reopen of an unlinked file that the sentry's host identity may not make: a file only root
 * may read when cbox-run runs as root (the sentry is then host nobody), such as the 0600 file
 * in which bash keeps a here-document larger than a pipe, which `cat /dev/stdin` reopens. The
 * guest gets a copy of the fd that led it there instead, as for the caller's stdio
 * (reopen_target, fs_proc.c): the same open file (shared offset, no O_TRUNC). Only the very
 * file (the fd may have been closed or reused since), and only an access that fd has: a copy
 * must not give the guest more than it holds. Else the host's answer stands.
 */
static int guests_own(struct cbox_sentry *s, const struct cbox_dentry *d, int flags, int err)
{
	struct cbox_task *src = d->anon_src_tid ? cbox_task_find(s, d->anon_src_tid) : NULL;
	int copy = src ? cbox_task_getfd(src, d->anon_src_fd) : -1;
	if (copy < 0)
		return err;
	struct stat st;
	int have = fcntl(copy, F_GETFL);
	bool same = fstat(copy, &st) == 0 && (uint64_t)st.st_dev == d->host_dev &&
	            (uint64_t)st.st_ino == d->host_ino;
	if (!same || have < 0 || (flags & O_PATH) || !cbox_access_within(have, flags)) {
		close(copy);
		return err;
	}
	return copy;
}

/* A new open of d's kept fd (ro_fd1) through the sentry's /proc/self/fd, or -errno. */
static int reopen_kept(const struct cbox_dentry *d, int flags)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", d->ro_fd1 - 1);
	int fd = open(link, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int g_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	if (d->anon_fd1) {
		int fd = reopen_anon(d, flags);
		return fd == -EACCES || fd == -EPERM ? guests_own(s, d, flags, fd) : fd;
	}
	/* Only flags that describe the open file go to the gofer; creation is a separate request.
	 */
	uint32_t fid;
	int r;
	if (flags & O_PATH) {
		if (d->ro_fd1 && d->ro_stat && (r = reopen_kept(d, O_PATH)) >= 0)
			return r;
		r = cbox_dentry_fid(s, d, &fid);
		return r < 0 ? r : cbox_gofer_open(s->gofer, fid, O_PATH | O_CLOEXEC);
	}
	int keep = O_ACCMODE | O_APPEND | O_NONBLOCK | O_DIRECTORY | O_TRUNC | O_NOATIME | O_DSYNC |
	           O_SYNC | O_DIRECT;
	bool plain_read = (flags & (O_ACCMODE | O_TRUNC | O_DIRECT)) == O_RDONLY &&
	                  (S_ISREG(d->mode) || S_ISDIR(d->mode)) && d->ro_stat;
	if (plain_read && d->ro_fd1 && !cbox_vfs_ro_fresh(d)) {
		/* The kept fd is of the file the name led to when d was looked up: once what the
		 * sentry knows of it is old, check that the name still leads there (the host may
		 * have renamed another file over it), else the caller walks again (ESTALE). */
		struct stat st;
		r = g_stat(s, t, d, &st);
		if (r < 0 || d->stale)
			return r < 0 ? r : -ESTALE;
	}
	if (plain_read && d->ro_fd1) {
		int fd = take_walk_fd(s, d, flags);
		if (fd < 0 && d->ro_fd1)
			fd = reopen_kept(d, (flags & (O_NONBLOCK | O_DIRECTORY | O_NOATIME)) |
			                        O_RDONLY);
		if (fd >= 0)
			return fd;
		/* EACCES: the sentry's own host identity may not read it; the gofer may. */
	}
	if (!d->ro_stat) {
		int fd = cbox_fs_gofer_local_open(s, d, flags);
		if (fd >= 0)
			return fd;
	}
	r = cbox_dentry_fid(s, d, &fid);
	if (r < 0)
		return r;
	int fd = cbox_gofer_open(s->gofer, fid, (flags & keep) | O_CLOEXEC);
	if (cbox_vfs_relieve(s, fd))
		fd = cbox_gofer_open(s->gofer, fid, (flags & keep) | O_CLOEXEC);
	if (fd >= 0 && plain_read && !d->ro_fd1 && s->n_ro_fds < s->ro_fds_max) {
		int kept = keep_copy(fd);
		if (kept >= 0) {
			d->ro_fd1 = kept + 1;
			s->n_ro_fds++;
		}
	}
	return fd;
}

/* Send the fids collected while clunks are batched, as one CLUNKN. */
static void flush_clunks(struct cbox_sentry *s)
{
	if (s->n_clunks > 0 && s->gofer)
		cbox_gofer_clunk_many(s->gofer, s->clunks, s->n_clunks);
	s->n_clunks = 0;
}

void cbox_fs_gofer_batch_clunks(struct cbox_sentry *s, bool on)
{
	if (!on)
		flush_clunks(s);
	s->batch_clunks = on;
}

static int g_readlink(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, char *buf,
                      size_t size)
{
	(void)t;
	if (!d->link) {
		/* Read once per dentry (a cold python start read /lib64 and the like 15 times, each
		 * a gofer round trip); the full target, so that any buffer size gets Linux's
		 * answer. */
		char target[CBOX_GOFER_TARGET_MAX + 1];
		uint32_t fid;
		int n = cbox_dentry_fid(s, d, &fid);
		if (n == 0)
			n = cbox_gofer_readlink(s->gofer, fid, target, sizeof(target));
		if (n < 0)
			return n;
		d->link = strdup(target);
		if (!d->link)
			return -ENOMEM;
		d->link_ns = cbox_vfs_now_ns();
	}
	size_t n = strlen(d->link);
	if (n >= size)
		return -ERANGE;
	memcpy(buf, d->link, n + 1);
	return (int)n;
}

static void g_release(struct cbox_sentry *s, struct cbox_dentry *d)
{
	free(d->ro_stat);
	d->ro_stat = NULL;
	free(d->walk_stat);
	d->walk_stat = NULL;
	free(d->link);
	d->link = NULL;
	if (d->ro_fd1) {
		close(d->ro_fd1 - 1);
		d->ro_fd1 = 0;
		d->ro_fd_fresh = false;
		s->n_ro_fds--;
	}
	if (d->anon_fd1) {
		close(d->anon_fd1 - 1);
		d->anon_fd1 = 0;
		s->n_anon_fds--;
	}
	if (d->fid == CBOX_GOFER_ROOT_FID || d->fid == CBOX_DENTRY_NO_FID || !s->gofer)
		return;
	if (!s->batch_clunks) {
		cbox_gofer_clunk(s->gofer, d->fid);
		return;
	}
	if (s->n_clunks == CBOX_ARRAY_SIZE(s->clunks))
		flush_clunks(s);
	s->clunks[s->n_clunks++] = d->fid;
}

const struct cbox_fs_ops cbox_fs_gofer = {
    .name = "gofer",
    .lookup = g_lookup,
    .stat = g_stat,
    .open = g_open,
    .readlink = g_readlink,
    .readdir = NULL, /* host directories are listed by the host kernel */
    .release = g_release,
};
