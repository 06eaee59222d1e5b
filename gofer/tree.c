/*
 * The guest's file tree, assembled in the gofer child before the pivot: the rootfs, hidden paths
 * covered by empty mounts, tmpfs and bind mounts. Each piece is a real mount with its own flags,
 * so that the kernel itself answers EROFS on the read-only parts and the server serves one tree
 * from fid 0. Every path is resolved inside the staged root with openat2 (never escaping it) and
 * every mount is attached to the fd it resolved to, so no path is looked up twice.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

struct build {
	const struct cbox_gofer_config *cfg;
	int root;    /* O_PATH fd of the staged root */
	dev_t *ours; /* the gofer's tmpfs and overlays: the only places it creates in */
	size_t n_ours, cap_ours;
	int *ro_later; /* mounts made read-only at the end, after the paths created in them */
	size_t n_ro_later;
};

static int openat2_fd(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC, .resolve = resolve};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* A guest path relative to the root ("." for the root itself). */
static const char *relpath(const char *abs)
{
	while (*abs == '/')
		abs++;
	return *abs ? abs : ".";
}

/* "bind SRC at DST" or "tmpfs at DST", for messages. */
static const char *mount_what(const struct cbox_gofer_mount *m, char *buf, size_t size)
{
	if (m->kind == CBOX_GOFER_MOUNT_BIND)
		snprintf(buf, size, "bind %s at %s", m->source, m->target);
	else
		snprintf(buf, size, "%s at %s", m->kind == CBOX_GOFER_MOUNT_FILE ? "file" : "tmpfs",
		         m->target);
	return buf;
}

/* Clone every bind source, then the rootfs, while the host's /tmp is still visible (a source
 * may live under it, like the rootfs). src[i] is -1 for a TMPFS mount. */
static int clone_sources(const struct cbox_gofer_config *cfg, int *src)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct cbox_gofer_mount *m = &cfg->mounts[i];
		src[i] = -1;
		if (m->kind != CBOX_GOFER_MOUNT_BIND)
			continue;
		/* Recursive, like docker -v: the source's own submounts come along (and are
		 * restricted below like the rootfs's). */
		src[i] = open_tree(AT_FDCWD, m->source,
		                   OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
		if (src[i] < 0)
			cbox_gofer_setup_fail(errno, "gofer: bind %s at %s: clone the source",
			                      m->source, m->target);
	}
	int tree =
	    open_tree(AT_FDCWD, cfg->rootfs, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		cbox_gofer_setup_fail(errno, "gofer: clone the mount tree of %s", cfg->rootfs);
	return tree;
}

/* Attach the detached tree fd at path (a new dir or file in the staging tmpfs). */
static void stage_at(int *tree, const char *path, const char *what)
{
	struct stat st;
	CBOX_AUTOCLOSE int fd = cbox_steal_fd(tree);
	if (fstat(fd, &st) < 0)
		cbox_gofer_setup_fail(errno, "gofer: stat %s", what);
	int rc = S_ISDIR(st.st_mode) ? mkdir(path, 0700) : mknod(path, S_IFREG | 0600, 0);
	if (rc < 0)
		cbox_gofer_setup_fail(errno, "gofer: make the staging point %s", path);
	if (move_mount(fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: attach %s at %s", what, path);
}

#define STAGE_PATH_MAX 64

static void stage_path(char *out, size_t size, size_t i)
{
	snprintf(out, size, "%s/m%zu", CBOX_GOFER_STAGE_DIR, i);
}

static int new_tmpfs(struct build *b, const char *mode, uint64_t size, unsigned attrs,
                     const char *target);
static void attach_at(int mnt, int target, const char *what, const char *path);

#define OVERLAY_LOWER CBOX_GOFER_STAGE_DIR "/lower"
#define OVERLAY_DIR   CBOX_GOFER_STAGE_DIR "/ov"

static void add_ours(struct build *b, dev_t dev)
{
	if (b->n_ours == b->cap_ours) {
		size_t cap = b->cap_ours * 2 + 8;
		dev_t *v = realloc(b->ours, cap * sizeof(*v));
		if (v == NULL)
			cbox_gofer_setup_fail(ENOMEM, "gofer: build the tree");
		b->ours = v;
		b->cap_ours = cap;
	}
	b->ours[b->n_ours++] = dev;
}

/*
 * The root as an overlay: the rootfs staged read-only as the lower layer, a tmpfs of the
 * sandbox as the upper one (overlay.c, which layers the root at its mount points when one
 * overlay cannot take it). The host's overlayfs does copy-up and whiteouts; nothing reaches
 * the rootfs.
 */
static void stage_overlay(struct build *b, int *tree)
{
	const struct cbox_gofer_config *cfg = b->cfg;
	stage_at(tree, OVERLAY_LOWER, cfg->rootfs);
	cbox_gofer_mounts_restrict(&(struct cbox_gofer_staged){OVERLAY_LOWER, true}, 1);
	if (mkdir(OVERLAY_DIR, 0700) < 0 || mkdir(CBOX_GOFER_STAGE_ROOT, 0755) < 0)
		cbox_gofer_setup_fail(errno, "gofer: make the overlay's staging points");
	int up = new_tmpfs(b, "0755", cfg->overlay_size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	                   "the overlay's upper layer");
	CBOX_AUTOCLOSE int at = open(OVERLAY_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (at < 0)
		cbox_gofer_setup_fail(errno, "gofer: open %s", OVERLAY_DIR);
	attach_at(up, at, "the overlay's upper layer", OVERLAY_DIR);
	close(up);
	CBOX_AUTOFREE dev_t *devs = NULL;
	size_t n =
	    cbox_gofer_overlay_mount(cfg, OVERLAY_LOWER, OVERLAY_DIR, CBOX_GOFER_STAGE_ROOT, &devs);
	/* Mount points missing in the rootfs may be made in the layers: they land in the
	 * sandbox's upper layer. */
	for (size_t i = 0; i < n; i++)
		add_ours(b, devs[i]);
}

/* Step 1: a private tmpfs on the staging dir holding the rootfs and every bind, each restricted
 * (pseudo-filesystems covered, nodev, nosuid, read-only when asked) before anything is mounted
 * on top, so that the restrict pass never touches the masks and the other mounts. */
static void stage_all(struct build *b)
{
	const struct cbox_gofer_config *cfg = b->cfg;
	CBOX_AUTOFREE int *src = calloc(cfg->n_mounts + 1, sizeof(*src));
	if (src == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: stage the mounts");
	int tree = clone_sources(cfg, src);
	if (mount("cbox-gofer", CBOX_GOFER_STAGE_DIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "mode=0700,size=64k") < 0)
		cbox_gofer_setup_fail(errno, "gofer: mount a tmpfs on %s", CBOX_GOFER_STAGE_DIR);
	/* Hidden paths and host pseudo-filesystems are covered by read-only binds of these. */
	CBOX_AUTOCLOSE int e =
	    open(CBOX_GOFER_EMPTY_FILE, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (e < 0 || mkdir(CBOX_GOFER_EMPTY_DIR, 0555) < 0)
		cbox_gofer_setup_fail(errno, "gofer: create %s and %s", CBOX_GOFER_EMPTY_FILE,
		                      CBOX_GOFER_EMPTY_DIR);
	/* The staged trees, restricted together once all are staged (one read of mountinfo). */
	CBOX_AUTOFREE struct cbox_gofer_staged *staged = calloc(cfg->n_mounts + 1, sizeof(*staged));
	CBOX_AUTOFREE char(*paths)[STAGE_PATH_MAX] = calloc(cfg->n_mounts + 1, sizeof(*paths));
	if (staged == NULL || paths == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: stage the mounts");
	size_t n = 0;
	if (cfg->overlay) {
		stage_overlay(b, &tree);
	} else {
		stage_at(&tree, CBOX_GOFER_STAGE_ROOT, cfg->rootfs);
		staged[n++] = (struct cbox_gofer_staged){CBOX_GOFER_STAGE_ROOT, cfg->readonly};
	}
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		if (src[i] < 0)
			continue;
		stage_path(paths[i], sizeof(paths[i]), i);
		stage_at(&src[i], paths[i], cfg->mounts[i].source);
		staged[n++] = (struct cbox_gofer_staged){paths[i], cfg->mounts[i].readonly};
	}
	if (n > 0)
		cbox_gofer_mounts_restrict(staged, n);
	b->root = open(CBOX_GOFER_STAGE_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->root < 0)
		cbox_gofer_setup_fail(errno, "gofer: open %s", CBOX_GOFER_STAGE_ROOT);
}

/* A new detached tmpfs mount; its file system is recorded as one the gofer may create in. */
static int new_tmpfs(struct build *b, const char *mode, uint64_t size, unsigned attrs,
                     const char *target)
{
	char sz[32];
	CBOX_AUTOCLOSE int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	int rc = fs < 0 ? -1 : fsconfig(fs, FSCONFIG_SET_STRING, "source", "cbox", 0);
	if (rc == 0)
		rc = fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0);
	if (rc == 0 && size > 0) {
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
		rc = fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0);
	}
	if (rc == 0)
		rc = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	int mnt = rc < 0 ? -1 : fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	struct stat st;
	if (mnt < 0 || fstat(mnt, &st) < 0)
		cbox_gofer_setup_fail(errno, "gofer: make a tmpfs for %s", target);
	add_ours(b, st.st_dev);
	return mnt;
}

static void attach_at(int mnt, int target, const char *what, const char *path)
{
	if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: mount %s at %s", what, path);
}

/* Cover one hidden path: an empty tmpfs on a directory, the empty read-only file on anything
 * else, so that neither the content nor a host socket (docker.sock) is reachable. */
static void hide_one(struct build *b, const char *path)
{
	/*
	 * What the path leads to, its symlinks followed inside the root as the guest would follow
	 * them, is covered: the path and every other name of it then show it empty (a hidden ~/.aws
	 * that is a link to ~/dotfiles/aws hides that directory; a host whose /home is a link to
	 * var/home, as Fedora's atomic editions have it, has its homes hidden). Security: this
	 * used to resolve with RESOLVE_NO_SYMLINKS and skip a final symlink, so a hide through any
	 * symlink hid nothing, silently. A path that leads nowhere (missing, a loop) has nothing
	 * to hide; one that leads to the root itself is refused. Tested by t_hide_symlinks
	 * (tests/integration/test_attack.sh).
	 */
	CBOX_AUTOCLOSE int fd =
	    openat2_fd(b->root, relpath(path), O_PATH, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st, root;
	if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR))
		return;
	if (fd < 0 || fstat(fd, &st) < 0 || fstat(b->root, &root) < 0)
		cbox_gofer_setup_fail(errno, "gofer: hide %s", path);
	if (st.st_dev == root.st_dev && st.st_ino == root.st_ino)
		cbox_gofer_setup_fail(EINVAL, "gofer: hide %s: it leads to the root", path);
	if (S_ISDIR(st.st_mode)) {
		/* Writable until the end (mount points of later mounts may be made in it), then
		 * read-only; noexec as nothing in it is ever meant to run. */
		int mnt = new_tmpfs(b, "0755", 0,
		                    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, path);
		b->ro_later[b->n_ro_later++] = mnt;
		attach_at(mnt, fd, "an empty tmpfs", path);
		return;
	}
	cbox_gofer_cover(fd, false, path);
}

static bool is_ours(const struct build *b, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return false;
	for (size_t i = 0; i < b->n_ours; i++)
		if (b->ours[i] == st.st_dev)
			return true;
	return false;
}

/* Create component name (the last one of the target when last) in dir, which is in a gofer
 * tmpfs. Returns an O_PATH fd of it. */
static int create_in(int dir, const char *name, bool last, bool want_dir, const char *target)
{
	int rc;
	if (!last || want_dir) {
		rc = mkdirat(dir, name, 0755);
	} else {
		rc = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (rc >= 0)
			close(rc);
	}
	if (rc < 0)
		cbox_gofer_setup_fail(errno, "gofer: create the mount point %s (at %s)", target,
		                      name);
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		cbox_gofer_setup_fail(errno, "gofer: open the new mount point %s", target);
	return fd;
}

/*
 * An O_PATH fd of a mount target. An existing one is resolved inside the root (its symlinks
 * followed there, like mount(8) would: /lib -> usr/lib stays in the guest's tree). A missing
 * one is created only where its deepest existing directory lies in a tmpfs the gofer made: the
 * rootfs and binds are host file systems, and a mkdir there would change the host.
 */
static int open_target(const struct build *b, const struct cbox_gofer_mount *m, bool want_dir)
{
	const uint64_t in_root = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	char what[2 * 4096 + 16];
	int fd = openat2_fd(b->root, relpath(m->target), O_PATH, in_root);
	if (fd >= 0 || errno != ENOENT) {
		if (fd < 0)
			cbox_gofer_setup_fail(errno, "gofer: %s: resolve the target",
			                      mount_what(m, what, sizeof(what)));
		return fd;
	}
	CBOX_AUTOFREE char *copy = strdup(relpath(m->target));
	if (copy == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: %s", mount_what(m, what, sizeof(what)));
	CBOX_AUTOCLOSE int cur = openat(b->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	bool creating = false;
	for (char *c = copy; *c;) {
		char *end = c + strcspn(c, "/");
		char sep = *end;
		bool last = end[strspn(end, "/")] == '\0';
		*end = '\0';
		int next = -1;
		if (!creating) {
			/* copy is now the prefix ending in c, resolved from the root like the whole
			 * path above (never relative to cur: an absolute symlink would then be
			 * resolved against the host's root). */
			next = openat2_fd(b->root, copy, O_PATH, in_root);
			if (next < 0 && errno != ENOENT)
				cbox_gofer_setup_fail(errno, "gofer: %s: resolve /%s",
				                      mount_what(m, what, sizeof(what)), copy);
			if (next < 0 && !is_ours(b, cur))
				cbox_gofer_setup_fail(ENOENT,
				                      "gofer: %s: the target does not exist in the "
				                      "guest's tree (mount "
				                      "points are made only in hidden dirs and "
				                      "tmpfs mounts, never in the "
				                      "rootfs or a bind: create /%s first)",
				                      mount_what(m, what, sizeof(what)), copy);
			creating = next < 0;
		}
		if (creating)
			next = create_in(cur, c, last, want_dir, m->target);
		close(cbox_steal_fd(&cur));
		cur = next;
		*end = sep;
		c = end + strspn(end, "/");
	}
	return cbox_steal_fd(&cur);
}

/*
 * Step 1b: room for a mount point the rootfs lacks (`cbox-run -v ./data:/data`). Docker makes
 * it in the container's own writable layer, bwrap in its tmpfs root; here the rootfs is the
 * host's, where nothing may be created. So the directory that lacks it (D, "/" here) is covered
 * by a tmpfs of the sandbox's that holds what D holds: each entry a recursive bind of the entry
 * (a clone of the staged, already restricted mounts, so read-only, nosuid and the covers of
 * pseudo-filesystems come along), each symlink the same symlink. Step 3 then creates the mount
 * point in that tmpfs as in any tmpfs of the gofer's, and step 5 makes the tmpfs read-only (a
 * new name in D is EROFS, as before). Only where needed: a D that a hide or another mount's
 * target covers, or that is already a tmpfs of the gofer's, gets none (their own tmpfs takes the
 * mount point), and a D of more than ROOM_MAX entries fails as before (one bind per entry).
 */
#define ROOM_MAX 256

bool cbox_gofer_path_at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1)
		return true; /* "/" */
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool cbox_gofer_covered_later(const struct cbox_gofer_config *cfg, const char *d)
{
	for (size_t i = 0; i < cfg->n_hide; i++)
		if (cbox_gofer_path_at_or_below(d, cfg->hide[i]))
			return true;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cbox_gofer_path_at_or_below(d, cfg->mounts[i].target))
			return true;
	return false;
}

struct room_entry {
	char name[256];
	int tree;   /* the entry's clone, or -1 for a symlink */
	char *link; /* a symlink's target */
	mode_t mode;
};

/* Cover dir (an O_PATH fd of the directory at guest path where) by a tmpfs holding its entries. */
static void make_room_in(struct build *b, int dir, const char *where, const char *target)
{
	CBOX_AUTOCLOSE int rd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = rd < 0 ? NULL : fdopendir(rd);
	if (dp == NULL)
		cbox_gofer_setup_fail(errno, "gofer: mount point %s: list %s", target, where);
	rd = -1; /* (the DIR owns it) */
	struct room_entry *e = calloc(ROOM_MAX, sizeof(*e));
	size_t n = 0;
	if (e == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: mount point %s", target);
	for (struct dirent *de; (de = readdir(dp)) != NULL;) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == ROOM_MAX)
			cbox_gofer_setup_fail(ENOENT,
			                      "gofer: mount point %s: it does not exist in the "
			                      "guest's tree, and %s has more than %d entries to "
			                      "make room for it beside (create it first)",
			                      target, where, ROOM_MAX);
		struct room_entry *x = &e[n];
		struct stat st;
		snprintf(x->name, sizeof(x->name), "%s", de->d_name);
		x->tree = -1;
		if (fstatat(dirfd(dp), x->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		x->mode = st.st_mode;
		if (S_ISLNK(st.st_mode)) {
			char buf[4096];
			ssize_t len = readlinkat(dirfd(dp), x->name, buf, sizeof(buf) - 1);
			if (len < 0)
				continue;
			buf[len] = '\0';
			x->link = strdup(buf);
			if (x->link == NULL)
				cbox_gofer_setup_fail(ENOMEM, "gofer: mount point %s", target);
		} else {
			/* Through the mounts on the entry (a cover, a submount): what the guest
			 * would have seen there. */
			x->tree = open_tree(dirfd(dp), x->name,
			                    OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC |
			                        AT_SYMLINK_NOFOLLOW);
			if (x->tree < 0)
				cbox_gofer_setup_fail(errno, "gofer: mount point %s: clone %s/%s",
				                      target, where, x->name);
		}
		n++;
	}
	struct stat dst;
	char mode[8];
	if (fstat(dir, &dst) < 0)
		cbox_gofer_setup_fail(errno, "gofer: mount point %s: stat %s", target, where);
	snprintf(mode, sizeof(mode), "%04o", (unsigned)(dst.st_mode & 07777));
	int mnt = new_tmpfs(b, mode, 0, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID, where);
	b->ro_later[b->n_ro_later++] = mnt;
	attach_at(mnt, dir, "room for a mount point", where);
	for (size_t i = 0; i < n; i++) {
		struct room_entry *x = &e[i];
		int rc;
		if (x->link)
			rc = symlinkat(x->link, mnt, x->name);
		else if (S_ISDIR(x->mode))
			rc = mkdirat(mnt, x->name, 0755);
		else
			rc = mknodat(mnt, x->name, S_IFREG | 0600, 0);
		if (rc == 0 && x->tree >= 0)
			rc = move_mount(x->tree, "", mnt, x->name, MOVE_MOUNT_F_EMPTY_PATH);
		if (rc < 0)
			cbox_gofer_setup_fail(errno, "gofer: mount point %s: %s/%s beside it",
			                      target, where, x->name);
		if (x->tree >= 0)
			close(x->tree);
		free(x->link);
	}
	free(e);
	closedir(dp);
}

static void make_room(struct build *b, const struct cbox_gofer_mount *m)
{
	const uint64_t in_root = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	CBOX_AUTOFREE char *copy = strdup(m->target);
	if (copy == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: mount point %s", m->target);
	/* The deepest existing directory on the target's path, and the guest path leading to it. */
	CBOX_AUTOCLOSE int dir = openat(b->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t end = 1; /* copy[0, end) names dir: "/" */
	for (;;) {
		size_t start = end + strspn(copy + end, "/");
		if (copy[start] == '\0')
			return; /* the whole target exists */
		size_t stop = start + strcspn(copy + start, "/");
		char save = copy[stop];
		copy[stop] = '\0';
		int next = openat2_fd(b->root, relpath(copy), O_PATH, in_root);
		copy[stop] = save;
		if (next < 0 && errno != ENOENT)
			return; /* step 3 says what is wrong */
		if (next < 0)
			break;
		struct stat st;
		if (fstat(next, &st) < 0 || !S_ISDIR(st.st_mode)) {
			close(next);
			return;
		}
		close(cbox_steal_fd(&dir));
		dir = next;
		end = stop;
	}
	copy[end] = '\0';
	const char *where = copy; /* "/" or the path of dir */
	/* An overlay's directory is ours, but run by a user one of root's stays root's there
	 * (gofer/overlay.c): no mount point can be made in it, and it gets a room as well. */
	bool creatable = is_ours(b, dir) && faccessat(dir, "", W_OK | X_OK, AT_EMPTY_PATH) == 0;
	if (creatable || cbox_gofer_covered_later(b->cfg, where))
		return;
	make_room_in(b, dir, where, m->target);
	if (strcmp(where, "/") == 0) {
		/* The root itself is covered: later steps resolve from the new one. */
		close(b->root);
		b->root = open(CBOX_GOFER_STAGE_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (b->root < 0)
			cbox_gofer_setup_fail(errno, "gofer: open %s", CBOX_GOFER_STAGE_ROOT);
	}
}

/* Step 3 for a FILE mount: its content written at stage (in the staging tmpfs, which nothing
 * else reaches after the pivot), and a bind of that file attached at target. The guest may
 * write it only when it is not read-only: then within the staging tmpfs's 64 KiB. */
static void mount_file(const char *stage, const struct cbox_gofer_mount *m, int target)
{
	CBOX_AUTOCLOSE int fd = open(stage, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	size_t len = strlen(m->content);
	ssize_t w = fd < 0 || fchmod(fd, 0644) < 0 ? -1 : write(fd, m->content, len);
	if (w < 0 || (size_t)w != len)
		cbox_gofer_setup_fail(w < 0 ? errno : EIO, "gofer: write the file for %s",
		                      m->target);
	CBOX_AUTOCLOSE int tree = open_tree(AT_FDCWD, stage, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID |
	                                      MOUNT_ATTR_NOEXEC |
	                                      (m->readonly ? MOUNT_ATTR_RDONLY : 0)};
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 ||
	    move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: mount the file for %s", m->target);
}

/* Step 3: one TMPFS, BIND or FILE mount at its target. */
static void mount_one(struct build *b, size_t i)
{
	const struct cbox_gofer_mount *m = &b->cfg->mounts[i];
	char stage[STAGE_PATH_MAX], what[2 * 4096 + 16];
	struct stat st, tst;
	bool is_dir = true;
	stage_path(stage, sizeof(stage), i);
	if (m->kind == CBOX_GOFER_MOUNT_BIND) {
		if (stat(stage, &st) < 0)
			cbox_gofer_setup_fail(errno, "gofer: stat the staged %s", m->source);
		is_dir = S_ISDIR(st.st_mode);
	}
	if (m->kind == CBOX_GOFER_MOUNT_FILE)
		is_dir = false;
	CBOX_AUTOCLOSE int target = open_target(b, m, is_dir);
	if (fstat(target, &tst) < 0)
		cbox_gofer_setup_fail(errno, "gofer: stat %s", m->target);
	if (is_dir != S_ISDIR(tst.st_mode))
		cbox_gofer_setup_fail(is_dir ? ENOTDIR : EISDIR,
		                      "gofer: %s: a %s can only be mounted on a %s",
		                      mount_what(m, what, sizeof(what)),
		                      is_dir ? "directory" : "file", is_dir ? "directory" : "file");
	if (m->kind == CBOX_GOFER_MOUNT_BIND) {
		/* Moved (with its submounts) from the staging point, already restricted. */
		if (move_mount(AT_FDCWD, stage, target, "", MOVE_MOUNT_T_EMPTY_PATH) < 0)
			cbox_gofer_setup_fail(errno, "gofer: bind %s at %s", m->source, m->target);
		return;
	}
	if (m->kind == CBOX_GOFER_MOUNT_FILE) {
		mount_file(stage, m, target);
		return;
	}
	/* nodev, nosuid: a guest-made device node or setuid file must never work anywhere. */
	char mode[8];
	snprintf(mode, sizeof(mode), "%04o", m->mode_set ? (unsigned)m->mode : 01777u);
	int mnt = new_tmpfs(b, mode, m->size, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID, m->target);
	attach_at(mnt, target, "a tmpfs", m->target);
	if (m->readonly)
		b->ro_later[b->n_ro_later++] = mnt;
	else
		close(mnt);
}

/* Step 4: mkdir -p, one component at a time, never through a symlink. */
static void mkdir_p(const struct build *b, const char *path)
{
	CBOX_AUTOFREE char *copy = strdup(relpath(path));
	if (copy == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: mkdir %s", path);
	CBOX_AUTOCLOSE int cur = openat(b->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		const uint64_t res = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
		int next = openat2_fd(cur, c, O_PATH | O_NOFOLLOW | O_DIRECTORY, res);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
				cbox_gofer_setup_fail(errno, "gofer: mkdir %s (at %s)", path, c);
			next = openat2_fd(cur, c, O_PATH | O_NOFOLLOW | O_DIRECTORY, res);
		}
		if (next < 0)
			cbox_gofer_setup_fail(errno, "gofer: mkdir %s (at %s)", path, c);
		close(cbox_steal_fd(&cur));
		cur = next;
	}
}

/*
 * The last mount, in order, whose target holds hidden path hide strictly below it (the working
 * folder, a -v): the hide is made right after it, on what it mounted. -1 for none: the hide is
 * made on the rootfs, before every mount, and a mount at or inside it is made on top (-v wins).
 * Security: every hide used to be made before every mount, so one inside the working folder
 * (--hide "$PWD/.env") covered the rootfs's file, and the working folder's bind then showed
 * the secret again. Tested by t_hide_in_workdir (tests/integration/test_attack.sh).
 */
ssize_t cbox_gofer_hide_after(const struct cbox_gofer_config *cfg, const char *hide)
{
	ssize_t k = -1;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (strcmp(hide, cfg->mounts[i].target) != 0 &&
		    cbox_gofer_path_at_or_below(hide, cfg->mounts[i].target))
			k = (ssize_t)i;
	return k;
}

void cbox_gofer_tree_build(const struct cbox_gofer_config *cfg)
{
	/* + one room per mount, the overlay and its upper layer */
	size_t n = cfg->n_hide + 2 * cfg->n_mounts + 3;
	struct build b = {.cfg = cfg, .root = -1};
	b.ro_later = calloc(n, sizeof(*b.ro_later));
	if (b.ro_later == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: build the tree");
	stage_all(&b);
	for (size_t i = 0; i < cfg->n_mounts; i++)
		make_room(&b, &cfg->mounts[i]);
	for (size_t i = 0; i < cfg->n_hide; i++)
		if (cbox_gofer_hide_after(cfg, cfg->hide[i]) < 0)
			hide_one(&b, cfg->hide[i]);
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		mount_one(&b, i);
		for (size_t h = 0; h < cfg->n_hide; h++)
			if (cbox_gofer_hide_after(cfg, cfg->hide[h]) == (ssize_t)i)
				hide_one(&b, cfg->hide[h]);
	}
	for (size_t i = 0; i < cfg->n_mkdirs; i++)
		mkdir_p(&b, cfg->mkdirs[i]);
	/* Step 5: the masks (and read-only tmpfs mounts) are read-only from here on. */
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	for (size_t i = 0; i < b.n_ro_later; i++) {
		if (mount_setattr(b.ro_later[i], "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
			cbox_gofer_setup_fail(errno, "gofer: make a hide or tmpfs mount read-only");
		close(b.ro_later[i]);
	}
	close(b.root);
	free(b.ours);
	free(b.ro_later);
}

/* An absolute path without "." or ".." components: resolution inside the root would contain a
 * "..", but the path would then not name what the user meant, and a path that is created
 * component by component must not have them. */
static int check_path(const char *p, bool root_ok, const char *what, struct cbox_err **err)
{
	if (p == NULL || p[0] != '/')
		return cbox_err_set(err, EINVAL, "gofer: %s %s: not an absolute path", what,
		                    p ? p : "(none)");
	for (const char *c = p; (c = strchr(c, '.')) != NULL; c++) {
		size_t n = c[1] == '.' ? 2 : 1;
		if (c[-1] == '/' && (c[n] == '/' || c[n] == '\0'))
			return cbox_err_set(err, EINVAL,
			                    "gofer: %s %s: has a '.' or '..' component", what, p);
	}
	if (!root_ok && p[strspn(p, "/")] == '\0')
		return cbox_err_set(err, EINVAL, "gofer: %s %s: cannot be the root", what, p);
	return 0;
}

int cbox_gofer_config_check(const struct cbox_gofer_config *cfg, struct cbox_err **err)
{
	struct stat st;
	if (cfg == NULL || cfg->rootfs == NULL)
		return cbox_err_set(err, EINVAL, "gofer: no rootfs given");
	if (stat(cfg->rootfs, &st) < 0)
		return cbox_err_set(err, errno, "gofer: rootfs %s", cfg->rootfs);
	if (!S_ISDIR(st.st_mode))
		return cbox_err_set(err, ENOTDIR, "gofer: rootfs %s", cfg->rootfs);
	if ((cfg->n_hide && !cfg->hide) || (cfg->n_mounts && !cfg->mounts) ||
	    (cfg->n_mkdirs && !cfg->mkdirs))
		return cbox_err_set(err, EINVAL, "gofer: a list with a count but no entries");
	for (size_t i = 0; i < cfg->n_hide; i++)
		if (check_path(cfg->hide[i], false, "hide", err) < 0)
			return cbox_err_code(*err);
	for (size_t i = 0; i < cfg->n_mkdirs; i++)
		if (check_path(cfg->mkdirs[i], true, "mkdir", err) < 0)
			return cbox_err_code(*err);
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct cbox_gofer_mount *m = &cfg->mounts[i];
		if (m->kind != CBOX_GOFER_MOUNT_BIND && m->kind != CBOX_GOFER_MOUNT_TMPFS &&
		    m->kind != CBOX_GOFER_MOUNT_FILE)
			return cbox_err_set(err, EINVAL, "gofer: mount %zu: unknown kind %d", i,
			                    (int)m->kind);
		if (check_path(m->target, false, "mount target", err) < 0)
			return cbox_err_code(*err);
		if (m->kind == CBOX_GOFER_MOUNT_FILE &&
		    (m->content == NULL || strlen(m->content) > CBOX_GOFER_FILE_MAX))
			return cbox_err_set(err, EINVAL,
			                    "gofer: file at %s: no content, or more than %u bytes",
			                    m->target, CBOX_GOFER_FILE_MAX);
		if (m->kind == CBOX_GOFER_MOUNT_TMPFS && m->mode_set && m->mode > 07777)
			return cbox_err_set(err, EINVAL, "gofer: tmpfs at %s: mode %o is not one",
			                    m->target, (unsigned)m->mode);
		if (m->kind != CBOX_GOFER_MOUNT_BIND)
			continue;
		if (m->source == NULL || m->source[0] != '/')
			return cbox_err_set(err, EINVAL,
			                    "gofer: bind at %s: source %s is not an "
			                    "absolute path",
			                    m->target, m->source ? m->source : "(none)");
		if (stat(m->source, &st) < 0)
			return cbox_err_set(err, errno, "gofer: bind %s at %s: source", m->source,
			                    m->target);
	}
	return 0;
}
