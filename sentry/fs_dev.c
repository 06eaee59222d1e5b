/* /dev: the devices a guest may use, and the /proc/self/fd links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cbox/log.h"

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
#define SHM_PRIV  0xfffe  /* the /dev/shm mount point (sentry/mounts.c) */
#define TTY_PRIV  0xfffd  /* /dev/tty: the controlling terminal, when cbox-run -t gave one */
#define PTS_PRIV  0xfffc  /* /dev/pts, holding the sandbox's pseudo-terminal (cbox-run -t) */
#define PTSN_PRIV 0xfffb  /* /dev/pts/N, that terminal itself */
#define PTMX_PRIV 0xfffa  /* /dev/ptmx and /dev/pts/ptmx: a new pseudo-terminal */
#define PTY_PRIV  0x10000 /* + N: /dev/pts/N, a pseudo-terminal of the sandbox's devpts */
#define TTY_GID   5       /* the tty group, which owns terminals (devpts' gid=5, as Docker's) */

/*
 * The sandbox's own pseudo-terminals (script, expect, pexpect, Python's pty, ssh -t, tmux): a
 * devpts instance of its own, mounted by the sentry where only it sees it. /dev/ptmx opens its
 * ptmx, /dev/pts lists it. The -t terminal, which cbox-run made on the host, is /dev/pts/0 (as
 * a container's is): the instance's own 0 is held by the sentry so that no other takes the name.
 *
 * Security: newinstance keeps the host's terminals (its /dev/pts) out of the sandbox's
 * reach, and max= bounds how many the guest may hold: the kernel's limit (kernel.pty.max) is
 * the host's, shared with its own terminals' logins.
 */
void cbox_dev_pts_setup(struct cbox_sentry *s, const char *dir)
{
	char opts[96];
	snprintf(opts, sizeof(opts), "newinstance,ptmxmode=0666,mode=0620,max=%d", CBOX_PTS_MAX);
	if (mkdir(dir, 0755) < 0 ||
	    mount("devpts", dir, "devpts", MS_NOSUID | MS_NOEXEC, opts) < 0) {
		cbox_debug("no pseudo-terminals in the sandbox: devpts: %s", strerror(errno));
		return;
	}
	s->pts_dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->pts_dir >= 0 && s->cfg->tty)
		s->pts_hold = openat(s->pts_dir, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/* N of a pseudo-terminal name of the sandbox's devpts ("3"), else -1 (the -t terminal's "0"
 * included). */
static int pty_number(const struct cbox_sentry *s, const char *name)
{
	char *end;
	if (s->pts_dir < 0 || name[0] < '0' || name[0] > '9' || (name[0] == '0' && name[1]))
		return -1;
	long n = strtol(name, &end, 10);
	if (*end || n >= CBOX_PTS_MAX || (n == 0 && s->cfg->tty))
		return -1;
	struct stat st;
	return fstatat(s->pts_dir, name, &st, 0) == 0 && S_ISCHR(st.st_mode) ? (int)n : -1;
}

/* Whether cbox-run -t gave the sandbox a terminal (its /dev/pts/0); *rdev: its device. */
static bool given_tty(const struct cbox_sentry *s, dev_t *rdev)
{
	struct stat st;
	if (!s->cfg->tty || fstat(s->cfg->tty_fd, &st) < 0 || major(st.st_rdev) < 136 ||
	    major(st.st_rdev) > 143)
		return false;
	if (rdev)
		*rdev = st.st_rdev;
	return true;
}

/* The name in its devpts of pseudo-terminal rdev ("3"), in name (16 bytes). */
static void pty_name(dev_t rdev, char *name)
{
	snprintf(name, 16, "%u", (major(rdev) - 136) * 256 + minor(rdev));
}

/* Open flags of a terminal for the sentry: the guest's access and O_NONBLOCK, never as the
 * sentry's own controlling terminal. */
static int tty_flags(int flags)
{
	return (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC;
}

/* A new open of the -t terminal. */
static int open_given(const struct cbox_sentry *s, int flags)
{
	if (!s->cfg->tty)
		return -ENXIO;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->cfg->tty_fd);
	int fd = open(path, tty_flags(flags));
	return fd < 0 ? -errno : fd;
}

int cbox_dev_tty_name(const struct cbox_sentry *s, const struct stat *st, char *buf, size_t size)
{
	dev_t mine;
	struct stat inst;
	if (s->pts_dir >= 0 && fstat(s->pts_dir, &inst) == 0 && st->st_dev == inst.st_dev) {
		char name[16];
		pty_name(st->st_rdev, name);
		return pty_number(s, name) >= 0 ? snprintf(buf, size, "/dev/pts/%s", name)
		                                : -ENOENT;
	}
	if (!given_tty(s, &mine) || mine != st->st_rdev)
		return -ENOENT;
	return snprintf(buf, size, "/dev/pts/0");
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
	/* (in /dev and in /dev/pts alike) */
	if (strcmp(name, "ptmx") == 0 && s->pts_dir >= 0)
		return new_entry(dir, name, S_IFCHR | 0666, PTMX_PRIV, 95, out);
	if (dir->priv == PTS_PRIV) {
		if (strcmp(name, "0") == 0 && given_tty(s, NULL))
			return new_entry(dir, name, S_IFCHR | 0620, PTSN_PRIV, 97, out);
		int n = pty_number(s, name);
		if (n < 0)
			return -ENOENT;
		return new_entry(dir, name, S_IFCHR | 0620, PTY_PRIV + (uint64_t)n,
		                 200 + (uint64_t)n, out);
	}
	if (s->shm_mp && strcmp(name, "shm") == 0) {
		*out = cbox_dentry_get(s->shm_mp);
		return 0;
	}
	if (strcmp(name, "tty") == 0)
		return new_entry(dir, name, S_IFCHR | 0666, TTY_PRIV, 98, out);
	if (strcmp(name, "pts") == 0 && (s->cfg->tty || s->pts_dir >= 0))
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
	} else if (d->priv >= PTY_PRIV) {
		/* Likewise, with the owner the guest gave it: the ids that opened its ptmx. */
		unsigned n = (unsigned)(d->priv - PTY_PRIV);
		if (fstatat(s->pts_dir, d->name, st, 0) < 0)
			return -errno;
		st->st_uid = s->pts_owner[n].set ? s->pts_owner[n].uid : 0;
		st->st_gid = TTY_GID;
		return 0;
	} else if (d->priv == PTMX_PRIV) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(5, 2);
		st->st_gid = TTY_GID;
		st->st_nlink = 1;
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

/* A new pseudo-terminal: its master. The sentry opens it (O_NOCTTY: never its own terminal) and
 * notes who the guest is that made it, its owner as the guest sees it. */
static int open_ptmx(struct cbox_sentry *s, struct cbox_task *t, int flags)
{
	int fd = openat(s->pts_dir, "ptmx", tty_flags(flags));
	if (fd < 0)
		return -errno; /* ENOSPC: max= reached, as Linux says */
	unsigned n;
	if (ioctl(fd, TIOCGPTN, &n) == 0 && n < CBOX_PTS_MAX)
		s->pts_owner[n] =
		    (struct cbox_pts_owner){.uid = t->cred ? t->cred->fsuid : 0, .set = true};
	return fd;
}

/* /dev/pts/N: its mode (0620) for its owner and the tty group, checked as Linux checks it (the
 * host would let the sentry open any); opened without becoming the sentry's terminal. A locked
 * one (before unlockpt) is the host's EIO. */
static int open_pty(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	unsigned n = (unsigned)(d->priv - PTY_PRIV);
	int acc = flags & O_ACCMODE;
	int want = acc == O_RDONLY ? R_OK : acc == O_WRONLY ? W_OK : R_OK | W_OK;
	uint32_t owner = s->pts_owner[n].set ? s->pts_owner[n].uid : 0;
	struct stat st; /* its mode as it is now (`mesg n` takes the group's write) */
	if (fstatat(s->pts_dir, d->name, &st, 0) < 0)
		return -errno;
	if (!t->cred || cbox_cred_permission(t->cred, st.st_mode, owner, TTY_GID, want) < 0)
		return -EACCES;
	int fd = openat(s->pts_dir, d->name, tty_flags(flags));
	return fd < 0 ? -errno : fd;
}

/*
 * /dev/tty: the opener's controlling terminal, as Linux gives it (ENXIO without one): the -t
 * terminal, or one of the sandbox's own (a session script or pexpect made). Both are numbered by
 * the host's devpts they come from, so one number can name both: the -t terminal is the one of
 * the session it was given to (the guest's first task's).
 */
static int open_ctty(struct cbox_sentry *s, struct cbox_task *t, int flags)
{
	struct cbox_task_stat me, first;
	dev_t mine;
	if (cbox_task_stat(t->tid, &me) < 0 || me.tty == 0)
		return -ENXIO;
	char name[16];
	pty_name(me.tty, name);
	bool own = major(me.tty) >= 136 && major(me.tty) <= 143 && pty_number(s, name) >= 0;
	bool given = given_tty(s, &mine) && mine == me.tty;
	if (given && own)
		given = cbox_task_stat(s->init_tid, &first) == 0 && first.sid == me.sid;
	if (given)
		return open_given(s, flags);
	if (!own)
		return -ENXIO;
	int fd = openat(s->pts_dir, name, tty_flags(flags));
	return fd < 0 ? -errno : fd;
}

/*
 * A device is opened afresh through the sentry's own /proc/self/fd link to the host node it
 * opened at start, so every guest open gets its own open file description (O_NONBLOCK and
 * friends stay per open, as on Linux). The guest never sees a path to the host node.
 */
static int d_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	if (d->priv == ROOT_PRIV)
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[64];
	if (d->priv == PTS_PRIV)
		return cbox_vfs_open_synthetic_dir(s, t, d);
	if (d->priv == TTY_PRIV)
		return open_ctty(s, t, flags);
	if (d->priv == PTSN_PRIV)
		return open_given(s, flags);
	if (d->priv == PTMX_PRIV)
		return open_ptmx(s, t, flags);
	if (d->priv >= PTY_PRIV)
		return open_pty(s, t, d, flags);
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
		if (r == 0 && given_tty(s, NULL))
			r = emit(ctx, "0", 97, DT_CHR);
		if (r == 0 && s->pts_dir >= 0)
			r = emit(ctx, "ptmx", 95, DT_CHR);
		int fd = s->pts_dir >= 0
		             ? openat(s->pts_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		             : -1;
		DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
		if (!dir && fd >= 0)
			close(fd);
		for (struct dirent *e; r == 0 && dir && (e = readdir(dir));)
			if (pty_number(s, e->d_name) >= 0)
				r = emit(ctx, e->d_name, e->d_ino, DT_CHR);
		if (dir)
			closedir(dir);
		return r;
	}
	for (size_t i = 0; r == 0 && i < CBOX_ARRAY_SIZE(entries); i++)
		r = emit(ctx, entries[i].name, 100 + i, entries[i].link ? DT_LNK : DT_CHR);
	if (r == 0 && s->shm_mp)
		r = emit(ctx, "shm", s->shm_mp->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "tty", 98, DT_CHR);
	if (r == 0 && s->pts_dir >= 0)
		r = emit(ctx, "ptmx", 95, DT_CHR);
	if (r == 0 && (s->cfg->tty || s->pts_dir >= 0))
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
