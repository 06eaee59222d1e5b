/*
 * The sentry's own lookups on read-only mounts of the gofer's tree, and the fid a dentry found
 * that way gets when a request needs one.
 *
 * The sentry looks names up itself in a directory of a read-only mount, through an fd of that
 * directory, instead of asking the gofer: a WALK round trip is ~40 us on this VM, the local
 * openat and statx ~4 us, and python3 -c pass made 65 walks. It is the gofer's own walk
 * (serve.c: one name, O_PATH|O_NOFOLLOW, then statx) made on the gofer's own file: the
 * directory fd came from the gofer (an OPEN, a WALKOPEN, or this function one level up), so
 * it is the gofer's mount in the gofer's mount namespace, with its hidden paths covered. The
 * security rules (each tried by an attempt that must fail in test_programs.sh, t_user_caller):
 *  - one component only: cbox_gofer_check_name refuses "/", "." and ".." (the walk in vfs.c
 *    resolves those, and symlinks, in the guest's tree); O_NOFOLLOW, so a symlink is read as
 *    itself, never followed on the host;
 *  - the same mount only: a name whose file is on another mount (the working folder bound
 *    writable under the read-only root, a hide's cover, a /proc or /sys cover) goes to the
 *    gofer, which knows that mount's flags; the mount id decides, and a kernel that gives none
 *    makes every lookup go to the gofer;
 *  - read-only mounts: nothing the guest can do changes them, so what the sentry caches
 *    cannot diverge from what the gofer would serve, and their attributes are kept 2 s;
 *  - writable ones only when run by a user (writable_local below), never on the view;
 *  - the sentry's own host identity: where it may not search a directory the openat fails
 *    (EACCES) and the gofer is asked instead, which the host answers as it would for the
 *    caller: the sentry never reaches more than the gofer would give it;
 *  - the owners must be the gofer's: so when cbox-run is run by a user, and when run by root
 *    only on the gofer's view, through which the sentry's stat shows host root's files as its
 *    own (below).
 * A name found is the sentry's dentry with no fid (CBOX_DENTRY_NO_FID): a request that needs
 * one walks it then (cbox_dentry_fid). Only within the fd budget, past which the gofer walks.
 *
 * writable_local: run by a user, the sentry looks names of writable directories (the working
 * folder, -v binds, the overlay) up too, through the gofer's O_PATH fd of the directory, as the
 * same host user as the gofer. What it learns is what a WALK there would have brought, and is
 * kept on a walk's terms (fs_gofer.c keep_fetched: 100 ms, none of the guest's changes since,
 * never while a guest task may be writing the file); the guest's own changes all go through the
 * sentry, which updates its cache as for the gofer's walks. No fd of a writable file is kept;
 * a file's attributes are read by its name only while it has no fid, since every fd the guest
 * holds came with one and its file may have lost the name (an fd's file is the gofer's to
 * stat). `git status` in a working folder of 400 files went from 77 to 29 ms (medians of 15,
 * run by uid 1000; 9 ms native), each name a WALK round trip before. Run by root, the working
 * folder is beside the view, whose idmapping is the root mount's only: the gofer walks there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

/*
 * The fids of d and of its ancestors up to one that has a fid, in one WALKN (a working folder
 * bound five levels under the read-only root was five WALK round trips at every start). Each
 * name must still lead to its dentry's file (dev and ino), else that dentry is stale and the
 * fids walked past it are let go.
 */
int cbox_dentry_fid(struct cbox_sentry *s, struct cbox_dentry *d, uint32_t *fid)
{
	if (d->fid != CBOX_DENTRY_NO_FID) {
		*fid = d->fid;
		return 0;
	}
	struct cbox_dentry *chain[CBOX_GOFER_WALKN_MAX];
	unsigned n = 0;
	struct cbox_dentry *a = d;
	for (; a->fid == CBOX_DENTRY_NO_FID; a = a->parent) {
		if (!a->parent || a->negative)
			return -ESTALE;
		if (n == CBOX_GOFER_WALKN_MAX)
			break; /* (the rest first, by recursion) */
		chain[n++] = a;
	}
	uint32_t dir;
	int r = cbox_dentry_fid(s, a, &dir);
	if (r < 0)
		return r;
	char path[CBOX_GOFER_WALKN_MAX * (CBOX_GOFER_NAME_MAX + 1)];
	size_t len = 0;
	for (unsigned i = n; i-- > 0;) {
		size_t one = strlen(chain[i]->name);
		if (len)
			path[len++] = '/';
		memcpy(path + len, chain[i]->name, one);
		len += one;
	}
	struct cbox_gofer_walked got[CBOX_GOFER_WALKN_MAX];
	int err = 0;
	int k = cbox_gofer_walk_many(s->gofer, dir, path, len, got, &err, NULL);
	if (cbox_vfs_relieve(s, k))
		k = cbox_gofer_walk_many(s->gofer, dir, path, len, got, &err, NULL);
	if (k < 0)
		return k;
	for (int i = 0; i < k; i++) {
		struct cbox_dentry *e = chain[n - 1 - (unsigned)i];
		if (r == 0 && (got[i].stat.dev != e->host_dev || got[i].stat.ino != e->host_ino)) {
			/* the host replaced the name since the sentry looked it up */
			e->stale = true;
			r = -ESTALE;
		}
		if (r < 0)
			cbox_gofer_clunk(s->gofer, got[i].fid);
		else
			e->fid = got[i].fid;
	}
	if (r == 0 && (unsigned)k < n)
		r = -(err ? err : ESTALE); /* (a name gone, or no longer a directory) */
	if (r == 0)
		*fid = d->fid;
	return r;
}

/*
 * The owners must be the gofer's. A stat shows ids as the caller's user namespace maps them: the
 * gofer's maps the caller's host id to itself (or, run by root, is the host's own), the
 * sentry's maps only the sandbox's host id, to the sandbox's 0, and an id a namespace does not
 * map shows as the overflow id (65534). The guest's own files are those of the host id
 * cfg->owner_uid, every other id is unmapped to it (cbox_id_to_guest).
 *  - Run by a user, both namespaces map that one host id: the sentry's stat tells what the
 *    gofer's would, by putting the host id back (to_gofer_ids).
 *  - Run by root, the guest's own files are host root's and the sandbox's id is nobody: a file
 *    of host root and one of another user would look alike to the sentry (both the overflow
 *    id), and the rules that keep the guest's root off other users' files
 *    (cbox_cred_capable_wrt) would see the wrong owner. So there the sentry looks names up
 *    only on the gofer's view (gofer/spawn.c, make_view): the tree's root mount idmapped
 *    through the sandbox's user namespace, on which host root's files are the sandbox's id's
 *    and every other owner is unmapped, which is the gofer's owners as the guest is shown
 *    them. Elsewhere, and when the gofer has no view, the gofer walks every name.
 * (Mapping host root into the sandbox's user namespace instead would let the sentry, which holds
 * capabilities there, become host root's id.)
 */
static bool read_one_id_map(const char *path, uint32_t *inside, uint32_t *host)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	unsigned in, out, count, lines = 0;
	bool ok = true;
	int n;
	while ((n = fscanf(f, "%u %u %u", &in, &out, &count)) == 3) {
		lines++;
		ok = ok && count == 1;
	}
	fclose(f);
	if (n != EOF || lines != 1 || !ok)
		return false;
	*inside = in;
	*host = out;
	return true;
}

void cbox_fs_gofer_init_local(struct cbox_sentry *s)
{
	const struct cbox_sentry_config *cfg = s->cfg;
	uint32_t host_uid, host_gid;
	bool one = !cfg->all_ids &&
	           read_one_id_map("/proc/self/uid_map", &s->local_uid, &host_uid) &&
	           read_one_id_map("/proc/self/gid_map", &s->local_gid, &host_gid);
	s->local_ids =
	    one && cfg->owner_uid != 0 && host_uid == cfg->owner_uid && host_gid == cfg->owner_gid;
	/* (run by root: local_uid:local_gid is whom the view shows host root's files as) */
	s->view_wanted = one && cfg->owner_uid == 0 && cfg->owner_gid == 0 && host_uid != 0;
	if (!s->local_ids && !s->view_wanted)
		cbox_debug("names are looked up by the gofer only (the sentry's stat cannot show "
		           "the host's owners)");
}

void cbox_fs_gofer_init_view(struct cbox_sentry *s, int fd)
{
	if (!s->view_wanted)
		return;
	struct stat st;
	uint64_t mnt_id = 0;
	if (fd >= 0 && (cbox_gofer_stat_node(fd, &st, &mnt_id) < 0 || mnt_id == 0 ||
	                (uint64_t)st.st_dev != s->root->host_dev ||
	                (uint64_t)st.st_ino != s->root->host_ino)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		cbox_debug("names are looked up by the gofer only (it has no view for the sentry)");
		return;
	}
	s->root->ro_fd1 = fd + 1;
	s->root->mnt_id = mnt_id;
	s->n_ro_fds++;
	s->view_mnt_id = mnt_id;
	s->local_ids = true;
}

/* st, from the sentry's own stat, as the gofer's stat would show it (local_ids). */
static void to_gofer_ids(const struct cbox_sentry *s, struct stat *st)
{
	if (st->st_uid == s->local_uid)
		st->st_uid = s->cfg->owner_uid;
	if (st->st_gid == s->local_gid)
		st->st_gid = s->cfg->owner_gid;
}

bool cbox_fs_gofer_local(const struct cbox_sentry *s, const struct cbox_dentry *dir)
{
	if (!s->local_ids || !S_ISDIR(dir->mode) || s->n_ro_fds >= s->ro_fds_max)
		return false;
	/* A writable directory only when run by a user (writable_local) */
	if (!dir->ro_stat)
		return !s->view_mnt_id;
	/* (a directory known to lie beside the view is the gofer's) */
	return !s->view_mnt_id || !dir->mnt_id || dir->mnt_id == s->view_mnt_id;
}

/*
 * Security: the fds of the view the guest gets (a file or directory it opens for reading is a
 * reopen of the kept fd) are of files whose host owner there is the sandbox's host id (nobody).
 * A host process of that id cannot reach them through /proc/PID/fd: the guest's tasks belong
 * to the sandbox's user namespace, in which it holds no CAP_SYS_PTRACE (Linux's
 * cap_ptrace_access_check). Tried by t_root_view.
 *
 * Run by root: dir's fd on the view, opened from its parent's (the root's is the view itself),
 * or -1 where dir is not on the view's mount (then marked so by its mnt_id). An fd the gofer
 * gave for dir is on the gofer's own mount, whose owners the sentry cannot tell, and is
 * replaced. The name must still lead to dir's file (dev and ino), as in cbox_dentry_fid.
 */
static int view_dir_fd(struct cbox_sentry *s, struct cbox_dentry *dir, unsigned depth)
{
	if (dir->mnt_id == s->view_mnt_id && dir->ro_fd1)
		return dir->ro_fd1 - 1;
	if (dir->mnt_id || !dir->parent || !dir->parent->ro_stat || depth > 64 ||
	    (!dir->ro_fd1 && s->n_ro_fds >= s->ro_fds_max))
		return -1;
	int pfd = view_dir_fd(s, dir->parent, depth + 1);
	if (pfd < 0)
		return -1;
	int fd = openat(pfd, dir->name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	uint64_t mnt_id;
	if (cbox_gofer_stat_node(fd, &st, &mnt_id) < 0 || mnt_id == 0 ||
	    (uint64_t)st.st_dev != dir->host_dev || (uint64_t)st.st_ino != dir->host_ino) {
		close(fd);
		return -1;
	}
	if (mnt_id != s->view_mnt_id) {
		close(fd);
		if (!dir->ro_fd1)
			dir->mnt_id = mnt_id; /* (beside the view: not tried again) */
		return -1;
	}
	if (dir->ro_fd1)
		close(dir->ro_fd1 - 1);
	else
		s->n_ro_fds++;
	dir->ro_fd1 = fd + 1;
	dir->ro_fd_fresh = false;
	dir->mnt_id = mnt_id;
	return fd;
}

/* dir's fd for local lookups (opened through the gofer the first time), or -1. */
static int local_dir_fd(struct cbox_sentry *s, struct cbox_dentry *dir)
{
	if (s->view_mnt_id)
		return view_dir_fd(s, dir, 0);
	if (!dir->ro_fd1) {
		uint32_t fid;
		if (cbox_dentry_fid(s, dir, &fid) < 0)
			return -1;
		int fd = cbox_gofer_open(s->gofer, fid, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -1;
		dir->ro_fd1 = fd + 1;
		dir->ro_fd_fresh = false;
		s->n_ro_fds++;
	}
	if (!dir->mnt_id) {
		struct stat st;
		uint64_t mnt_id;
		if (cbox_gofer_stat_node(dir->ro_fd1 - 1, &st, &mnt_id) < 0 || mnt_id == 0 ||
		    (uint64_t)st.st_dev != dir->host_dev || (uint64_t)st.st_ino != dir->host_ino)
			return -1;
		dir->mnt_id = mnt_id;
	}
	return dir->ro_fd1 - 1;
}

int cbox_fs_gofer_local_lookup(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                               struct cbox_dentry **out)
{
	if (!cbox_fs_gofer_local(s, dir) || cbox_gofer_check_name(name, strlen(name)) < 0)
		return 1;
	int dfd = local_dir_fd(s, dir);
	if (dfd < 0)
		return 1;
	int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -errno : 1;
	struct stat st;
	uint64_t mnt_id;
	if (cbox_gofer_stat_node(fd, &st, &mnt_id) < 0 || mnt_id != dir->mnt_id) {
		close(fd);
		return 1;
	}
	to_gofer_ids(s, &st);
	struct cbox_gofer_stat g;
	cbox_gofer_fill_stat(&g, &st);
	/* dir's mount: attributes kept as a walk's are, by their own rules (fs_gofer.c) */
	bool ro = dir->ro_stat != NULL;
	g.flags = ro ? CBOX_GOFER_STAT_RDONLY : 0;
	struct cbox_dentry *d = cbox_fs_gofer_walked(s, dir, name, CBOX_DENTRY_NO_FID, &g);
	if (!d || (ro && !d->ro_stat)) {
		close(fd);
		if (d)
			cbox_dentry_put(s, d);
		return -ENOMEM;
	}
	/* (a writable file's is not kept: its opens and stats once it has a fid go to the
	 * gofer, and lookups need only its directory's) */
	if (S_ISDIR(st.st_mode) || (ro && S_ISREG(st.st_mode))) {
		d->ro_fd1 = fd + 1; /* an O_PATH fd: never handed out as it is (ro_fd_fresh) */
		s->n_ro_fds++;
		if (S_ISDIR(st.st_mode))
			d->mnt_id = mnt_id;
		*out = d;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		/* read now, while the fd is at hand (g_readlink would need a fid for it) */
		char target[CBOX_GOFER_TARGET_MAX + 1];
		ssize_t n = readlinkat(fd, "", target, sizeof(target));
		if (n >= 0 && (size_t)n < sizeof(target) &&
		    cbox_gofer_check_target(target, (size_t)n) == 0) {
			target[n] = '\0';
			d->link = strdup(target);
			d->link_ns = cbox_vfs_now_ns();
		}
	}
	close(fd);
	*out = d;
	return 0;
}

int cbox_fs_gofer_local_restat(const struct cbox_sentry *s, const struct cbox_dentry *d,
                               struct cbox_gofer_stat *g)
{
	struct cbox_dentry *p = d->parent;
	/* A writable file or directory only while it has no fid: one that has been opened
	 * (every fd the guest holds of it came with a fid) may have lost its name since (a
	 * directory's own kept fd would not help: the name is read first), and an fd's file is
	 * the gofer's to stat (writable_local). */
	bool ok = d->ro_stat || (!s->view_mnt_id && d->fid == CBOX_DENTRY_NO_FID);
	if (!s->local_ids || !ok || !p || !p->ro_fd1 || !p->mnt_id || p->mnt != d->mnt ||
	    (s->view_mnt_id && p->mnt_id != s->view_mnt_id))
		return 1;
	struct stat named, own;
	uint64_t mnt_id;
	if (fstatat(p->ro_fd1 - 1, d->name, &named, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -errno : 1;
	bool same = (uint64_t)named.st_dev == d->host_dev && (uint64_t)named.st_ino == d->host_ino;
	if (d->ro_fd1) {
		if (cbox_gofer_stat_node(d->ro_fd1 - 1, &own, &mnt_id) < 0)
			return 1;
		/* (run by root, an fd the gofer gave shows the host's owners: the name's stat
		 * through the view then, else the gofer's) */
		if (s->view_mnt_id && mnt_id != s->view_mnt_id) {
			if (!same)
				return 1;
			own = named;
		}
	} else if (same) {
		own = named;
	} else {
		return -ESTALE; /* (the file itself is out of reach: only the name led to it) */
	}
	to_gofer_ids(s, &own);
	cbox_gofer_fill_stat(g, &own);
	g->flags = (d->ro_stat ? CBOX_GOFER_STAT_RDONLY : 0) | (same ? 0 : CBOX_GOFER_STAT_STALE);
	return 0;
}

#define NO_CHECKS UINT_MAX /* stat_checks: the directory's fd could not be had or used */

/* After the sentry's own call on a name in dir failed: EACCES says dir is not searchable by the
 * sentry's host identity, which will not change, so its names are the gofer's from now on. */
static void note_denied(struct cbox_dentry *dir)
{
	if (errno == EACCES)
		dir->stat_checks = NO_CHECKS;
}

/*
 * An O_PATH fd of writable directory dir for the sentry's own stats and opens of its entries
 * (above, and cbox_fs_gofer_local_open), kept as its ro_fd1; or -1. Opened from its parent's
 * (the same mount) by its one checked name, without following a symlink, ~5 us; at the top of
 * the mount, through the gofer (an OPEN round trip), and only once it is asked for a second
 * time, so that a lone stat or open in a directory does not pay an OPEN more. Either way it
 * must be the directory the gofer walked (its host dev and ino).
 */
static int writable_dir_fd(struct cbox_sentry *s, struct cbox_dentry *dir, unsigned depth)
{
	if (dir->stat_checks == NO_CHECKS)
		return -1;
	if (dir->ro_fd1)
		return dir->ro_fd1 - 1;
	if (dir->ro_stat || !S_ISDIR(dir->mode) || dir->unlinked || s->n_ro_fds >= s->ro_fds_max ||
	    depth > 64)
		return -1;
	struct cbox_dentry *p = dir->parent;
	int fd;
	if (p && p->mnt == dir->mnt) {
		int pfd = cbox_gofer_check_name(dir->name, strlen(dir->name)) == 0
		              ? writable_dir_fd(s, p, depth + 1)
		              : -1;
		if (pfd < 0)
			return -1;
		fd = openat(pfd, dir->name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	} else {
		uint32_t fid;
		if (++dir->stat_checks < 2 || cbox_dentry_fid(s, dir, &fid) < 0)
			return -1;
		fd = cbox_gofer_open(s->gofer, fid, O_PATH | O_CLOEXEC);
	}
	struct stat own;
	uint64_t mnt_id;
	if (fd >= 0 &&
	    (cbox_gofer_stat_node(fd, &own, &mnt_id) < 0 || (uint64_t)own.st_dev != dir->host_dev ||
	     (uint64_t)own.st_ino != dir->host_ino)) {
		close(fd);
		fd = -ESTALE;
	}
	if (fd < 0) {
		/* Not searchable by the sentry, or moved: not tried again. Out of fds (the
		 * sentry's or the gofer's) is only for now. */
		if (fd != -EMFILE && fd != -ENFILE)
			dir->stat_checks = NO_CHECKS;
		return -1;
	}
	dir->ro_fd1 = fd + 1;
	dir->ro_fd_fresh = false;
	s->n_ro_fds++;
	if (!dir->mnt_id)
		dir->mnt_id = mnt_id; /* (as local_dir_fd and view_dir_fd mark it) */
	return fd;
}

/* writable d's directory's fd (writable_dir_fd), when d's name is one the sentry may use. */
static int check_dir_fd(struct cbox_sentry *s, struct cbox_dentry *d)
{
	struct cbox_dentry *p = d->parent;
	if (!p || p->mnt != d->mnt || d->unlinked ||
	    cbox_gofer_check_name(d->name, strlen(d->name)) < 0)
		return -1;
	return writable_dir_fd(s, p, 0);
}

/*
 * A writable file's kept attributes (fs_gofer.c keep_fetched) are good without a request for
 * WALK_STAT_TTL_NS; after that each stat was a STAT round trip (~30 us here) when cbox-run runs
 * as root, whose sentry cannot take owners from its own stat (the working folder lies beside
 * the view), and once a file had a fid (had been opened) whoever runs it. git status lstat()s
 * every file of its index each time it runs, so a second run was 400 STATs. The sentry now
 * stats the name itself through an O_PATH fd of the directory that the gofer opened (the
 * gofer's mount, as the gofer's own STAT by name would see it), and keeps what it had when
 * that shows the same file unchanged: the same dev and ino, type and mode, link count, size,
 * rdev, mtime and ctime. Every change of a file's attributes sets its ctime (multigrain
 * timestamps make it a new one after a stat has read it, ext4, xfs, btrfs and tmpfs since
 * Linux 6.13), so an owner that a host chown gave it meanwhile cannot go unseen, though the
 * sentry's stat cannot show owners: only the access time and the block count are taken from
 * it, which change without a ctime. On a kernel with coarse timestamps a chown by the host in
 * the same tick as the fetch (a few ms), with no other change, could go unseen until the file
 * next changes.
 *
 * Security: nothing the guest sees comes from the sentry's own stat but the access time and
 * block count of the file the gofer last stat'ed for it, which the gofer's STAT would give
 * too. The name is one checked component, never followed (AT_SYMLINK_NOFOLLOW); the sentry's
 * host identity needs search permission on the directory, else the gofer is asked. The
 * directory's fd is opened on the second expired stat in it (stat_checks), so that a single
 * stat in a directory does not pay an OPEN and a STAT where it paid a STAT.
 *
 * Returns 0 with g (the kept attributes) brought up to date, or 1: ask the gofer.
 */
int cbox_fs_gofer_local_check(struct cbox_sentry *s, struct cbox_dentry *d,
                              struct cbox_gofer_stat *g)
{
	int dfd = check_dir_fd(s, d);
	if (dfd < 0)
		return 1;
	struct stat named;
	if (fstatat(dfd, d->name, &named, AT_SYMLINK_NOFOLLOW) < 0) {
		note_denied(d->parent);
		return 1;
	}
	if ((uint64_t)named.st_dev != g->dev || (uint64_t)named.st_ino != g->ino ||
	    named.st_mode != g->mode || named.st_nlink != g->nlink ||
	    (uint64_t)named.st_rdev != g->rdev || named.st_size != g->size ||
	    named.st_mtim.tv_sec != g->mtime_sec || named.st_mtim.tv_nsec != g->mtime_nsec ||
	    named.st_ctim.tv_sec != g->ctime_sec || named.st_ctim.tv_nsec != g->ctime_nsec)
		return 1;
	g->atime_sec = named.st_atim.tv_sec;
	g->atime_nsec = named.st_atim.tv_nsec;
	g->blocks = named.st_blocks;
	return 0;
}

/*
 * A writable regular file opened for reading (grep -r, a compiler's headers, python's imports,
 * node's modules, git's objects in the working folder): an OPEN round trip to the gofer (~30 us
 * here) of the ~70 us an open cost, when the sentry can open it itself. It does so through the
 * same directory fd as its checks above (the gofer's mount, opened on the second use), as its
 * own host identity, which must be allowed to read the file (else the gofer opens it, as
 * before). Only d's own file: an O_PATH open of the one checked name, never following a
 * symlink, that must be a regular file with d's host dev and ino (what the gofer walked), then
 * a reopen of that very inode through /proc/self/fd: no FIFO, device or other file is ever
 * opened, and nothing the gofer would not have opened for this open.
 *
 * A dentry without a fid (one the sentry looked up itself: run by a user, writable_local) was an
 * OPEN and a WALK for its fid, two round trips. Run by a user, it is opened here too, and gets
 * its fid when a request needs one (cbox_dentry_fid, which checks that the name still leads to
 * the file). An fd-based stat whose name has moved since (the host renamed another file over
 * it) is the sentry's fstat of the guest's own fd (cbox_fs_gofer_local_fd_stat), which shows the
 * gofer's owners run by a user. Left: a call on such an fd that needs its fid (fchmod, fchown,
 * futimens, the f*xattr calls, fstatfs) after the host renamed another file over its name gets
 * ESTALE, where Linux would act on the open file. Returns the fd or -1: ask the gofer.
 */
int cbox_fs_gofer_local_open(struct cbox_sentry *s, struct cbox_dentry *d, int flags)
{
	/* (run by a user, see below) */
	bool no_fid_ok = s->local_ids && !s->view_mnt_id;
	if (!S_ISREG(d->mode) || (d->fid == CBOX_DENTRY_NO_FID && !no_fid_ok) ||
	    (flags & (O_ACCMODE | O_TRUNC | O_CREAT | O_PATH | O_DIRECTORY)) != O_RDONLY)
		return -1;
	int dfd = check_dir_fd(s, d);
	if (dfd < 0)
		return -1;
	int pfd = openat(dfd, d->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		note_denied(d->parent);
		return -1;
	}
	struct stat st;
	int fd = -1;
	if (fstat(pfd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == d->host_dev &&
	    (uint64_t)st.st_ino == d->host_ino) {
		int keep = O_NONBLOCK | O_NOATIME | O_DIRECT | O_DSYNC | O_SYNC | O_APPEND;
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
		fd = open(link, O_RDONLY | O_NOCTTY | O_CLOEXEC | (flags & keep));
	}
	close(pfd);
	return fd;
}

/*
 * Whether name is absent from writable directory dir, by the sentry's own stat through dir's fd
 * (writable_dir_fd): a lookup that misses was a WALK round trip (~30 us) to hear ENOENT, and
 * node probes three names that are not there for each module it loads (p.js, p.json, p.node),
 * make and compilers probe search paths likewise. ENOENT there is what the gofer's WALK would
 * answer: the same directory, one name, and a name with nothing behind it cannot be a mount
 * point either. Anything else (the name is there, EACCES, no fd) goes to the gofer as before,
 * at the cost of one stat (~3 us) when the name is there. Nothing is cached: the host may
 * create the name at any time.
 */
bool cbox_fs_gofer_local_absent(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name)
{
	if (dir->ro_stat || cbox_gofer_check_name(name, strlen(name)) < 0)
		return false;
	int dfd = writable_dir_fd(s, dir, 0);
	struct stat st;
	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return false;
	note_denied(dir);
	return errno == ENOENT;
}

/*
 * The attributes of the file of hostfd (a guest's fd of d's file, which cbox_fd_lookup found to
 * be d's), by the sentry's own fstat: only run by a user, where the sentry's stat shows the
 * gofer's owners (local_ids, not the view's). For an fd whose name no longer leads to its file
 * and that has no fid for the gofer to stat (cbox_fs_gofer_local_open). Returns 0, or 1: not
 * here.
 */
int cbox_fs_gofer_local_fd_stat(const struct cbox_sentry *s, const struct cbox_dentry *d,
                                int hostfd, struct cbox_gofer_stat *g)
{
	struct stat own;
	if (!s->local_ids || s->view_mnt_id || d->ro_stat || fstat(hostfd, &own) < 0 ||
	    (uint64_t)own.st_dev != d->host_dev || (uint64_t)own.st_ino != d->host_ino)
		return 1;
	to_gofer_ids(s, &own);
	cbox_gofer_fill_stat(g, &own);
	return 0;
}
