/*
 * The sentry's VFS: mounts and the path walk (the dentries and their cache are in dcache.c).
 * The walk is done here, one component at a time, so that no path string ever reaches the
 * gofer or the host kernel: symlinks, "..", and mount points are resolved by the sentry
 * against the guest's view of the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * A name that does not exist in a directory of a read-only mount is remembered as absent for as
 * long as that directory's attributes are (fs_gofer.c): compilers and interpreters probe the
 * same missing names along their search paths again and again. The entry holds no fid.
 */
static void remember_absent(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name)
{
	struct cbox_dentry *neg = cbox_dentry_new(dir->mnt, dir, name, 0);
	if (!neg)
		return;
	neg->negative = true;
	neg->fid = CBOX_GOFER_ROOT_FID; /* nothing to clunk */
	neg->ro_stat_ns = cbox_vfs_now_ns();
	cbox_vfs_cache_link(dir, neg);
	cbox_dentry_put(s, neg); /* the cache keeps it, as any unreferenced entry */
}

/*
 * The first of several names of a path missing from the cache of a gofer directory: ask for all
 * of them in one WALKN round trip and cache what it found, so that the walk finds each name in
 * the cache, instead of one WALK round trip per name (python3 -c pass: 81 walk round trips
 * before, 40 WALKs and 25 WALKNs now). Only plain names go ("." and ".." are the walk's, and the
 * last name of a CBOX_WALK_PARENT walk is the caller's); the gofer stops after a symlink or a
 * file, which the walk then handles as always. Nothing here answers the guest: a name the
 * gofer could not walk is left to lookup(), except a missing one in a read-only directory,
 * which is remembered as lookup() would (it would only ask again). A walk for an open for
 * reading (CBOX_WALK_OPEN_READ) whose last name is in the batch asks for it opened too
 * (WALKNOPEN), as lookup() would.
 */
static void prefetch(struct cbox_sentry *s, struct cbox_dentry *dir, const char *p, int flags)
{
	char path[CBOX_GOFER_TARGET_MAX + 1];
	const char *names[CBOX_GOFER_WALKN_MAX];
	size_t lens[CBOX_GOFER_WALKN_MAX], len = 0;
	unsigned n = 0;
	while (*p && n < CBOX_GOFER_WALKN_MAX) {
		const char *e = strchrnul(p, '/');
		size_t one = (size_t)(e - p);
		const char *next = e;
		while (*next == '/')
			next++;
		if ((!*next && (flags & CBOX_WALK_PARENT)) || cbox_gofer_check_name(p, one) < 0)
			break;
		if (len)
			path[len++] = '/';
		names[n] = path + len;
		lens[n++] = one;
		memcpy(path + len, p, one);
		len += one;
		p = next;
	}
	uint32_t dfid;
	if (n < 2)
		return; /* one name: lookup's WALK is the same round trip */
	/* (where the sentry looks names up itself, fs_gofer_local.c, each costs less than this) */
	if (cbox_fs_gofer_local(s, dir) || cbox_dentry_fid(s, dir, &dfid) < 0)
		return;
	struct cbox_gofer_walked got[CBOX_GOFER_WALKN_MAX];
	struct cbox_dentry *chain[CBOX_GOFER_WALKN_MAX];
	char name[NAME_MAX + 1];
	int err = 0, fd = -1;
	bool open_last =
	    (flags & CBOX_WALK_OPEN_READ) && !*p && !(flags & CBOX_WALK_PARENT) && dir->ro_stat;
	int k = cbox_gofer_walk_many(s->gofer, dfid, path, len, got, &err, open_last ? &fd : NULL);
	struct cbox_dentry *parent = dir;
	int made = 0;
	for (int i = 0; i < k; i++) {
		memcpy(name, names[i], lens[i]);
		name[lens[i]] = '\0';
		struct cbox_dentry *d =
		    made == i ? cbox_fs_gofer_walked(s, parent, name, got[i].fid, &got[i].stat)
		              : NULL;
		if (!d) {
			if (made == i)
				continue; /* (its fid was clunked) */
			cbox_gofer_clunk(s->gofer, got[i].fid);
			continue;
		}
		cbox_vfs_cache_link(parent, d);
		chain[made++] = d;
		parent = d;
	}
	if (k < 0)
		err = -k;
	if (fd >= 0) /* the last name's: k == n */
		cbox_fs_gofer_keep_walk_fd(s, made == k ? chain[made - 1] : NULL, fd);
	if (made == (k < 0 ? 0 : k) && err == ENOENT && (unsigned)made < n && parent->ro_stat) {
		memcpy(name, names[made], lens[made]);
		name[lens[made]] = '\0';
		remember_absent(s, parent, name);
	}
	while (made > 0)
		cbox_dentry_put(s, chain[--made]);
}

/* How long after a getdents64 of a directory a lookup in it counts as reading it entry by entry,
 * and the first and largest read-ahead (64 first: a tool that reads a directory entry by entry
 * mostly goes through all of it, and a batch of 16 then cost two more round trips for a
 * directory of 50). */
#define LISTED_NS  1000000000ULL
#define RA_FIRST   64u
#define RA_LARGEST CBOX_GOFER_WALKDIR_MAX

void cbox_vfs_listed(struct cbox_dentry *d)
{
	if (d->mnt->ops != &cbox_fs_gofer || !S_ISDIR(d->mode))
		return;
	if (cbox_vfs_now_ns() - d->listed_ns >= LISTED_NS) {
		d->ra_count = RA_FIRST;
		d->ra_last = d->ra_unused = 0;
		d->ra_off = false;
	}
	d->listed_ns = cbox_vfs_now_ns();
}

/*
 * du, find, tar, rm -r and the like read a directory, then look at each of its names through an
 * fd of it (fstatat(dirfd, name), openat), in the order of the listing; ls -l in the working
 * directory does the same with bare names. One WALK round trip per entry. So when the guest has
 * just listed dir and asks for a name of it missing from the cache as a path of that one name
 * (from a dirfd or the working directory), that name and the entries after it come in one
 * WALKDIR, RA_FIRST of them and twice as many each time after (up to RA_LARGEST). Longer paths
 * (python's imports, ls -l of another directory) never read ahead: a lookup of one name there
 * says nothing of the next. Nor does a directory whose last read-ahead went mostly unused by
 * the time of the next miss (du sorts a directory of more than 10000 entries by inode number
 * first): read-ahead stays off there until the directory is listed anew. What came back is
 * cached as WALKs would have cached it (names already cached give their fid back); nothing
 * here answers the guest: a name that failed is left to lookup(), which asks again (a missing
 * one in a read-only directory is remembered, as lookup() would).
 */
static void read_ahead(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                       uint32_t wrap)
{
	static struct cbox_gofer_dirent got[RA_LARGEST];
	if (dir->ra_off || (dir->ra_last && dir->ra_unused * 2 > dir->ra_last)) {
		dir->ra_off = true;
		return;
	}
	uint32_t dfid;
	if (cbox_fs_gofer_local(s, dir) || cbox_dentry_fid(s, dir, &dfid) < 0)
		return;                 /* (as in prefetch) */
	unsigned count = dir->ra_count; /* (RA_FIRST from cbox_vfs_listed on) */
	int n = cbox_gofer_walk_dir(s->gofer, dfid, name, count | wrap, got);
	if (n == -ENOENT && dir->ro_stat)
		remember_absent(s, dir, name);
	if (n < 0)
		return;
	dir->ra_count = count * 2 > RA_LARGEST ? RA_LARGEST : count * 2;
	dir->ra_last = dir->ra_unused = 0;
	for (int i = 0; i < n; i++) {
		struct cbox_dentry *d = NULL;
		if (i == 0 || !cbox_vfs_cached_child(dir, got[i].name))
			d = cbox_fs_gofer_walked(s, dir, got[i].name, got[i].fid, &got[i].stat);
		else
			cbox_gofer_clunk(s->gofer, got[i].fid);
		if (!d)
			continue; /* (its fid was clunked) */
		if (i > 0) {
			d->ra_fresh = true;
			dir->ra_last++;
			dir->ra_unused++;
		}
		cbox_vfs_cache_link(dir, d);
		cbox_dentry_put(s, d); /* kept by the cache, as any unreferenced entry */
	}
	/* A batch most of whose entries were cached already guessed wrong as surely as one that
	 * goes unused (the guest goes through the directory against its listing's order: a
	 * reverse walk from a WRAP batch brought 5000 entries' worth of clunked fids), and its
	 * reading of the listing was paid for nothing: off as well. */
	if (n > 1 && dir->ra_last * 2 < (unsigned)(n - 1))
		dir->ra_off = true;
}

/*
 * git status lstat()s each file of its index by its path, in the index's sorted order, and lists
 * nothing first: a WALK round trip per file (400 files: 400 of them), which read_ahead, keyed on
 * a listing, never saw. So a directory in which a walk misses a name within LISTED_NS of a miss
 * there that found its file (found_ns, walk_path) is read ahead as a whole
 * (CBOX_GOFER_WALKDIR_WRAP: the listing's order is not the guest's, so the batch starts at the
 * name and goes round), with read_ahead's sizes and stops. Misses of names that do not exist
 * never start it: the creation of many files in a directory (each name missed first) would
 * otherwise pay a failing WALKDIR before each create's own lookup.
 */
static bool missed_again(struct cbox_dentry *dir)
{
	uint64_t now = cbox_vfs_now_ns();
	if (!dir->found_ns || now - dir->found_ns >= LISTED_NS || now - dir->listed_ns < LISTED_NS)
		return false;
	if (now - dir->ra_started_ns >= LISTED_NS) { /* (a fresh start, as cbox_vfs_listed's) */
		dir->ra_count = RA_FIRST;
		dir->ra_last = dir->ra_unused = 0;
		dir->ra_off = false;
	}
	dir->ra_started_ns = now;
	return true;
}

/* Look one name up in dir (a directory of the guest's tree): mounts first, then the cache, then
 * the file system (with open_read, a name of a read-only gofer directory comes with its open
 * fd: cbox_fs_gofer_lookup_open). Returns a new reference. */
static int lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                  const char *name, bool open_read, struct cbox_dentry **out)
{
	struct cbox_dentry *c = cbox_vfs_cached_child(dir, name);
	if (c && c->negative) {
		if (cbox_vfs_ro_fresh(c))
			return -ENOENT;
		cbox_vfs_forget(s, dir, name); /* stale: ask again */
		c = NULL;
	}
	if (c) {
		if (c->ra_fresh) {
			c->ra_fresh = false;
			if (dir->ra_unused)
				dir->ra_unused--;
		}
		cbox_vfs_lru_del(s, c);
		*out = cbox_dentry_get(c);
	} else {
		if (!dir->mnt->ops->lookup)
			return -ENOENT;
		int r = open_read && dir->mnt->ops == &cbox_fs_gofer && dir->ro_stat
		            ? cbox_fs_gofer_lookup_open(s, dir, name, &c)
		            : dir->mnt->ops->lookup(s, t, dir, name, &c);
		if (r == -ENOENT && dir->mnt->ops == &cbox_fs_gofer && dir->ro_stat)
			remember_absent(s, dir, name);
		if (r < 0)
			return r;
		if (dir->mnt->ops == &cbox_fs_gofer)
			cbox_vfs_cache_link(dir, c);
		*out = c;
	}
	if ((*out)->covered_by) {
		struct cbox_dentry *root = cbox_dentry_get((*out)->covered_by->root);
		cbox_dentry_put(s, *out);
		*out = root;
	}
	return 0;
}

static struct cbox_dentry *parent_of(struct cbox_sentry *s, struct cbox_task *t,
                                     struct cbox_dentry *d)
{
	struct cbox_dentry *root = t && t->fs ? t->fs->root : s->root;
	/* ".." of the root is the root: the walk never leaves the guest's tree. */
	while (d != root && !d->parent && d->mnt->mountpoint)
		d = d->mnt->mountpoint; /* the root of a mount: step onto its mount point */
	if (d == root || !d->parent)
		return d;
	return d->parent;
}

static int start_of(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                    struct cbox_dentry **out)
{
	if (path[0] == '/') {
		*out = cbox_dentry_get(t->fs->root);
		return 0;
	}
	if (dirfd == AT_FDCWD) {
		*out = cbox_dentry_get(t->fs->cwd);
		return 0;
	}
	int err = 0;
	struct cbox_dentry *d = cbox_fd_lookup(s, t, dirfd, NULL, &err);
	if (!d)
		return err == -ENOENT ? -ENOTDIR : err; /* a pipe or socket is not a directory */
	*out = cbox_dentry_get(d);
	return 0;
}

struct walk {
	struct cbox_sentry *s;
	struct cbox_task *t;
	int links;
	int rflags;                /* CBOX_WALK_NO_SYMLINKS .. NO_MAGICLINKS, for every step */
	struct cbox_dentry *root;  /* where "/" and ".." stop: the task's root, or the start */
	struct cbox_dentry *start; /* RESOLVE_BENEATH's boundary */
	bool one_name;             /* the path is one plain name (see read_ahead) */
};

#define RESOLVE_MASK                                                                               \
	(CBOX_WALK_NO_SYMLINKS | CBOX_WALK_BENEATH | CBOX_WALK_IN_ROOT | CBOX_WALK_NO_XDEV |       \
	 CBOX_WALK_NO_MAGICLINKS)

/* /proc's magic links: symlinks whose target is an object, not a path. */
static bool is_magic(const struct cbox_dentry *d)
{
	return d->mnt->ops == &cbox_fs_proc && d->parent &&
	       (!strcmp(d->name, "exe") || !strcmp(d->name, "cwd") || !strcmp(d->name, "root") ||
	        (d->parent->name && !strcmp(d->parent->name, "fd")));
}

static int walk_path(struct walk *w, struct cbox_dentry *start, const char *path, int flags,
                     struct cbox_dentry **out, char *last);

/*
 * A symlink's target is read once per dentry and kept: cc1's realpath() reads the same few
 * links a thousand times a compile. But the host may replace a symlink (ln -sfn, and
 * Kubernetes swaps the ..data link of a ConfigMap or Secret volume that way on every update),
 * and a dentry kept forever would go on leading to the old target. So a symlink read more than
 * LINK_CHECK_NS ago is checked whenever a walk looks it up again (to follow it, or to end on
 * it for readlink or lstat): a stat of it (a STAT round
 * trip on a writable file system; on a read-only one the attributes kept for two seconds) says
 * whether its name still leads to it, and if not the name is looked up anew. A host's swap
 * shows within LINK_CHECK_NS (plus the read-only attribute time-out).
 */
#define LINK_CHECK_NS 1000000000ULL

static bool link_current(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d)
{
	if (d->mnt->ops != &cbox_fs_gofer || !d->link ||
	    cbox_vfs_now_ns() - d->link_ns < LINK_CHECK_NS)
		return true;
	struct stat st;
	int r = cbox_vfs_stat(s, t, d, &st);
	if (cbox_vfs_drop_stale(s, d, r))
		return false;
	d->link_ns = cbox_vfs_now_ns();
	return true;
}

/* Replace *cur (a symlink) by what it points to, relative to dir; open_read (CBOX_WALK_OPEN_READ
 * or 0) when the link is the last name of a walk for an open. */
static int follow(struct walk *w, struct cbox_dentry *dir, struct cbox_dentry **cur, int open_read)
{
	if (++w->links > CBOX_SYMLOOP_MAX)
		return -ELOOP;
	if ((w->rflags & CBOX_WALK_NO_SYMLINKS) ||
	    ((w->rflags & CBOX_WALK_NO_MAGICLINKS) && is_magic(*cur)))
		return -ELOOP;
	char target[PATH_MAX];
	struct cbox_dentry *l = *cur;
	struct cbox_dentry *file = cbox_proc_fd_target(w->s, w->t, l);
	if (file) {
		cbox_dentry_put(w->s, l);
		*cur = file;
		return 0;
	}
	if (!l->mnt->ops->readlink)
		return -EINVAL;
	int n = l->mnt->ops->readlink(w->s, w->t, l, target, sizeof(target));
	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if (target[0] == '/' && (w->rflags & CBOX_WALK_BENEATH))
		return -EXDEV;
	struct cbox_dentry *start = target[0] == '/' ? w->root : dir;
	struct cbox_dentry *res;
	int r = walk_path(w, start, target, CBOX_WALK_FOLLOW | open_read, &res, NULL);
	if (r < 0)
		return r;
	cbox_dentry_put(w->s, l);
	*cur = res;
	return 0;
}

static int walk_path(struct walk *w, struct cbox_dentry *start, const char *path, int flags,
                     struct cbox_dentry **out, char *last)
{
	struct cbox_dentry *cur = cbox_dentry_get(start);
	const char *p = path;
	int r = 0;
	while (*p == '/')
		p++;
	if (last)
		last[0] = '\0';
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);
		const char *next = e;
		while (*next == '/')
			next++;
		bool is_last = *next == '\0';
		bool trailing_slash = *e == '/';
		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			break;
		}
		char name[NAME_MAX + 1];
		memcpy(name, p, len);
		name[len] = '\0';
		if (!S_ISDIR(cur->mode)) {
			r = -ENOTDIR;
			break;
		}
		/* Every lookup in a directory needs search permission on it, "." and ".."
		 * included. */
		r = cbox_vfs_may(w->t, cur, X_OK);
		if (r < 0)
			break;
		if (is_last && (flags & CBOX_WALK_PARENT)) {
			/* a trailing slash is the caller's concern (mkdir "a/") */
			memcpy(last, name, len + 1);
			break;
		}
		struct cbox_dentry *nx;
		if (strcmp(name, ".") == 0) {
			nx = cbox_dentry_get(cur);
		} else if (strcmp(name, "..") == 0) {
			if (cur == w->start && (w->rflags & CBOX_WALK_BENEATH)) {
				r = -EXDEV;
				break;
			}
			nx = cbox_dentry_get(cur == w->root ? cur : parent_of(w->s, w->t, cur));
			if ((w->rflags & CBOX_WALK_NO_XDEV) && nx->mnt != cur->mnt) {
				cbox_dentry_put(w->s, nx);
				r = -EXDEV;
				break;
			}
		} else {
			/* A name missing from a gofer directory's cache may bring others along. */
			bool miss =
			    cur->mnt->ops == &cbox_fs_gofer && !cbox_vfs_cached_child(cur, name);
			if (miss && !is_last)
				prefetch(w->s, cur, p, flags);
			else if (miss && w->one_name &&
			         cbox_vfs_now_ns() - cur->listed_ns < LISTED_NS)
				read_ahead(w->s, cur, name, 0);
			else if (miss && missed_again(cur))
				read_ahead(w->s, cur, name, CBOX_GOFER_WALKDIR_WRAP);
			bool open_read = is_last && (flags & CBOX_WALK_OPEN_READ);
			r = lookup(w->s, w->t, cur, name, open_read, &nx);
			if (miss && is_last && r == 0)
				cur->found_ns = cbox_vfs_now_ns();
			if (r == 0 && S_ISLNK(nx->mode) && !link_current(w->s, w->t, nx)) {
				cbox_dentry_put(w->s, nx);
				r = lookup(w->s, w->t, cur, name, open_read, &nx);
			}
			if (r < 0)
				break;
			if ((w->rflags & CBOX_WALK_NO_XDEV) && nx->mnt != cur->mnt) {
				cbox_dentry_put(w->s, nx);
				r = -EXDEV;
				break;
			}
		}
		if (S_ISLNK(nx->mode) &&
		    (!is_last || trailing_slash || (flags & CBOX_WALK_FOLLOW))) {
			r = follow(w, cur, &nx, is_last ? flags & CBOX_WALK_OPEN_READ : 0);
			if (r < 0) {
				cbox_dentry_put(w->s, nx);
				break;
			}
		}
		cbox_dentry_put(w->s, cur);
		cur = nx;
		if (is_last && trailing_slash && !S_ISDIR(cur->mode)) {
			r = -ENOTDIR;
			break;
		}
		p = next;
	}
	if (r < 0) {
		cbox_dentry_put(w->s, cur);
		return r;
	}
	if ((flags & CBOX_WALK_DIRECTORY) && !(flags & CBOX_WALK_PARENT) && !S_ISDIR(cur->mode)) {
		cbox_dentry_put(w->s, cur);
		return -ENOTDIR;
	}
	*out = cur;
	return 0;
}

int cbox_vfs_walk(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                  int flags, struct cbox_dentry **out, char *last)
{
	size_t len = strnlen(path, PATH_MAX);
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	if (len == 0 && !(flags & CBOX_WALK_EMPTY_OK))
		return -ENOENT;
	struct cbox_dentry *start = NULL;
	int rflags = flags & RESOLVE_MASK;
	if ((rflags & CBOX_WALK_BENEATH) && path[0] == '/')
		return -EXDEV;
	/* RESOLVE_IN_ROOT: an absolute path starts at the dirfd's directory, not the root. */
	int r = start_of(s, t, dirfd, (rflags & CBOX_WALK_IN_ROOT) ? "" : path, &start);
	if (r < 0)
		return r;
	struct walk w = {.s = s,
	                 .t = t,
	                 .rflags = rflags,
	                 .root = (rflags & CBOX_WALK_IN_ROOT) ? start : t->fs->root,
	                 .start = start,
	                 .one_name =
	                     !(flags & CBOX_WALK_PARENT) && cbox_gofer_check_name(path, len) == 0};
	r = walk_path(&w, start, path, flags, out, last);
	cbox_dentry_put(s, start);
	return r;
}

const struct cbox_fs_ops *cbox_vfs_gofer_ops(void)
{
	return &cbox_fs_gofer;
}

int cbox_vfs_may(const struct cbox_task *t, const struct cbox_dentry *d, int mask)
{
	if (d->mnt->ops != &cbox_fs_gofer)
		return 0;
	/* The task's fs ids, groups and capabilities against the mode and owner the guest sees
	 * (Linux's generic_permission). These are the sentry's checks; the host checks the
	 * gofer's (and the sentry's) own id after them, so a capability of the guest's never
	 * reaches further than that id may go. A task not yet linked to its parent has no
	 * credentials and is refused. */
	if (!t->cred)
		return -EACCES;
	return cbox_cred_permission(t->cred, d->mode, d->uid, d->gid, mask);
}

int cbox_vfs_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	if (!d->mnt->ops->stat)
		return -EIO;
	return d->mnt->ops->stat(s, t, d, st);
}

int cbox_vfs_path(struct cbox_dentry *d, char *buf, size_t size)
{
	/* Build from the end: collect names walking up through mount points. */
	const char *names[PATH_MAX / 2];
	size_t n = 0;
	while (d && n < CBOX_ARRAY_SIZE(names)) {
		if (!d->parent) {
			if (!d->mnt->mountpoint)
				break;
			d = d->mnt->mountpoint;
			continue;
		}
		names[n++] = d->name;
		d = d->parent;
	}
	size_t len = 0;
	if (n == 0) {
		if (size < 2)
			return -ENAMETOOLONG;
		strcpy(buf, "/");
		return 1;
	}
	while (n > 0) {
		const char *nm = names[--n];
		size_t l = strlen(nm);
		if (len + 1 + l + 1 > size)
			return -ENAMETOOLONG;
		buf[len++] = '/';
		memcpy(buf + len, nm, l);
		len += l;
	}
	buf[len] = '\0';
	return (int)len;
}

/* O_PATH names a file without opening it: no permission or type checks but O_DIRECTORY's. The
 * gofer gives its own O_PATH fd; a file of /proc or /dev is opened and then reduced to O_PATH
 * through the sentry's /proc/self/fd, so the guest cannot read through it. */
static int open_path(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	if ((flags & O_DIRECTORY) && !S_ISDIR(d->mode))
		return -ENOTDIR;
	if (d->mnt->ops == &cbox_fs_gofer)
		return d->mnt->ops->open(s, t, d, O_PATH);
	if (S_ISLNK(d->mode))
		return -ELOOP;
	int fd = S_ISDIR(d->mode) && d->mnt->ops->readdir ? cbox_vfs_open_synthetic_dir(s, t, d)
	         : d->mnt->ops->open                      ? d->mnt->ops->open(s, t, d, O_RDONLY)
	                                                  : -ENXIO;
	return fd < 0 ? fd : cbox_reopen_fd(fd, O_PATH);
}

int cbox_vfs_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	int acc = flags & O_ACCMODE;
	if (flags & O_PATH)
		return open_path(s, t, d, flags);
	if (S_ISLNK(d->mode))
		return -ELOOP; /* O_NOFOLLOW on a symlink */
	if ((flags & O_DIRECTORY) && !S_ISDIR(d->mode))
		return -ENOTDIR;
	if (S_ISDIR(d->mode) && (acc != O_RDONLY || (flags & O_TRUNC)))
		return -EISDIR;
	/* O_NOATIME leaves no trace of the read: only the owner (or CAP_FOWNER) may (EPERM). */
	if ((flags & O_NOATIME) && d->mnt->ops == &cbox_fs_gofer && t->cred &&
	    !cbox_cred_owner(t->cred, d->uid))
		return -EPERM;
	if (d->mnt->readonly && (acc != O_RDONLY || (flags & O_TRUNC)) &&
	    (S_ISREG(d->mode) || S_ISDIR(d->mode)))
		return -EROFS;
	if (!(flags & O_PATH)) {
		int want = (acc == O_RDONLY   ? R_OK
		            : acc == O_WRONLY ? W_OK
		                              : R_OK | W_OK) |
		           ((flags & O_TRUNC) ? W_OK : 0);
		int r = cbox_vfs_may(t, d, want);
		if (r < 0)
			return r;
	}
	if (S_ISDIR(d->mode) && d->mnt->ops->readdir)
		return cbox_vfs_open_synthetic_dir(s, t, d);
	if (!d->mnt->ops->open)
		return -ENXIO;
	int fd = d->mnt->ops->open(s, t, d, flags);
	/* A truncating open by a caller without CAP_FSETID drops the set-ID bits (owners.c), as
	 * Linux's do_truncate does. */
	if (fd >= 0 && (flags & O_TRUNC) && S_ISREG(d->mode) && (d->mode & (S_ISUID | S_ISGID)) &&
	    t->cred && !cbox_cred_capable(t->cred, CAP_FSETID))
		cbox_vfs_kill_setid(s, d);
	return fd;
}
