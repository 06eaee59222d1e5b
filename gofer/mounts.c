/*
 * The gofer's view of the rootfs: after a recursive bind, every submount that is a host
 * pseudo-filesystem is covered by an empty read-only directory (the guest's /proc, /sys and /dev
 * are served by the sentry, and the host's must never be reachable through the gofer), and every
 * mount is made nodev,nosuid (and read-only when asked).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. Decodes in place. */
static void unescape(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

static unsigned long parse_flags(char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} map[] = {
	    {"ro", MS_RDONLY},         {"nosuid", MS_NOSUID},
	    {"nodev", MS_NODEV},       {"noexec", MS_NOEXEC},
	    {"noatime", MS_NOATIME},   {"nodiratime", MS_NODIRATIME},
	    {"relatime", MS_RELATIME}, {"strictatime", MS_STRICTATIME},
	};
	unsigned long flags = 0;
	char *save = NULL;
	for (char *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(map); i++)
			if (strcmp(t, map[i].name) == 0)
				flags |= map[i].flag;
	return flags;
}

/* Parse one mountinfo line in place: "id parent maj:min root point opts [tags] - type src sopts" */
static int parse_line(char *line, struct cbox_gofer_mount_point *m)
{
	char *f[6];
	char *save = NULL;
	char *t = strtok_r(line, " ", &save);
	for (int i = 0; i < 6; i++, t = strtok_r(NULL, " ", &save)) {
		if (t == NULL)
			return -1;
		f[i] = t;
	}
	while (t && strcmp(t, "-") != 0)
		t = strtok_r(NULL, " ", &save);
	char *type = t ? strtok_r(NULL, " ", &save) : NULL;
	if (type == NULL)
		return -1;
	char *end0, *end1;
	m->id = strtoull(f[0], &end0, 10);
	m->parent = strtoull(f[1], &end1, 10);
	if (*end0 != '\0' || *end1 != '\0')
		return -1;
	unescape(f[4]);
	m->point = f[4];
	m->fstype = type;
	m->flags = parse_flags(f[5]);
	return 0;
}

/* Path of point relative to the staged root ("" for the root itself), or NULL when outside. */
static const char *under(const char *point, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(point, prefix, n) != 0 || (point[n] != '\0' && point[n] != '/'))
		return NULL;
	return point + n;
}

static bool is_pseudo(const struct cbox_gofer_mount_point *m, const char *rel)
{
	static const char *const types[] = {
	    "proc",      "sysfs",   "devtmpfs",   "devpts",      "cgroup", "cgroup2",
	    "debugfs",   "tracefs", "securityfs", "pstore",      "bpf",    "mqueue",
	    "hugetlbfs", "fusectl", "configfs",   "binfmt_misc", "autofs", "efivarfs",
	};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(types); i++)
		if (strcmp(m->fstype, types[i]) == 0)
			return true;
	/* Runtime state of the host (sockets under /run, shared memory, a container's /dev). */
	if (strcmp(m->fstype, "tmpfs") == 0)
		return strcmp(rel, "/run") == 0 || strncmp(rel, "/run/", 5) == 0 ||
		       strcmp(rel, "/dev") == 0 || strcmp(rel, "/dev/shm") == 0;
	return false;
}

size_t cbox_gofer_mount_points(struct cbox_gofer_mount_point **out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		cbox_gofer_setup_fail(errno, "gofer: open /proc/self/mountinfo");
	size_t cap = 0, n = 0;
	struct cbox_gofer_mount_point *v = NULL;
	char *line = NULL;
	size_t lcap = 0;
	while (getline(&line, &lcap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			if (v == NULL)
				cbox_gofer_setup_fail(ENOMEM, "gofer: read mountinfo");
		}
		char *copy = strdup(line);
		if (copy == NULL)
			cbox_gofer_setup_fail(ENOMEM, "gofer: read mountinfo");
		v[n].line = copy;
		if (parse_line(copy, &v[n]) < 0)
			cbox_gofer_setup_fail(0, "gofer: cannot parse a mountinfo line: %s", line);
		n++;
	}
	free(line);
	fclose(f);
	*out = v;
	return n;
}

void cbox_gofer_mount_points_free(struct cbox_gofer_mount_point *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].line);
	free(v);
}

void cbox_gofer_cover(int at, bool dir, const char *what)
{
	CBOX_AUTOCLOSE int e =
	    open_tree(AT_FDCWD, dir ? CBOX_GOFER_EMPTY_DIR : CBOX_GOFER_EMPTY_FILE,
	              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV |
	                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC};
	if (e < 0 || mount_setattr(e, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0 ||
	    move_mount(e, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: cover %s", what);
}

/* Cover the mount at point (and whatever is stacked there). The point is resolved without
 * following symlinks: it names a mount as mountinfo listed it, and a symlink swapped into the
 * path meanwhile must not carry the cover elsewhere. */
static void cover_point(const char *point, const char *fstype)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	CBOX_AUTOCLOSE int at = (int)syscall(SYS_openat2, AT_FDCWD, point, &how, sizeof(how));
	struct stat st;
	if (at < 0 || fstat(at, &st) < 0)
		cbox_gofer_setup_fail(errno, "gofer: cover %s (%s)", point, fstype);
	cbox_gofer_cover(at, S_ISDIR(st.st_mode), point);
}

static void restrict_one(const struct cbox_gofer_mount_point *v, size_t n, const char *prefix,
                         bool readonly)
{
	/*
	 * Covered, not detached. A lazy detach waits for an expedited RCU grace period (0.1 to
	 * 0.7 ms on this VM, on every start), and it cannot remove a mount a user namespace has
	 * locked to its parent: when cbox-run is not root the gofer's copies of the host's /proc,
	 * /sys and /dev are all locked, umount2 said EINVAL, and a bind of / showed the host's
	 * processes. A mount on top is allowed on a locked mount and hides all that is below it:
	 * a lookup reaches only the topmost mount at a point, ".." from the cover's root climbs
	 * past every mount stacked there to the parent directory, and the gofer can neither
	 * unmount nor move a mount afterwards (its seccomp filter). Children come after their
	 * parents in mountinfo; a point at or under a covered one is hidden with it.
	 */
	const char **gone = calloc(n ? n : 1, sizeof(*gone));
	size_t ngone = 0;
	if (gone == NULL)
		cbox_gofer_setup_fail(ENOMEM, "gofer: read mountinfo");
	for (size_t i = 0; i < n; i++) {
		const char *rel = under(v[i].point, prefix);
		if (!rel || !*rel || !is_pseudo(&v[i], rel))
			continue;
		bool below = false;
		for (size_t k = 0; k < ngone && !below; k++)
			below = under(v[i].point, gone[k]) != NULL;
		if (below)
			continue;
		cover_point(v[i].point, v[i].fstype);
		gone[ngone++] = v[i].point;
	}
	free(gone);
	/* nodev, nosuid: the rootfs is served without devices or setuid programs. Not noexec: the
	 * sentry maps the guest's programs from these files. One recursive mount_setattr sets them
	 * on every mount of the subtree (only setting: the flags a user namespace has locked stay);
	 * it replaced a remount per mount and a second read of mountinfo. */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID |
	                                      (readonly ? MOUNT_ATTR_RDONLY : 0)};
	if (mount_setattr(AT_FDCWD, prefix, AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		cbox_gofer_setup_fail(errno, "gofer: make %s %s", prefix,
		                      readonly ? "read-only" : "nodev,nosuid");
}

void cbox_gofer_mounts_restrict(const struct cbox_gofer_staged *trees, size_t n)
{
	/* (The covers one tree gets are not under another's prefix: the list read stays true.) */
	struct cbox_gofer_mount_point *v;
	size_t nv = cbox_gofer_mount_points(&v);
	for (size_t i = 0; i < n; i++)
		restrict_one(v, nv, trees[i].prefix, trees[i].readonly);
	cbox_gofer_mount_points_free(v, nv);
}
