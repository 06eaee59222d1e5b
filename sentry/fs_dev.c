/* /dev: the devices a guest may use, and the /proc/self/fd links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

static const struct {
	const char *name;
	const char *link; /* NULL for a device */
} entries[] = {
    {"null", NULL},
    {"zero", NULL},
    {"full", NULL},
    {"random", NULL},
    {"urandom", NULL},
    {"fd", "/proc/self/fd"},
    {"stdin", "/proc/self/fd/0"},
    {"stdout", "/proc/self/fd/1"},
    {"stderr", "/proc/self/fd/2"},
};

#define ROOT_PRIV 0xffff
#define SHM_PRIV  0xfffe /* the /dev/shm mount point (sentry/mounts.c) */
#define TTY_PRIV  0xfffd /* /dev/tty: the controlling terminal, when cbox-run -t gave one */
#define PTS_PRIV  0xfffc /* /dev/pts, holding the sandbox's pseudo-terminal (cbox-run -t) */
#define PTSN_PRIV 0xfffb /* /dev/pts/N, that terminal itself */

/* The name of the sandbox's pseudo-terminal in /dev/pts ("3"), or -1 without -t. */
static int pts_number(const struct cbox_sentry *s, dev_t *rdev)
{
	struct stat st;
	if (!s->cfg->tty || fstat(s->cfg->tty_fd, &st) < 0 || major(st.st_rdev) < 136 ||
	    major(st.st_rdev) > 143)
		return -1;
	if (rdev)
		*rdev = st.st_rdev;
	return (int)((major(st.st_rdev) - 136) * 256 + minor(st.st_rdev));
}

int cbox_dev_tty_name(const struct cbox_sentry *s, dev_t rdev, char *buf, size_t size)
{
	dev_t mine;
	int n = pts_number(s, &mine);
	if (n < 0 || mine != rdev)
		return -ENOENT;
	return snprintf(buf, size, "/dev/pts/%d", n);
}

static int new_entry(struct cbox_dentry *dir, const char *name, uint32_t mode, uint64_t priv,
                     uint64_t ino, struct cbox_dentry **out)
{
	struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, mode);
	if (!d)
		return -ENOMEM;
	d->priv = priv;
	d->ino = ino;
	*out = d;
	return 0;
}

static int d_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	(void)t;
	char num[16];
	if (dir->priv == PTS_PRIV) {
		int n = pts_number(s, NULL);
		snprintf(num, sizeof(num), "%d", n);
		if (n < 0 || strcmp(name, num) != 0)
			return -ENOENT;
		return new_entry(dir, name, S_IFCHR | 0620, PTSN_PRIV, 97, out);
	}
	if (s->shm_mp && strcmp(name, "shm") == 0) {
		*out = cbox_dentry_get(s->shm_mp);
		return 0;
	}
	if (strcmp(name, "tty") == 0)
		return new_entry(dir, name, S_IFCHR | 0666, TTY_PRIV, 98, out);
	if (strcmp(name, "pts") == 0 && s->cfg->tty)
		return new_entry(dir, name, S_IFDIR | 0755, PTS_PRIV, 96, out);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(entries); i++) {
		if (strcmp(entries[i].name, name) != 0)
			continue;
		uint32_t mode = entries[i].link ? (S_IFLNK | 0777) : (S_IFCHR | 0666);
		struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, mode);
		if (!d)
			return -ENOMEM;
		d->priv = i;
		d->ino = 100 + i;
		*out = d;
		return 0;
	}
	return -ENOENT;
}

static int d_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	(void)t;
	memset(st, 0, sizeof(*st));
	dev_t rdev = 0;
	if (d->priv == TTY_PRIV) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(5, 0);
		st->st_nlink = 1;
	} else if (d->priv == PTSN_PRIV) {
		/* The host's own identity of the terminal: ttyname() compares it with fstat(0). */
		(void)rdev;
		if (fstat(s->cfg->tty_fd, st) < 0)
			return -EIO;
		st->st_uid = st->st_gid = 0;
		return 0;
	} else if (d->priv == ROOT_PRIV || d->priv == SHM_PRIV || d->priv == PTS_PRIV) {
		st->st_mode = d->priv == SHM_PRIV ? S_IFDIR | 01777 : S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (entries[d->priv].link) {
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = (off_t)strlen(entries[d->priv].link);
	} else {
		struct stat host;
		if (fstat(s->dev_fds[d->priv], &host) < 0)
			return -EIO;
		st->st_mode = host.st_mode;
		st->st_rdev = host.st_rdev;
		st->st_nlink = 1;
	}
	st->st_dev = d->mnt->dev;
	st->st_ino = d->ino;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = s->born;
	return 0;
}

/*
 * A device is opened afresh through the sentry's own /proc/self/fd link to the host node it
 * opened at start, so every guest open gets its own open file description (O_NONBLOCK and
 * friends stay per open, as on Linux). The guest never sees a path to the host node.
 */
static int d_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	(void)t;
	if (d->priv == ROOT_PRIV)
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[64];
	if (d->priv == PTS_PRIV)
		return cbox_vfs_open_synthetic_dir(s, t, d);
	if (d->priv == TTY_PRIV || d->priv == PTSN_PRIV) {
		/* No controlling terminal without -t: ENXIO, as Linux answers. With -t, a new open
		 * of the sandbox's pseudo-terminal. */
		if (!s->cfg->tty)
			return -ENXIO;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", s->cfg->tty_fd);
		int fd = open(path, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->dev_fds[d->priv]);
	int keep = O_ACCMODE | O_APPEND | O_NONBLOCK;
	int fd = open(path, (flags & keep) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int d_readlink(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, char *buf,
                      size_t size)
{
	(void)s;
	(void)t;
	if (d->priv >= CBOX_ARRAY_SIZE(entries) || !entries[d->priv].link)
		return -EINVAL;
	return snprintf(buf, size, "%s", entries[d->priv].link);
}

static int d_readdir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                     int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
                     void *ctx)
{
	(void)t;
	int r = emit(ctx, ".", d->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "..", 2, DT_DIR);
	if (d->priv == PTS_PRIV) {
		char num[16];
		int n = pts_number(s, NULL);
		snprintf(num, sizeof(num), "%d", n);
		return r == 0 && n >= 0 ? emit(ctx, num, 97, DT_CHR) : r;
	}
	for (size_t i = 0; r == 0 && i < CBOX_ARRAY_SIZE(entries); i++)
		r = emit(ctx, entries[i].name, 100 + i, entries[i].link ? DT_LNK : DT_CHR);
	if (r == 0 && s->shm_mp)
		r = emit(ctx, "shm", s->shm_mp->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "tty", 98, DT_CHR);
	if (r == 0 && s->cfg->tty)
		r = emit(ctx, "pts", 96, DT_DIR);
	return r;
}

const struct cbox_fs_ops cbox_fs_dev = {
    .name = "dev",
    .lookup = d_lookup,
    .stat = d_stat,
    .open = d_open,
    .readlink = d_readlink,
    .readdir = d_readdir,
};
