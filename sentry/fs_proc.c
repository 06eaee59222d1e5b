/*
 * /proc for the guest, built from the sentry's task table and from the sentry's private procfs
 * of the sandbox's pid namespace (mounted at /proc in the sentry's own mount namespace), with
 * every pid translated into the guest's pid namespace and the sentry itself hidden.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

enum kind {
	P_ROOT = 1,
	P_SELF,
	P_PIDDIR,
	P_STAT,
	P_STATUS,
	P_CMDLINE,
	P_ENVIRON,
	P_COMM,
	P_EXE,
	P_CWD,
	P_FDDIR,
	P_FD,
	P_UPTIME,
	P_THREAD_SELF,
};

#define PRIV(k, pid, fd) ((uint64_t)(k) | ((uint64_t)(uint32_t)(pid) << 8) | ((uint64_t)(fd) << 40))
#define KIND(p)          ((enum kind)((p)&0xff))
#define PID(p)           ((pid_t)(((p) >> 8) & 0xffffffff))
#define FDN(p)           ((int)((p) >> 40))

static const struct {
	const char *name;
	enum kind kind;
	uint32_t mode;
} pid_entries[] = {
    {"stat", P_STAT, S_IFREG | 0444},       {"status", P_STATUS, S_IFREG | 0444},
    {"cmdline", P_CMDLINE, S_IFREG | 0444}, {"environ", P_ENVIRON, S_IFREG | 0400},
    {"comm", P_COMM, S_IFREG | 0644},       {"exe", P_EXE, S_IFLNK | 0777},
    {"cwd", P_CWD, S_IFLNK | 0777},         {"fd", P_FDDIR, S_IFDIR | 0500},
};

static struct cbox_dentry *mk(struct cbox_dentry *dir, const char *name, uint32_t mode,
                              uint64_t priv)
{
	struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, mode);
	if (d) {
		d->priv = priv;
		d->ino = (priv * 2654435761u) | 1;
	}
	return d;
}

static struct cbox_task *task_of(struct cbox_sentry *s, pid_t vpid)
{
	return cbox_task_find_vpid(s, vpid);
}

/* Host task of a guest pid, for reading the sentry's own procfs. */
static pid_t host_of(struct cbox_sentry *s, pid_t vpid)
{
	struct cbox_task *t = task_of(s, vpid);
	return t ? t->tid : 0;
}

static int parse_pid(const char *name)
{
	if (!*name || strlen(name) > 9)
		return -1;
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	return atoi(name);
}

static int p_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	enum kind k = KIND(dir->priv);
	pid_t pid = PID(dir->priv);
	if (k == P_ROOT) {
		if (strcmp(name, "self") == 0)
			*out = mk(dir, name, S_IFLNK | 0777, PRIV(P_SELF, 0, 0));
		else if (strcmp(name, "thread-self") == 0)
			*out = mk(dir, name, S_IFLNK | 0777, PRIV(P_THREAD_SELF, 0, 0));
		else if (strcmp(name, "uptime") == 0)
			*out = mk(dir, name, S_IFREG | 0444, PRIV(P_UPTIME, 0, 0));
		else {
			int v = parse_pid(name);
			if (v <= 0 || !task_of(s, v))
				return -ENOENT;
			*out = mk(dir, name, S_IFDIR | 0555, PRIV(P_PIDDIR, v, 0));
		}
		return *out ? 0 : -ENOMEM;
	}
	if (k == P_PIDDIR) {
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(pid_entries); i++)
			if (strcmp(name, pid_entries[i].name) == 0) {
				*out = mk(dir, name, pid_entries[i].mode,
				          PRIV(pid_entries[i].kind, pid, 0));
				return *out ? 0 : -ENOMEM;
			}
		return -ENOENT;
	}
	if (k == P_FDDIR) {
		int fd = parse_pid(name);
		pid_t host = host_of(s, pid);
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", host, fd);
		struct stat st;
		if (fd < 0 || !host || lstat(path, &st) < 0)
			return -ENOENT;
		(void)t;
		*out = mk(dir, name, S_IFLNK | 0700, PRIV(P_FD, pid, fd));
		return *out ? 0 : -ENOMEM;
	}
	return -ENOTDIR;
}

static int p_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	(void)t;
	memset(st, 0, sizeof(*st));
	st->st_mode = d->mode;
	st->st_nlink = S_ISDIR(d->mode) ? 2 : 1;
	st->st_dev = d->mnt->dev;
	st->st_ino = d->ino;
	st->st_blksize = 1024;
	if (KIND(d->priv) != P_ROOT && PID(d->priv) && !task_of(s, PID(d->priv)))
		return -ENOENT; /* the process went away */
	return 0;
}

static ssize_t read_host(pid_t host, const char *what, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", host, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n < size) {
		ssize_t r = read(fd, buf + n, size - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return (ssize_t)n;
}

/* /proc/<pid>/stat with pid, ppid, pgrp, session and tpgid in the guest's namespace. */
static int gen_stat(struct cbox_sentry *s, pid_t host, char *out, size_t size)
{
	char buf[2048];
	ssize_t n = read_host(host, "stat", buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	if (!rp)
		return -EIO;
	char state;
	long ppid, pgrp, sid, tty, tpgid;
	int used = 0;
	if (sscanf(rp + 1, " %c %ld %ld %ld %ld %ld%n", &state, &ppid, &pgrp, &sid, &tty, &tpgid,
	           &used) < 6)
		return -EIO;
	*rp = '\0';
	char *lp = strchr(buf, '(');
	return snprintf(out, size, "%d (%s) %c %d %d %d %ld %d%s", cbox_task_vpid_of(s, host),
	                lp ? lp + 1 : "", state, cbox_task_vpid_of(s, (pid_t)ppid),
	                cbox_task_vpid_of(s, (pid_t)pgrp), cbox_task_vpid_of(s, (pid_t)sid), tty,
	                tpgid > 0 ? cbox_task_vpid_of(s, (pid_t)tpgid) : -1, rp + 1 + used);
}

/* /proc/<pid>/status with the pid lines translated and the tracer (the sentry) hidden. */
static int gen_status(struct cbox_sentry *s, pid_t host, char *out, size_t size)
{
	char buf[8192];
	ssize_t n = read_host(host, "status", buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	size_t len = 0;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && len < size;
	     line = strtok_r(NULL, "\n", &save)) {
		char key[32];
		long v;
		int w;
		if (sscanf(line, "%31[^:]:%n", key, &w) == 1 &&
		    (!strcmp(key, "Pid") || !strcmp(key, "PPid") || !strcmp(key, "Tgid") ||
		     !strcmp(key, "TracerPid") || !strcmp(key, "NSpid") || !strcmp(key, "NStgid") ||
		     !strcmp(key, "NSpgid") || !strcmp(key, "NSsid") || !strcmp(key, "Ngid"))) {
			v = strtol(line + w, NULL, 10);
			pid_t vp = (!strcmp(key, "TracerPid") || v == 0)
			               ? 0
			               : cbox_task_vpid_of(s, (pid_t)v);
			len += (size_t)snprintf(out + len, size - len, "%s:\t%d\n", key, vp);
		} else {
			len += (size_t)snprintf(out + len, size - len, "%s\n", line);
		}
	}
	return len < size ? (int)len : (int)size;
}

static int gen_file(struct cbox_sentry *s, struct cbox_dentry *d, char *out, size_t size)
{
	pid_t host = host_of(s, PID(d->priv));
	switch (KIND(d->priv)) {
	case P_STAT:
		return host ? gen_stat(s, host, out, size) : -ENOENT;
	case P_STATUS:
		return host ? gen_status(s, host, out, size) : -ENOENT;
	case P_CMDLINE:
		return host ? (int)read_host(host, "cmdline", out, size) : -ENOENT;
	case P_ENVIRON:
		return host ? (int)read_host(host, "environ", out, size) : -ENOENT;
	case P_COMM:
		return host ? (int)read_host(host, "comm", out, size) : -ENOENT;
	case P_UPTIME: {
		char buf[128];
		ssize_t n = read_host(1, "../uptime", buf, sizeof(buf) - 1);
		if (n < 0)
			return (int)n;
		buf[n] = '\0';
		return snprintf(out, size, "%s", buf);
	}
	default:
		return -EINVAL;
	}
}

static int p_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	(void)t;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	size_t size = 256 * 1024;
	char *buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	int n = gen_file(s, d, buf, size);
	int fd = n < 0 ? n : cbox_memfd_with(d->name, buf, (size_t)n);
	free(buf);
	return fd;
}

struct fdlink_ctx {
	int fd;
	char *buf;
	size_t size;
	int len;
};

static int p_readlink(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, char *buf,
                      size_t size)
{
	pid_t pid = PID(d->priv);
	struct cbox_task *pt = pid ? task_of(s, pid) : NULL;
	switch (KIND(d->priv)) {
	case P_SELF:
		return snprintf(buf, size, "%d", cbox_task_vpid(s, t));
	case P_THREAD_SELF:
		return snprintf(buf, size, "%d/task/%d", cbox_task_vpid(s, t),
		                t->vtid ? t->vtid : cbox_task_vpid(s, t));
	case P_EXE:
		if (!pt || !pt->tg || !pt->tg->exe)
			return -ENOENT;
		return snprintf(buf, size, "%s", pt->tg->exe);
	case P_CWD:
		if (!pt || !pt->fs)
			return -ENOENT;
		return cbox_vfs_path(pt->fs->cwd, buf, size);
	case P_FD: {
		if (!pt)
			return -ENOENT;
		int err = 0;
		struct cbox_dentry *f = cbox_fd_lookup(s, pt, FDN(d->priv), NULL, &err);
		if (f)
			return cbox_vfs_path(f, buf, size);
		/* Not a file the sentry served: pipes, sockets and anonymous inodes are named as
		 * the host names them; nothing else (a host path) is shown. */
		char path[64], target[256];
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pt->tid, FDN(d->priv));
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			return -ENOENT;
		target[n] = '\0';
		if (target[0] == '/')
			return snprintf(buf, size, "anon_inode:[cbox]");
		return snprintf(buf, size, "%s", target);
	}
	default:
		return -EINVAL;
	}
}

static int p_readdir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                     int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
                     void *ctx)
{
	(void)t;
	int r = emit(ctx, ".", d->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "..", 1, DT_DIR);
	char name[32];
	switch (KIND(d->priv)) {
	case P_ROOT:
		for (size_t h = 0; r == 0 && h < CBOX_TASK_HASH; h++)
			for (struct cbox_task *x = s->tasks[h]; r == 0 && x; x = x->next_in_hash)
				if (x->tg && x->tg->host_tgid == x->tid) {
					snprintf(name, sizeof(name), "%d", cbox_task_vpid(s, x));
					r = emit(ctx, name, PRIV(P_PIDDIR, 0, 0), DT_DIR);
				}
		if (r == 0)
			r = emit(ctx, "self", 3, DT_LNK);
		if (r == 0)
			r = emit(ctx, "thread-self", 4, DT_LNK);
		if (r == 0)
			r = emit(ctx, "uptime", 5, DT_REG);
		return r;
	case P_PIDDIR:
		for (size_t i = 0; r == 0 && i < CBOX_ARRAY_SIZE(pid_entries); i++)
			r = emit(ctx, pid_entries[i].name, 10 + i,
			         S_ISDIR(pid_entries[i].mode)   ? DT_DIR
			         : S_ISLNK(pid_entries[i].mode) ? DT_LNK
			                                        : DT_REG);
		return r;
	case P_FDDIR: {
		pid_t host = host_of(s, PID(d->priv));
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd", host);
		DIR *dir = host ? opendir(path) : NULL;
		if (!dir)
			return r;
		struct dirent *e;
		uint64_t seen[16] = {0}; /* fds 0..1023 present, to find the lowest free one */
		while (r == 0 && (e = readdir(dir))) {
			int n = atoi(e->d_name);
			if (e->d_name[0] != '.' && n >= 0 && n < 1024)
				seen[n / 64] |= 1ULL << (n % 64);
			if (e->d_name[0] == '.')
				continue;
			/* The ptrace platform's install socket is the sentry's, not the guest's. */
			if (s->platform->ops->needs_install_fd &&
			    atoi(e->d_name) == CBOX_PTRACE_INSTALL_FD)
				continue;
			r = emit(ctx, e->d_name, 1000 + (uint64_t)atoi(e->d_name), DT_LNK);
		}
		closedir(dir);
		/* A task listing its own fds holds this directory open too, at the lowest free
		 * number (where the sentry is about to install it), as on Linux. */
		if (r == 0 && t && t->tg && host == t->tg->host_tgid) {
			for (int n = 0; n < 1024; n++)
				if (!(seen[n / 64] & (1ULL << (n % 64)))) {
					snprintf(name, sizeof(name), "%d", n);
					r = emit(ctx, name, 1000 + (uint64_t)n, DT_LNK);
					break;
				}
		}
		return r;
	}
	default:
		return -ENOTDIR;
	}
}

const struct cbox_fs_ops cbox_fs_proc = {
    .name = "proc",
    .lookup = p_lookup,
    .stat = p_stat,
    .open = p_open,
    .readlink = p_readlink,
    .readdir = p_readdir,
};
