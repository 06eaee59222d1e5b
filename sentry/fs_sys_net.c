/*
 * /sys/class/net/ and /sys/devices/virtual/net/ for the guest: the network interfaces of the
 * sandbox's own network namespace (loopback; tap0 with --network slirp4netns), as scripts and
 * tools list them (`ls /sys/class/net`, `cat /sys/class/net/lo/operstate`, psutil's and
 * ifconfig's /sys reads), and as a container's /sys shows them.
 *
 * The files are the kernel's: the sentry mounts a sysfs of its own while it sets up, in its user
 * namespace, which owns the sandbox's network namespace (sysfs shows the interfaces of the
 * namespace of whoever mounts it), as a detached mount that no path leads to (fsopen/fsmount),
 * and keeps only its fd. Security: the host's /sys (fs_sys.c) shows the host's interfaces (this
 * machine's eth0); none of them is ever shown, as only this mount is read here. Only class/net's
 * links that point into devices/virtual/net/ are listed (an interface in a sandbox's namespace is
 * a virtual one: loopback, a tap, a veth), and of an interface's directory only its attribute
 * files and statistics/: not its device links or power/ and queues/ controls. The guest's /sys
 * is read-only: nothing is written through the mount.
 *
 * A sandbox that joined a namespace it does not own (an OCI bundle's network namespace) cannot
 * mount one: class/net/ and devices/virtual/ are then absent, as before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mount.h>

#include "cbox/log.h"
#include "fs_sys_internal.h"

#define LINK_PREFIX "../../devices/virtual/net/"

/* NET_ARG: an interface's index (from its ifindex file); of a file, with the name's hash and
 * whether it is in statistics/ (inode numbers only: the names are the dentries'). */
#define IF_ARG(ifindex)            ((uint64_t)(ifindex)&0x7fffffffu)
#define FILE_ARG(ifindex, st, h16) ((IF_ARG(ifindex) << 17) | ((uint64_t)(st) << 16) | (h16))

void cbox_sys_net_init(struct cbox_sentry *s)
{
	s->sysnet_fd = -1;
	int fs = (int)syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC);
	if (fs < 0) {
		cbox_debug("/sys/class/net: no sysfs of the sandbox's own: %s", strerror(errno));
		return;
	}
	int m = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
		                 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		                     MOUNT_ATTR_NOEXEC);
	if (m < 0)
		cbox_debug("/sys/class/net: no sysfs of the sandbox's own (a network namespace it "
		           "does not own?): %s",
		           strerror(errno));
	close(fs);
	s->sysnet_fd = m;
}

void cbox_sys_net_free(struct cbox_sentry *s)
{
	if (s->sysnet_fd >= 0)
		close(s->sysnet_fd);
	s->sysnet_fd = -1;
}

bool cbox_sys_net_has(const struct cbox_sentry *s)
{
	return s->sysnet_fd >= 0;
}

/* An interface's or a file's name as the kernel could have made it: one path component. */
static bool plain_name(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n < 64 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	       !strchr(name, '/');
}

/* Whether class/net/<name> is an interface shown here (a link into devices/virtual/net). */
static bool is_interface(const struct cbox_sentry *s, const char *name)
{
	char path[96], target[160];
	if (!plain_name(name))
		return false;
	snprintf(path, sizeof(path), "class/net/%s", name);
	ssize_t k = readlinkat(s->sysnet_fd, path, target, sizeof(target) - 1);
	if (k <= 0)
		return false;
	target[k] = '\0';
	return strncmp(target, LINK_PREFIX, strlen(LINK_PREFIX)) == 0 &&
	       strcmp(target + strlen(LINK_PREFIX), name) == 0;
}

static uint64_t ifindex_of(const struct cbox_sentry *s, const char *name)
{
	char path[96], buf[32];
	/* (a name is_interface took fits: plain_name bounds it) */
	if ((size_t)snprintf(path, sizeof(path), "class/net/%s/ifindex", name) >= sizeof(path) ||
	    cbox_sys_read_at(s->sysnet_fd, path, buf, sizeof(buf)) < 0)
		return 0;
	return IF_ARG(strtoul(buf, NULL, 10));
}

static uint16_t hash16(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (uint16_t)(h ^ (h >> 16));
}

/* The directory of interface dir (N_NET_IF) or of its statistics (N_NET_STATS), relative to the
 * mount. */
static void dir_path(const struct cbox_dentry *dir, char *buf, size_t size)
{
	bool stats = NODE(dir->priv) == N_NET_STATS;
	snprintf(buf, size, "devices/virtual/net/%s%s", stats ? dir->parent->name : dir->name,
	         stats ? "/statistics" : "");
}

/* The path of name in dir (N_NET_IF or N_NET_STATS), relative to the mount. */
static void file_path(const struct cbox_dentry *dir, const char *name, char *buf, size_t size)
{
	dir_path(dir, buf, size);
	size_t used = strlen(buf);
	snprintf(buf + used, size - used, "/%s", name);
}

/* What name is in dir (N_NET_IF or N_NET_STATS): DT_REG for an attribute file, DT_DIR for
 * statistics/ (in N_NET_IF only), else DT_UNKNOWN. */
static unsigned char entry_kind(const struct cbox_sentry *s, const struct cbox_dentry *dir,
                                const char *name, mode_t *mode)
{
	char path[192];
	struct stat st;
	if (!plain_name(name))
		return DT_UNKNOWN;
	file_path(dir, name, path, sizeof(path));
	if (fstatat(s->sysnet_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	*mode = st.st_mode;
	if (S_ISREG(st.st_mode))
		return DT_REG;
	bool in_if = NODE(dir->priv) == N_NET_IF;
	return in_if && S_ISDIR(st.st_mode) && strcmp(name, "statistics") == 0 ? DT_DIR
	                                                                       : DT_UNKNOWN;
}

int cbox_sys_net_lookup(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                        struct cbox_dentry **out)
{
	enum node dn = NODE(dir->priv);
	uint64_t ifarg = dir->priv >> 16;
	if (s->sysnet_fd < 0)
		return -ENOENT;
	if (dn == N_CLASS_NET || dn == N_VIRT_NET) {
		if (!is_interface(s, name))
			return -ENOENT;
		*out = cbox_sys_mk(dir, name, dn == N_CLASS_NET ? N_NET_LINK : N_NET_IF,
		                   ifindex_of(s, name));
		return *out ? 0 : -ENOMEM;
	}
	mode_t mode = 0;
	unsigned char kind = entry_kind(s, dir, name, &mode);
	if (kind == DT_UNKNOWN)
		return -ENOENT;
	if (kind == DT_DIR)
		*out = cbox_sys_mk(dir, name, N_NET_STATS, ifarg);
	else
		*out = cbox_sys_mk(dir, name, N_NET_FILE,
		                   FILE_ARG(ifarg, dn == N_NET_STATS, hash16(name)));
	if (*out && kind == DT_REG)
		(*out)->mode = S_IFREG | (mode & 0644); /* (no file of sysfs is executable) */
	return *out ? 0 : -ENOMEM;
}

int cbox_sys_net_readdir(struct cbox_sentry *s, struct cbox_dentry *dir,
                         int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
                         void *ctx)
{
	enum node dn = NODE(dir->priv);
	uint64_t ifarg = dir->priv >> 16;
	if (s->sysnet_fd < 0)
		return 0;
	char path[192];
	if (dn == N_CLASS_NET || dn == N_VIRT_NET)
		snprintf(path, sizeof(path), "class/net");
	else
		dir_path(dir, path, sizeof(path));
	int fd = openat(s->sysnet_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* (the interface went away: an empty directory, as a removed one) */
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	int r = 0;
	mode_t mode;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		if (dn == N_CLASS_NET || dn == N_VIRT_NET) {
			if (!is_interface(s, e->d_name))
				continue;
			uint64_t a = ifindex_of(s, e->d_name);
			r = dn == N_CLASS_NET
			        ? emit(ctx, e->d_name, cbox_sys_ino(N_NET_LINK, a), DT_LNK)
			        : emit(ctx, e->d_name, cbox_sys_ino(N_NET_IF, a), DT_DIR);
			continue;
		}
		unsigned char kind = entry_kind(s, dir, e->d_name, &mode);
		if (kind == DT_DIR)
			r = emit(ctx, e->d_name, cbox_sys_ino(N_NET_STATS, ifarg), DT_DIR);
		else if (kind == DT_REG)
			r = emit(ctx, e->d_name,
			         cbox_sys_ino(N_NET_FILE, FILE_ARG(ifarg, dn == N_NET_STATS,
			                                           hash16(e->d_name))),
			         DT_REG);
	}
	closedir(d);
	return r;
}

int cbox_sys_net_gen(struct cbox_sentry *s, const struct cbox_dentry *d, FILE *f)
{
	char path[192], buf[4096];
	if (s->sysnet_fd < 0 || !d->parent)
		return -ENOENT;
	file_path(d->parent, d->name, path, sizeof(path));
	/* (read as the guest would: a down interface's carrier is EINVAL, as Linux answers it) */
	int r = cbox_sys_read_at(s->sysnet_fd, path, buf, sizeof(buf));
	if (r == 0)
		fputs(buf, f);
	return r;
}

int cbox_sys_net_readlink(const struct cbox_dentry *d, char *buf, size_t size)
{
	int n = snprintf(buf, size, LINK_PREFIX "%s", d->name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}
