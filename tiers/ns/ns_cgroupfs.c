/*
 * The ns tier's cgroup mounts (an OCI mount of type cgroup or cgroup2, as Docker's config and
 * `cbox spec` have on /sys/fs/cgroup): the container's own cgroup, as runc mounts it, from the
 * hierarchies the init sees in its /proc/self/mountinfo before the pivot.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "cbox/path.h"
#include "internal.h"

/* The init's cgroup in hierarchy h, from /proc/self/cgroup ("4:memory:/a/b", "0::/a/b"): a path
 * below the root it sees ("/" in a cgroup namespace of its own). */
static void own_cgroup(const char *self, const struct ns_cg_hier *h, char *out, size_t n)
{
	snprintf(out, n, "/");
	char line[PATH_MAX + 128];
	for (const char *p = self; p && *p;) {
		const char *e = strchrnul(p, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		p = *e ? e + 1 : NULL;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (h->v2 ? c1[1] == '\0' : strcmp(c1 + 1, h->data) == 0) {
			snprintf(out, n, "%s", c2 + 1);
			return;
		}
	}
}

/* The controllers (and name=) of a v1 mount's super options into data; not rw, xattr,
 * release_agent=... */
static void controllers(char *super, char *data, size_t n)
{
	static const char *const not_ctl[] = {
	    "rw",           "ro",        "noprefix", "xattr", "clone_children", "cpuset_v2_mode",
	    "favordynmods", "nsdelegate"};
	data[0] = '\0';
	char *save = NULL;
	for (char *o = strtok_r(super, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		bool skip = strchr(o, '=') && strncmp(o, "name=", 5) != 0;
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(not_ctl) && !skip; i++)
			skip = !strcmp(o, not_ctl[i]);
		size_t used = strlen(data);
		if (!skip)
			snprintf(data + used, n - used, "%s%s", used ? "," : "", o);
	}
}

struct parse_walk {
	const char *self;
	struct ns_cg_hier *h;
	size_t n, max;
};

/* One hierarchy's mount (cbox_cgroup_mounts_each): h[n], unless it repeats a name or has no
 * controller. */
static int one_mount(const struct cbox_cgroup_mount *m, void *arg)
{
	struct parse_walk *w = arg;
	if (w->n == w->max)
		return 0;
	struct ns_cg_hier *x = &w->h[w->n];
	memset(x, 0, sizeof(*x));
	x->v2 = m->v2;
	x->at_top = !strcmp(m->point, "/sys/fs/cgroup");
	const char *base = strrchr(m->point, '/');
	snprintf(x->name, sizeof(x->name), "%s", base && base[1] ? base + 1 : "cgroup");
	if (!x->v2) {
		char super[256];
		snprintf(super, sizeof(super), "%s", m->super);
		controllers(super, x->data, sizeof(x->data));
	}
	bool dup = !x->v2 && !x->data[0];
	for (size_t i = 0; i < w->n && !dup; i++)
		dup = !strcmp(w->h[i].name, x->name);
	if (dup)
		return 0;
	char own[PATH_MAX];
	own_cgroup(w->self, x, own, sizeof(own));
	x->fresh = !strcmp(own, "/");
	/* The directory of the init's cgroup under this mount: a mount whose root is not the
	 * hierarchy's (a container's own /sys/fs/cgroup/memory showing /docker/ID, as Docker
	 * binds it without a cgroup namespace) has that root taken off the path. */
	CBOX_AUTOFREE char *below = cbox_cgroup_below_root(own, m->root);
	if (!below)
		return -ENOMEM;
	if (snprintf(x->src, sizeof(x->src), "%s%s", m->point, strcmp(below, "/") ? below : "") >=
	    (int)sizeof(x->src))
		return 0;
	w->n++;
	return 0;
}

size_t ns_cgroup_parse(const char *mountinfo, const char *self, struct ns_cg_hier *h, size_t max)
{
	struct parse_walk w = {.self = self, .h = h, .max = max};
	/* (lines that are not mountinfo's are skipped; without memory, what was found) */
	cbox_cgroup_mounts_each(mountinfo, false, one_mount, &w, NULL);
	return w.n;
}

/* A whole file of /proc as a string (caller frees), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *text = NULL, chunk[4096];
	size_t len = 0, k;
	FILE *out = open_memstream(&text, &len);
	while (out && (k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, out);
	fclose(f);
	if (!out || fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The host's cgroup hierarchies as the init sees them (at most max). */
static size_t cgroup_hierarchies(struct ns_cg_hier *h, size_t max)
{
	CBOX_AUTOFREE char *mountinfo = slurp("/proc/self/mountinfo");
	CBOX_AUTOFREE char *self = slurp("/proc/self/cgroup");
	return mountinfo ? ns_cgroup_parse(mountinfo, self ? self : "", h, max) : 0;
}

/*
 * Hierarchy h on target: a mount of its own when the init sees its cgroup as the root (its own
 * cgroup namespace, made after it joined the container's cgroup: the new mount starts there,
 * never above); else a bind of the init's own cgroup directory, as runc binds it without a
 * namespace. Read-only with ro: the container cannot change its own limits.
 */
static int mount_hierarchy(int root, const char *path, const struct ns_cg_hier *h, int target,
                           unsigned long flags)
{
	if (h->fresh)
		return ns_do_mount(h->v2 ? "cgroup2" : "cgroup", target,
		                   h->v2 ? "cgroup2" : "cgroup", flags, h->v2 ? NULL : h->data);
	if (ns_do_mount(h->src, target, NULL, MS_BIND, NULL) < 0)
		return -1;
	CBOX_AUTOCLOSE int fd = cbox_open_in_root(root, path, O_PATH);
	return fd < 0 ? -1 : ns_do_mount(NULL, fd, NULL, MS_BIND | MS_REMOUNT | flags, NULL);
}

/*
 * An OCI mount of type cgroup (or cgroup2) on m->destination, as runc makes it: on a v2 host the
 * unified hierarchy; on a v1 or hybrid one, a tmpfs holding a directory per hierarchy (cpu,
 * memory, pids, ..., unified) and a symlink per controller of a co-mounted one (cpu ->
 * cpu,cpuacct). Each shows the container's own cgroup: the JVM, Go, Rust and libuv size
 * themselves by its limits (memory.limit_in_bytes and cpu.cfs_quota_us on v1, memory.max and
 * cpu.max on v2). Errors name the mount; a host without cgroups is warned about and skipped.
 */
static int mount_all(int root, const struct cbox_oci_mount *m, int target, unsigned long flags,
                     bool *top_mounted, struct cbox_err **err)
{
	/* (on the heap: 16 of them take 70 KiB, and the ns tier runs under small stack limits) */
	CBOX_AUTOFREE struct ns_cg_hier *h = calloc(16, sizeof(*h));
	if (!h)
		return cbox_err_set(err, ENOMEM, "mount %s", m->destination);
	size_t n = cgroup_hierarchies(h, 16);
	if (n == 0) {
		cbox_warn("mount of %s skipped: the host has no cgroup file system",
		          m->destination);
		return 0;
	}
	flags &= MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME | MS_NOATIME |
	         MS_STRICTATIME;
	char path[PATH_MAX];
	if (n == 1 && h[0].v2 && h[0].at_top) {
		if (mount_hierarchy(root, m->destination, &h[0], target, flags) < 0)
			return cbox_err_set(err, errno, "mount cgroup2 on %s", m->destination);
		return 0;
	}
	if (ns_do_mount("tmpfs", target, "tmpfs", flags & ~MS_RDONLY, "mode=755") < 0)
		return cbox_err_set(err, errno, "mount a tmpfs on %s", m->destination);
	*top_mounted = true;
	CBOX_AUTOCLOSE int top = cbox_open_in_root(root, m->destination, O_RDONLY | O_DIRECTORY);
	if (top < 0)
		return cbox_err_set(err, errno, "resolve %s after its mount", m->destination);
	for (size_t i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", m->destination, h[i].name) >=
		    (int)sizeof(path))
			return cbox_err_set(err, ENAMETOOLONG, "mount %s", m->destination);
		if (mkdirat(top, h[i].name, 0755) < 0 && errno != EEXIST)
			return cbox_err_set(err, errno, "create %s", path);
		CBOX_AUTOCLOSE int sub = openat(top, h[i].name, O_PATH | O_CLOEXEC);
		if (sub < 0 || mount_hierarchy(root, path, &h[i], sub, flags) < 0)
			return cbox_err_set(err, errno, "mount cgroup %s on %s",
			                    h[i].v2 ? "(v2)" : h[i].data, path);
		if (h[i].v2 || !strchr(h[i].name, ','))
			continue;
		char ctl[sizeof(h[i].data)];
		snprintf(ctl, sizeof(ctl), "%s", h[i].data);
		for (char *save = NULL, *c = strtok_r(ctl, ",", &save); c;
		     c = strtok_r(NULL, ",", &save))
			if (strcmp(c, h[i].name) != 0 && symlinkat(h[i].name, top, c) < 0 &&
			    errno != EEXIST)
				return cbox_err_set(err, errno, "symlink %s/%s", m->destination, c);
	}
	if ((flags & MS_RDONLY) &&
	    ns_do_mount(NULL, top, NULL, MS_BIND | MS_REMOUNT | flags, NULL) < 0)
		return cbox_err_set(err, errno, "remount %s read-only", m->destination);
	return 0;
}

int ns_mount_cgroup(int root, const struct cbox_oci_mount *m, int target, unsigned long flags,
                    bool userns, struct cbox_err **err)
{
	bool top = false;
	struct cbox_err *e = NULL;
	if (mount_all(root, m, target, flags, &top, &e) == 0)
		return 0;
	if (!userns) {
		*err = e;
		return -1;
	}
	/* In a user namespace the host may refuse a hierarchy (its owner's rules, or a
	 * controller of the host's own): the container starts without the mount, as it did
	 * before the ns tier made it, rather than not at all; what was mounted is taken off. */
	CBOX_AUTOCLOSE int fd = top ? cbox_open_in_root(root, m->destination, O_PATH) : -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (fd >= 0)
		umount2(path, MNT_DETACH);
	cbox_warn("mount of %s skipped: %s", m->destination, e->msg);
	cbox_err_free(&e);
	return 0;
}
