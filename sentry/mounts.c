/* The guest's mount table ("/" from the gofer, /proc, /dev and /sys from the sentry) and the host
 * objects that stand for synthetic files. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cbox/log.h"
#include "cbox/path.h"
#include "internal.h"

int cbox_memfd_with(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	const char *p = data;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		done += (size_t)n;
	}
	/* Sealed: the guest holds the only other reference and must not change what the sentry
	 * generated (a /proc file is read-only on Linux too). And the guest gets a read-only open
	 * of it, as Linux gives: a write is EBADF there (the seal alone answered EPERM), and
	 * F_GETFL shows O_RDONLY. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	return cbox_reopen_fd(fd, O_RDONLY);
}

int cbox_reopen_fd(int fd, int flags)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int n = open(link, flags | O_CLOEXEC);
	int err = errno;
	close(fd);
	return n < 0 ? -err : n;
}

/* linux_dirent64 as getdents64 returns it. */
struct dirent_buf {
	char *data;
	size_t len, cap;
};

static int emit_dirent(void *ctx, const char *name, uint64_t ino, unsigned char type)
{
	struct dirent_buf *b = ctx;
	size_t namelen = strlen(name);
	size_t reclen = (offsetof(struct cbox_dirent64, d_name) + namelen + 1 + 7) & ~(size_t)7;
	if (b->len + reclen > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + reclen)
			cap *= 2;
		char *n = realloc(b->data, cap);
		if (!n)
			return -ENOMEM;
		b->data = n;
		b->cap = cap;
	}
	struct cbox_dirent64 *d = (struct cbox_dirent64 *)(b->data + b->len);
	memset(d, 0, reclen);
	d->d_ino = ino;
	d->d_off = (int64_t)(b->len + reclen);
	d->d_reclen = (unsigned short)reclen;
	d->d_type = type;
	memcpy(d->d_name, name, namelen);
	b->len += reclen;
	return 0;
}

/*
 * A synthetic directory is opened as a sealed memfd holding its linux_dirent64 records, made at
 * open time (Linux's /proc also lists a snapshot). getdents64 on it is emulated by copying
 * records from the memfd's current offset, so lseek/rewinddir behave as on a directory.
 */
int cbox_vfs_open_synthetic_dir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d)
{
	struct dirent_buf b = {0};
	int r = d->mnt->ops->readdir(s, t, d, emit_dirent, &b);
	int fd =
	    r < 0 ? r : cbox_memfd_with(d->name[0] ? d->name : "dir", b.data ? b.data : "", b.len);
	free(b.data);
	return fd;
}

/* The mount points of the sentry's own mounts, walked with the gofer's first requests. */
static const char *const early_walks[] = {"proc", "dev", "sys"};

/* Mount m on the root's entry name; w: the walk to it from the root (cbox_vfs_init_early). */
static int attach(struct cbox_sentry *s, struct cbox_mount *m, const char *name,
                  const struct cbox_gofer_early_walk *w)
{
	struct cbox_dentry *mp = NULL;
	/* The mount point is the rootfs's own directory when it has one (so `ls /` shows it with
	 * its real attributes); otherwise a directory that exists only in the guest's tree. */
	if (w->err == 0) {
		const struct cbox_gofer_stat *st = &w->stat;
		mp = cbox_dentry_new(&s->root_mnt, s->root, name, st->mode);
		if (mp) {
			mp->fid = w->fid;
			mp->ino = st->ino;
			mp->host_dev = st->dev;
			mp->host_ino = st->ino;
			mp->uid = cbox_id_to_guest(s, st->uid, false);
			mp->gid = cbox_id_to_guest(s, st->gid, true);
		} else {
			cbox_gofer_clunk(s->gofer, w->fid);
		}
	} else {
		mp = cbox_dentry_new(&s->root_mnt, s->root, name, S_IFDIR | 0555);
		if (mp)
			mp->fid = CBOX_GOFER_ROOT_FID; /* never clunked, never opened */
	}
	if (!mp)
		return -ENOMEM;
	mp->mode = (mp->mode & ~S_IFMT) | S_IFDIR;
	mp->covered_by = m;
	cbox_vfs_cache_link(s->root, mp);
	m->mountpoint = mp; /* the mount holds mp's reference */
	m->root = cbox_dentry_new(m, NULL, "", S_IFDIR | 0555);
	if (!m->root)
		return -ENOMEM;
	m->root->priv = m->ops == &cbox_fs_proc  ? 1 /* P_ROOT */
	                : m->ops == &cbox_fs_sys ? 0 /* fs_sys.c: N_ROOT */
	                                         : 0xffff;
	m->root->ino = 1;
	return 0;
}

bool cbox_sentry_serves_path(const char *path)
{
	if (cbox_path_under(path, "/dev/shm"))
		return false;
	return cbox_path_under(path, "/proc") || cbox_path_under(path, "/sys") ||
	       cbox_path_under(path, "/dev");
}

/*
 * /dev/shm: the sentry serves /dev itself, so the tmpfs the gofer made for shared memory
 * (sem_open, shm_open, multiprocessing) is mounted on a "shm" entry of the sentry's /dev.
 */
static int attach_dev_shm(struct cbox_sentry *s, const char *path)
{
	uint32_t fid = CBOX_GOFER_ROOT_FID;
	struct cbox_gofer_stat st;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	/* Below /dev, from its mount point, whose walk came with the first requests (the
	 * mount point keeps that fid). */
	const struct cbox_dentry *dev = s->dev_mnt.mountpoint;
	char *rest = buf;
	if (strncmp(buf, "/dev/", 5) == 0 && dev && dev->fid != CBOX_GOFER_ROOT_FID) {
		fid = dev->fid;
		rest = buf + 5;
	}
	const uint32_t start = fid;
	for (char *save = NULL, *c = strtok_r(rest, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		uint32_t next;
		int r = cbox_gofer_walk(s->gofer, fid, c, &next, &st);
		if (fid != start)
			cbox_gofer_clunk(s->gofer, fid);
		if (r < 0)
			return r;
		fid = next;
	}
	if (fid == start || !S_ISDIR(st.mode))
		return -ENOTDIR;
	s->shm_mnt = (struct cbox_mount){.ops = &cbox_fs_gofer, .readonly = false};
	s->shm_mnt.root = cbox_fs_gofer_dentry(s, s->root, "", fid, &st);
	if (!s->shm_mnt.root)
		return -ENOMEM;
	/* A mount's root has no parent: ".." goes through the mount point. */
	cbox_dentry_put(s, s->shm_mnt.root->parent);
	s->shm_mnt.root->parent = NULL;
	s->shm_mnt.root->mnt = &s->shm_mnt;
	s->shm_mp = cbox_dentry_new(&s->dev_mnt, s->dev_mnt.root, "shm", S_IFDIR | 01777);
	if (!s->shm_mp)
		return -ENOMEM;
	s->shm_mp->priv = 0xfffe; /* fs_dev.c: SHM_PRIV */
	s->shm_mp->ino = 99;
	s->shm_mp->covered_by = &s->shm_mnt;
	s->shm_mnt.mountpoint = s->shm_mp;
	return 0;
}

int cbox_vfs_init_early(struct cbox_sentry *s)
{
	cbox_fs_gofer_init_local(s);
	return cbox_gofer_early_send(s->gofer, s->view_wanted, early_walks,
	                             CBOX_ARRAY_SIZE(early_walks));
}

int cbox_vfs_init(struct cbox_sentry *s)
{
	/* (asked for at the sentry's start: cbox_vfs_init_early) */
	struct cbox_gofer_stat st;
	int view_fd;
	struct cbox_gofer_early_walk walked[CBOX_ARRAY_SIZE(early_walks)];
	int r = cbox_gofer_early_recv(s->gofer, &st, &view_fd, walked);
	if (r < 0) {
		if (view_fd >= 0)
			close(view_fd);
		return r;
	}
	/* With writable mounts in the gofer's tree, the host kernel tells which parts are
	 * read-only (EROFS); without, the sentry refuses writes before asking. */
	s->root_mnt =
	    (struct cbox_mount){.ops = &cbox_fs_gofer, .readonly = !s->cfg->tree_writable};
	s->root = cbox_dentry_new(&s->root_mnt, NULL, "", st.mode);
	if (!s->root)
		return -ENOMEM;
	s->root->fid = CBOX_GOFER_ROOT_FID;
	s->root->ino = st.ino;
	s->root->host_dev = st.dev;
	s->root->host_ino = st.ino;
	s->root->uid = cbox_id_to_guest(s, st.uid, false);
	s->root->gid = cbox_id_to_guest(s, st.gid, true);
	/* (a read-only root: its names are looked up by the sentry itself, fs_gofer_local.c) */
	cbox_fs_gofer_keep_stat(s, s->root, &st);
	s->root_mnt.root = s->root;
	cbox_fs_gofer_init_view(s, view_fd);
	/* Not read-only: /proc decides per file (comm and oom_score_adj are writable by their
	 * task, the rest EACCES or EPERM as Linux answers), which a read-only mount would
	 * pre-empt with EROFS. */
	s->proc_mnt = (struct cbox_mount){.ops = &cbox_fs_proc, .readonly = false, .dev = 0x16};
	s->dev_mnt = (struct cbox_mount){.ops = &cbox_fs_dev, .readonly = false, .dev = 0x5};
	/* Read-only, as a container's /sys is (a write is EROFS). */
	s->sys_mnt =
	    (struct cbox_mount){.ops = &cbox_fs_sys, .readonly = true, .dev = CBOX_SYS_DEV};
	r = attach(s, &s->proc_mnt, early_walks[0], &walked[0]);
	if (r == 0)
		r = attach(s, &s->dev_mnt, early_walks[1], &walked[1]);
	if (r == 0)
		r = attach(s, &s->sys_mnt, early_walks[2], &walked[2]);
	if (r == 0 && s->cfg->dev_shm)
		r = attach_dev_shm(s, s->cfg->dev_shm);
	return r;
}
