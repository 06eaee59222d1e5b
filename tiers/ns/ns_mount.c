/*
 * The container's mount tree. Every destination inside the rootfs is resolved with openat2
 * (RESOLVE_IN_ROOT), so a symlink in the image cannot point a mount outside the rootfs, and the
 * mount goes onto the /proc/self/fd path of what was resolved (crun's approach).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "cbox/path.h"
#include "internal.h"

/* Create path (and its parents) under root when missing: a directory, or an empty file when
 * file is set. Returns an O_PATH fd of it. */
static int make_in_root(int root, const char *path, bool file, struct cbox_err **err)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char saved = *s;
		*s = '\0';
		bool last = !saved || !s[1];
		int fd = cbox_open_in_root(root, buf, O_PATH);
		if (fd < 0 && errno == ENOENT) {
			char *slash = strrchr(buf, '/');
			*slash = '\0';
			CBOX_AUTOCLOSE int parent =
			    cbox_open_in_root(root, buf[0] ? buf : "/", O_PATH);
			*slash = '/';
			if (parent < 0)
				return cbox_err_set(err, errno, "resolve %s in the rootfs", buf);
			int r = last && file ? mknodat(parent, slash + 1, S_IFREG | 0644, 0)
			                     : mkdirat(parent, slash + 1, 0755);
			if (r < 0 && errno != EEXIST)
				return cbox_err_set(err, errno, "create %s in the rootfs", buf);
			fd = cbox_open_in_root(root, buf, O_PATH);
		}
		if (fd < 0)
			return cbox_err_set(err, errno, "resolve %s in the rootfs", buf);
		if (last)
			return fd;
		close(fd);
		*s = saved;
	}
}

struct mflag {
	const char *name;
	bool clear;
	unsigned long flag;
};

static const struct mflag mflags[] = {
    {"ro", false, MS_RDONLY},
    {"rw", true, MS_RDONLY},
    {"nosuid", false, MS_NOSUID},
    {"suid", true, MS_NOSUID},
    {"nodev", false, MS_NODEV},
    {"dev", true, MS_NODEV},
    {"noexec", false, MS_NOEXEC},
    {"exec", true, MS_NOEXEC},
    {"sync", false, MS_SYNCHRONOUS},
    {"async", true, MS_SYNCHRONOUS},
    {"noatime", false, MS_NOATIME},
    {"atime", true, MS_NOATIME},
    {"nodiratime", false, MS_NODIRATIME},
    {"diratime", true, MS_NODIRATIME},
    {"relatime", false, MS_RELATIME},
    {"norelatime", true, MS_RELATIME},
    {"strictatime", false, MS_STRICTATIME},
    {"dirsync", false, MS_DIRSYNC},
    {"bind", false, MS_BIND},
    {"rbind", false, MS_BIND | MS_REC},
    {"private", false, MS_PRIVATE},
    {"rprivate", false, MS_PRIVATE | MS_REC},
    {"slave", false, MS_SLAVE},
    {"rslave", false, MS_SLAVE | MS_REC},
    {"shared", false, MS_SHARED},
    {"rshared", false, MS_SHARED | MS_REC},
    {"unbindable", false, MS_UNBINDABLE},
    {"runbindable", false, MS_UNBINDABLE | MS_REC},
};

#define PROPAGATION (MS_PRIVATE | MS_SLAVE | MS_SHARED | MS_UNBINDABLE)

/* Split options into mount flags, propagation flags and the filesystem's data string. */
static void parse_options(const struct cbox_oci_mount *m, unsigned long *flags, unsigned long *prop,
                          char *data, size_t n)
{
	size_t used = 0;
	*flags = *prop = 0;
	data[0] = '\0';
	for (size_t i = 0; i < m->n_options; i++) {
		const struct mflag *f = NULL;
		for (size_t j = 0; j < CBOX_ARRAY_SIZE(mflags) && !f; j++)
			if (!strcmp(m->options[i], mflags[j].name))
				f = &mflags[j];
		if (!f) {
			int w =
			    snprintf(data + used, n - used, "%s%s", used ? "," : "", m->options[i]);
			if (w > 0 && (size_t)w < n - used)
				used += (size_t)w;
		} else if (f->flag & PROPAGATION) {
			*prop |= f->flag;
		} else if (f->clear) {
			*flags &= ~f->flag;
		} else {
			*flags |= f->flag;
		}
	}
}

int ns_do_mount(const char *src, int target, const char *type, unsigned long flags,
                const char *data)
{
	char t[64];
	snprintf(t, sizeof(t), "/proc/self/fd/%d", target);
	return mount(src, t, type, flags, data);
}

/* A bind mount: bind, then a remount for the flags a bind ignores (ro, nosuid, ...). */
static int mount_bind(int root, const struct cbox_oci_mount *m, int target, unsigned long flags,
                      struct cbox_err **err)
{
	if (ns_do_mount(m->source, target, NULL, flags & (MS_BIND | MS_REC), NULL) < 0)
		return cbox_err_set(err, errno, "bind %s on %s", m->source, m->destination);
	unsigned long extra = flags & ~(MS_BIND | MS_REC);
	if (!extra)
		return 0;
	/* target still names the directory under the new mount: resolve the destination again
	 * to reach the mount itself (a remount of a non-root dentry is EINVAL). */
	CBOX_AUTOCLOSE int fd = cbox_open_in_root(root, m->destination, O_PATH);
	if (fd < 0)
		return cbox_err_set(err, errno, "resolve %s after its mount", m->destination);
	/* Keep the flags the kernel locked on the source (nodev, nosuid in a user ns). */
	struct statvfs sv;
	if (fstatvfs(fd, &sv) == 0)
		extra |= sv.f_flag & (ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RDONLY);
	if (ns_do_mount(NULL, fd, NULL, MS_BIND | MS_REMOUNT | extra, NULL) < 0)
		return cbox_err_set(err, errno, "remount %s with its options", m->destination);
	return 0;
}

static int mount_one(const struct ns_init_args *a, int root, const struct cbox_oci_mount *m,
                     struct cbox_err **err)
{
	unsigned long flags, prop;
	char data[1024];
	const char *type = m->type ? m->type : "";
	parse_options(m, &flags, &prop, data, sizeof(data));
	if (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2")) {
		CBOX_AUTOCLOSE int target = make_in_root(root, m->destination, false, err);
		return target < 0 ? -1 : ns_mount_cgroup(root, m, target, flags, a->userns, err);
	}
	bool bind = (flags & MS_BIND) || !strcmp(type, "bind");
	if (bind && !m->source)
		return cbox_err_set(err, EINVAL, "mount %s: a bind mount needs a source",
		                    m->destination);
	struct stat st;
	bool file = bind && stat(m->source, &st) == 0 && !S_ISDIR(st.st_mode);
	CBOX_AUTOCLOSE int target = make_in_root(root, m->destination, file, err);
	if (target < 0)
		return -1;
	int r;
	if (bind) {
		r = mount_bind(root, m, target, flags | MS_BIND, err);
	} else {
		r = ns_do_mount(m->source ? m->source : type, target, type, flags, data);
		if (r < 0 && errno == EINVAL && !strcmp(type, "devpts") && strstr(data, "gid=")) {
			/* gid 5 (tty) is often unmapped in a user namespace; crun retries too. */
			char *g = strstr(data, "gid=");
			size_t len = strcspn(g, ",");
			memmove(g, g + len + (g[len] == ','),
			        strlen(g + len + (g[len] == ',')) + 1);
			r = ns_do_mount(m->source ? m->source : type, target, type, flags, data);
		}
		if (r < 0 && errno == EPERM && a->userns && !strcmp(type, "sysfs"))
			r = ns_do_mount("/sys", target, NULL, MS_BIND | MS_REC, NULL);
		if (r < 0)
			r = cbox_err_set(err, errno, "mount %s (%s) on %s",
			                 m->source ? m->source : "", type, m->destination);
	}
	if (r < 0 || !prop)
		return r;
	/* As in mount_bind: the propagation is set on the new mount, found by resolving again. */
	CBOX_AUTOCLOSE int mnt = cbox_open_in_root(root, m->destination, O_PATH);
	if (mnt < 0 || ns_do_mount(NULL, mnt, NULL, prop, NULL) < 0)
		return cbox_err_set(err, errno, "set the propagation of %s", m->destination);
	return 0;
}

/* The devices every container gets (runc's default list). */
static int make_devices(const struct ns_init_args *a, int root, struct cbox_err **err)
{
	static const struct {
		const char *name;
		unsigned maj, min;
	} devs[] = {{"null", 1, 3},   {"zero", 1, 5},    {"full", 1, 7},
	            {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}};
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
	                                       {"stdin", "/proc/self/fd/0"},
	                                       {"stdout", "/proc/self/fd/1"},
	                                       {"stderr", "/proc/self/fd/2"},
	                                       {"ptmx", "pts/ptmx"}};
	CBOX_AUTOCLOSE int dev = make_in_root(root, "/dev", false, err);
	if (dev < 0)
		return -1;
	CBOX_AUTOCLOSE int devdir = openat(dev, ".", O_DIRECTORY | O_CLOEXEC);
	if (devdir < 0)
		return cbox_err_set(err, errno, "open /dev in the rootfs");
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(devs); i++) {
		unlinkat(devdir, devs[i].name, 0);
		/* In a user namespace mknod is refused: bind the host's node instead. */
		if (!a->userns && mknodat(devdir, devs[i].name, S_IFCHR | 0666,
		                          makedev(devs[i].maj, devs[i].min)) == 0) {
			fchmodat(devdir, devs[i].name, 0666, 0);
			continue;
		}
		char path[64], host[64];
		snprintf(path, sizeof(path), "/dev/%s", devs[i].name);
		snprintf(host, sizeof(host), "/dev/%s", devs[i].name);
		struct cbox_oci_mount m = {.destination = path, .source = host};
		CBOX_AUTOCLOSE int t = make_in_root(root, path, true, err);
		if (t < 0 || mount_bind(root, &m, t, MS_BIND, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][1], devdir, links[i][0]) < 0 && errno != EEXIST)
			return cbox_err_set(err, errno, "create /dev/%s", links[i][0]);
	return 0;
}

int ns_mount_prepare(const struct ns_init_args *a, struct cbox_err **err)
{
	if (!a->new_mountns)
		return cbox_err_set(err, EINVAL,
		                    "config.json: linux.namespaces: the ns tier needs "
		                    "a new mount namespace");
	unsigned long prop = MS_REC | MS_SLAVE;
	const char *p = a->cfg->linux_.rootfs_propagation;
	for (size_t i = 0; p && i < CBOX_ARRAY_SIZE(mflags); i++)
		if (!strcmp(p, mflags[i].name))
			prop = mflags[i].flag | MS_REC;
	/* Slave (or what the config asks) first: nothing we mount may propagate to the host. */
	if (mount(NULL, "/", NULL, prop, NULL) < 0)
		return cbox_err_set(err, errno, "make / %s", p ? p : "rslave");
	if (mount(a->rootfs, a->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return cbox_err_set(err, errno, "bind the rootfs %s", a->rootfs);
	CBOX_AUTOCLOSE int root = open(a->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cbox_err_set(err, errno, "open the rootfs %s", a->rootfs);
	for (size_t i = 0; i < a->cfg->n_mounts; i++)
		if (mount_one(a, root, &a->cfg->mounts[i], err) < 0)
			return cbox_err_wrap(err, "config.json: mounts[%zu]", i);
	return make_devices(a, root, err);
}

static int remount_ro(const char *path, struct cbox_err **err)
{
	struct statvfs sv;
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
		if (errno == ENOENT)
			return 0;
		return cbox_err_set(err, errno, "bind %s", path);
	}
	unsigned long keep = 0;
	if (statvfs(path, &sv) == 0)
		keep = sv.f_flag & (ST_NOSUID | ST_NODEV | ST_NOEXEC);
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL) < 0)
		return cbox_err_set(err, errno, "remount %s read-only", path);
	return 0;
}

static int mask(const char *path, struct cbox_err **err)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : cbox_err_set(err, errno, "masked path %s", path);
	int r = S_ISDIR(st.st_mode) ? mount("tmpfs", path, "tmpfs", MS_RDONLY, "size=0k")
	                            : mount("/dev/null", path, NULL, MS_BIND, NULL);
	return r < 0 ? cbox_err_set(err, errno, "mask %s", path) : 0;
}

int ns_mount_finish(const struct ns_init_args *a, struct cbox_err **err)
{
	const struct cbox_oci_linux *l = &a->cfg->linux_;
	/* pivot_root(".", "."), then detach the old root: it stacks under the new one (runc). */
	if (chdir(a->rootfs) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return cbox_err_set(err, errno, "pivot_root into %s", a->rootfs);
	if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		return cbox_err_set(err, errno, "detach the old root");
	/* Before readonlyPaths (runc's order): Docker lists /proc/sys there and sets sysctls. */
	if (ns_apply_sysctl(l, err) < 0)
		return -1;
	for (size_t i = 0; i < l->n_readonly_paths; i++)
		if (remount_ro(l->readonly_paths[i], err) < 0)
			return -1;
	for (size_t i = 0; i < l->n_masked_paths; i++)
		if (mask(l->masked_paths[i], err) < 0)
			return -1;
	if (!a->cfg->root_readonly)
		return 0;
	struct statvfs sv;
	unsigned long keep = 0;
	if (statvfs("/", &sv) == 0)
		keep = sv.f_flag & (ST_NOSUID | ST_NODEV | ST_NOEXEC);
	if (mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL) < 0)
		return cbox_err_set(err, errno, "remount the root read-only");
	return 0;
}
