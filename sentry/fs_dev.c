/* /dev: the devices a guest may use, and the /proc/self/fd links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

static int d_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	(void)t;
	if (s->shm_mp && strcmp(name, "shm") == 0) {
		*out = cbox_dentry_get(s->shm_mp);
		return 0;
	}
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
	if (d->priv == ROOT_PRIV || d->priv == SHM_PRIV) {
		st->st_mode = d->priv == ROOT_PRIV ? S_IFDIR | 0755 : S_IFDIR | 01777;
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
	if (d->priv == ROOT_PRIV || !entries[d->priv].link)
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
	for (size_t i = 0; r == 0 && i < CBOX_ARRAY_SIZE(entries); i++)
		r = emit(ctx, entries[i].name, 100 + i, entries[i].link ? DT_LNK : DT_CHR);
	if (r == 0 && s->shm_mp)
		r = emit(ctx, "shm", s->shm_mp->ino, DT_DIR);
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
