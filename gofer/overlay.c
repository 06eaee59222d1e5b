/*
 * --overlay where one overlay cannot hold the whole rootfs: run by a user (the gofer in a user
 * namespace of its own), every mount below the rootfs's is locked to it, and overlayfs refuses
 * a lower layer with locked mounts below it (clone_private_mount: EINVAL, "failed to clone
 * lowerpath"): the lock is what keeps a user from seeing the files a mount hides, and an
 * overlay would show them. So the root is layered at its mount points: each directory with no
 * mount below it gets an overlay of its own, and a directory with mounts below it is a
 * directory of the sandbox's upper tmpfs holding its entries the same way (a symlink copied,
 * a directory layered or split again, anything else a read-only bind of the entry).
 *
 * What differs from one overlay: the mounts below the rootfs are seen (as in the tree without
 * --overlay; one overlay sees the rootfs's own file system only); a rename or link from one
 * layered directory to another says EXDEV (mv and cp fall back to a copy); a file beside a
 * mount point (rare: the root holds directories and symlinks) is read-only, and a layered
 * directory cannot be removed (EBUSY); a layered directory shows its upper directory's owner
 * (the caller, which is the guest's root) with the mode of the rootfs's directory.
 * Run by a user, one overlay or many, overlayfs works with the user's rights: other users' files
 * stay unwritable, and so does a file of the user's below a directory of root's (other than a
 * layer's top), as a change copies that directory up first and the copy cannot be given an
 * owner the namespace does not map (EOVERFLOW).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

/* Bounds on the work at the start: a rootfs with more mount points than this is not one a
 * sandbox layers over (the error says so), and a loop of mounts cannot make it run away. */
#define SPLIT_OVERLAYS_MAX 256
#define SPLIT_ENTRIES_MAX  4096
#define SPLIT_DEPTH_MAX    32

struct split {
	const struct cbox_gofer_config *cfg;
	struct cbox_gofer_mount_point *mp;
	size_t n_mp;
	const char *upper; /* a directory of the upper tmpfs for each layer's upper and work dirs */
	int userxattr;     /* -1 until the first overlay says which one the kernel takes */
	size_t n_layers, n_entries; /* layers tried (each has its u<k> and w<k>), entries made */
	dev_t *devs;                /* the overlays' devices (not those shown read-only) */
	size_t n_devs;
	struct stat empty; /* CBOX_GOFER_EMPTY_DIR, whose clones cover pseudo-filesystems */
};

/* Whether a mount hangs below the directory fd (path: as mountinfo names it), on the mount that
 * holds fd: then no overlay can have it as its lower layer. */
static bool mounts_below(const struct split *sp, int fd, const char *path)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		cbox_gofer_setup_fail(errno ? errno : ENOSYS, "gofer: --overlay: the mount of %s",
		                      path);
	for (size_t i = 0; i < sp->n_mp; i++)
		if (sp->mp[i].parent == stx.stx_mnt_id &&
		    cbox_gofer_path_at_or_below(sp->mp[i].point, path))
			return true;
	return false;
}

static int overlay_mount(int lower, const char *up, const char *work, bool userxattr)
{
	char lowerdir[64];
	snprintf(lowerdir, sizeof(lowerdir), "/proc/self/fd/%d", lower);
	CBOX_AUTOCLOSE int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "source", "cbox-overlay", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lowerdir, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", up, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0 ||
	    (userxattr && fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0) ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	return fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

/* The directory lower (with the mounts below it) mounted on at as it is: read-only, as the
 * restrict pass made the staged rootfs. */
static void show_as_is(int lower, int at, const char *path)
{
	CBOX_AUTOCLOSE int t = open_tree(
	    lower, "", OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0 ||
	    move_mount(t, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: %s", path);
}

/* An overlay of the directory lower (mode: its mode) on the directory at. Unless required, a
 * directory overlayfs refuses is mounted read-only instead. */
static void layer(struct split *sp, int lower, mode_t mode, int at, const char *path, bool required)
{
	if (sp->n_layers == SPLIT_OVERLAYS_MAX)
		cbox_gofer_setup_fail(0,
		                      "gofer: --overlay: the rootfs has more than %d directories "
		                      "beside its mount points to layer one by one",
		                      SPLIT_OVERLAYS_MAX);
	size_t k = sp->n_layers++;
	char up[PATH_MAX], work[PATH_MAX];
	snprintf(up, sizeof(up), "%s/u%zu", sp->upper, k);
	snprintf(work, sizeof(work), "%s/w%zu", sp->upper, k);
	/* The layer's root shows its upper directory's mode: the rootfs directory's. */
	if (mkdir(up, mode & 07777) < 0 || mkdir(work, 0700) < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: the layer of %s", path);
	/* In a user namespace overlayfs keeps its own attributes in user.* xattrs ("userxattr"):
	 * trusted.* ones are the host root's. Tried first where the gofer made one (run by a
	 * user); the other way when it fails, as the namespace may be a container's. */
	int mnt = -1, first = sp->userxattr >= 0 ? sp->userxattr : geteuid() != 0;
	for (int i = 0; mnt < 0 && i < (sp->userxattr >= 0 ? 1 : 2); i++) {
		int x = i ? !first : first;
		mnt = overlay_mount(lower, up, work, x);
		if (mnt >= 0)
			sp->userxattr = x;
	}
	if (mnt < 0 && required)
		cbox_gofer_setup_fail(errno, "gofer: mount the overlay on %s", sp->cfg->rootfs);
	if (mnt < 0) {
		/* A file system overlayfs takes no lower layer from: shown read-only, as it would
		 * be without --overlay (and not one the gofer may create mount points in). */
		cbox_debug("gofer: --overlay: %s is not layered (%s): read-only", path,
		           strerror(errno));
		show_as_is(lower, at, path);
		return;
	}
	struct stat st;
	if (fstat(mnt, &st) < 0 ||
	    move_mount(mnt, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: mount the layer of %s", path);
	close(mnt);
	sp->devs[sp->n_devs++] = st.st_dev;
}

static void split_dir(struct split *sp, int dir, const char *path, const char *guest, int skel,
                      int depth);

/* One entry of a split directory: name in dir (path, guest path guest) made in skel. */
static void split_entry(struct split *sp, int dir, const char *path, const char *guest, int skel,
                        const char *name, int depth)
{
	char sub[PATH_MAX], gsub[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, name) >= sizeof(sub) ||
	    (size_t)snprintf(gsub, sizeof(gsub), "%s/%s", strcmp(guest, "/") ? guest : "", name) >=
	        sizeof(gsub))
		cbox_gofer_setup_fail(ENAMETOOLONG, "gofer: --overlay: %s/%s", path, name);
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* gone meanwhile */
	if (++sp->n_entries > SPLIT_ENTRIES_MAX)
		cbox_gofer_setup_fail(0,
		                      "gofer: --overlay: more than %d entries beside the "
		                      "rootfs's mount points",
		                      SPLIT_ENTRIES_MAX);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dir, name, target, sizeof(target) - 1);
		if (n < 0)
			return;
		target[n] = '\0';
		if (symlinkat(target, skel, name) < 0)
			cbox_gofer_setup_fail(errno, "gofer: --overlay: the symlink %s", gsub);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* Beside a mount point: the entry itself, read-only (restricted with the rootfs).
		 */
		CBOX_AUTOCLOSE int t = open_tree(dir, name,
		                                 OPEN_TREE_CLONE | AT_RECURSIVE |
		                                     OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
		if (t < 0 || mknodat(skel, name, S_IFREG | 0600, 0) < 0 ||
		    move_mount(t, "", skel, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			cbox_gofer_setup_fail(errno, "gofer: --overlay: %s beside a mount point",
			                      gsub);
		return;
	}
	if (mkdirat(skel, name, st.st_mode & 07777) < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: mkdir %s", gsub);
	/* Covered by a hide or a mount later (tree.c): its content is never seen. */
	if (cbox_gofer_covered_later(sp->cfg, gsub))
		return;
	/* O_PATH: a directory the caller may not read (/lost+found) is layered all the same;
	 * overlayfs reads it with the gofer's rights, which are the caller's. */
	CBOX_AUTOCLOSE int at = openat(skel, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	CBOX_AUTOCLOSE int lower = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (at < 0 || lower < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: open %s", gsub);
	/* A host pseudo-filesystem the restrict pass covered (/proc, /sys, /dev): empty, and the
	 * skeleton's empty directory is as writable as a layer of it would be. (st is of what the
	 * name leads to, through the mounts on it, as lower is.) */
	if (st.st_dev == sp->empty.st_dev && st.st_ino == sp->empty.st_ino)
		return;
	if (!mounts_below(sp, lower, sub)) {
		layer(sp, lower, st.st_mode, at, gsub, false);
		return;
	}
	CBOX_AUTOCLOSE int list = openat(lower, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (list >= 0) {
		split_dir(sp, list, sub, gsub, at, depth + 1);
		return;
	}
	/* Mounts below a directory the caller cannot list: shown as it is, whole. */
	show_as_is(lower, at, gsub);
}

static void split_dir(struct split *sp, int dir, const char *path, const char *guest, int skel,
                      int depth)
{
	if (depth > SPLIT_DEPTH_MAX)
		cbox_gofer_setup_fail(ELOOP, "gofer: --overlay: mount points nested too deep at %s",
		                      guest);
	int rd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	DIR *dp = rd < 0 ? NULL : fdopendir(rd);
	if (dp == NULL)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: list %s", guest);
	for (struct dirent *de; (de = readdir(dp)) != NULL;)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			split_entry(sp, dirfd(dp), path, guest, skel, de->d_name, depth);
	closedir(dp);
}

size_t cbox_gofer_overlay_mount(const struct cbox_gofer_config *cfg, const char *lower,
                                const char *upper, const char *root, dev_t **devs)
{
	struct split sp = {.cfg = cfg, .upper = upper, .userxattr = -1};
	sp.devs = calloc(SPLIT_OVERLAYS_MAX, sizeof(*sp.devs));
	if (sp.devs == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: --overlay");
	if (stat(CBOX_GOFER_EMPTY_DIR, &sp.empty) < 0)
		cbox_gofer_setup_fail(errno, "gofer: stat %s", CBOX_GOFER_EMPTY_DIR);
	sp.n_mp = cbox_gofer_mount_points(&sp.mp);
	struct stat st;
	CBOX_AUTOCLOSE int dir = open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CBOX_AUTOCLOSE int at = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || at < 0 || fstat(dir, &st) < 0)
		cbox_gofer_setup_fail(errno, "gofer: --overlay: open %s and %s", lower, root);
	/* Run by a user, every mount below the rootfs's is locked (the gofer made its user
	 * namespace: enter_namespaces in spawn.c), and the one overlay would fail after most of
	 * its work (~2 ms): split at once. */
	if (geteuid() == 0 || !mounts_below(&sp, dir, lower)) {
		layer(&sp, dir, st.st_mode, at, "/", true);
	} else {
		/* The skeleton: a directory of the upper tmpfs (the rootfs root's mode) at root. */
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/root", upper);
		CBOX_AUTOCLOSE int skel = -1;
		if (mkdir(path, st.st_mode & 07777) < 0 ||
		    (skel = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0 ||
		    move_mount(skel, "", at, "",
		               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			cbox_gofer_setup_fail(errno, "gofer: --overlay: the root's skeleton");
		close(at);
		at = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (at < 0)
			cbox_gofer_setup_fail(errno, "gofer: open %s", root);
		split_dir(&sp, dir, lower, "/", at, 0);
	}
	cbox_gofer_mount_points_free(sp.mp, sp.n_mp);
	*devs = sp.devs;
	return sp.n_devs;
}
