/* The shadow fd table: what the sentry installed at each guest fd (see kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/hashmap.h"
#include "cbox/log.h"
#include "internal.h"

struct entry {
	struct cbox_dentry *d;
	int flags;
	uint64_t dev, ino;
};

struct cbox_fdtable {
	int refs;
	struct cbox_hashmap *map; /* fd -> struct entry */
	int install_sock;         /* ptrace platform: the sentry's end of the table's channel */
};

struct cbox_fdtable *cbox_fdtable_new(void)
{
	struct cbox_fdtable *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->map = cbox_hashmap_new(false, NULL);
	if (!t->map) {
		free(t);
		return NULL;
	}
	t->refs = 1;
	t->install_sock = -1;
	return t;
}

struct cbox_fdtable *cbox_fdtable_get(struct cbox_fdtable *t)
{
	if (t)
		t->refs++;
	return t;
}

struct cbox_fdtable *cbox_fdtable_copy(struct cbox_fdtable *src)
{
	struct cbox_fdtable *t = cbox_fdtable_new();
	if (!t || !src)
		return t;
	/* (the copy holds the same guest socket at the reserved fd, until tracer.c gives a
	 * fork's child its own) */
	if (src->install_sock >= 0)
		t->install_sock = fcntl(src->install_sock, F_DUPFD_CLOEXEC, 3);
	size_t it = 0;
	uint64_t fd;
	void *v;
	while (cbox_hashmap_next(src->map, &it, &fd, NULL, NULL, &v)) {
		struct entry *e = v, *c = malloc(sizeof(*c));
		if (!c)
			break;
		*c = *e;
		cbox_dentry_get(c->d);
		if (cbox_hashmap_put_u64(t->map, fd, c) < 0) {
			free(c);
			break;
		}
	}
	return t;
}

static void entry_free(struct cbox_sentry *s, struct entry *e)
{
	if (!e)
		return;
	cbox_dentry_put(s, e->d);
	free(e);
}

void cbox_fdtable_put(struct cbox_sentry *s, struct cbox_fdtable *t)
{
	if (!t || --t->refs > 0)
		return;
	size_t it = 0;
	void *v;
	while (cbox_hashmap_next(t->map, &it, NULL, NULL, NULL, &v))
		entry_free(s, v);
	cbox_hashmap_free(t->map);
	if (t->install_sock >= 0)
		close(t->install_sock);
	free(t);
}

bool cbox_fdtable_shared(const struct cbox_fdtable *t)
{
	return t && t->refs > 1;
}

int cbox_fdtable_install_sock(const struct cbox_fdtable *t)
{
	return t ? t->install_sock : -1;
}

void cbox_fdtable_set_install_sock(struct cbox_fdtable *t, int sock)
{
	if (t->install_sock >= 0)
		close(t->install_sock);
	t->install_sock = sock;
}

/* Remember that the host inode (dev, ino) is the guest's path of d. */
static void remember(struct cbox_sentry *s, struct cbox_dentry *d, uint64_t dev, uint64_t ino)
{
	char path[PATH_MAX];
	for (unsigned i = 0; i < CBOX_ARRAY_SIZE(s->recent); i++)
		if (s->recent[i].path && s->recent[i].dev == dev && s->recent[i].ino == ino)
			return;
	if (cbox_vfs_path(d, path, sizeof(path)) < 0)
		return;
	struct cbox_recent *r = &s->recent[s->recent_next++ % CBOX_ARRAY_SIZE(s->recent)];
	free(r->path);
	*r = (struct cbox_recent){.dev = dev, .ino = ino, .path = strdup(path)};
}

int cbox_fd_set(struct cbox_sentry *s, struct cbox_task *t, int fd, struct cbox_dentry *d,
                int flags, uint64_t dev, uint64_t ino)
{
	if (d->mnt->ops == &cbox_fs_gofer)
		remember(s, d, dev, ino);
	struct entry *e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct entry){.d = cbox_dentry_get(d), .flags = flags, .dev = dev, .ino = ino};
	entry_free(s, cbox_hashmap_take_u64(t->files->map, (uint64_t)fd));
	if (cbox_hashmap_put_u64(t->files->map, (uint64_t)fd, e) < 0) {
		entry_free(s, e);
		return -ENOMEM;
	}
	return 0;
}

void cbox_fd_forget(struct cbox_sentry *s, struct cbox_task *t, int fd)
{
	entry_free(s, cbox_hashmap_take_u64(t->files->map, (uint64_t)fd));
}

/*
 * The entry is only a hint: the guest can close and reuse fd numbers on the fast path. The
 * task's current fd is fetched (pidfd_getfd) and compared by host identity before the entry is
 * believed; a mismatch drops the entry.
 */
/*
 * The fd is not in the table, but the guest made it on the fast path (dup2, dup3, fcntl
 * F_DUPFD, an fd received over a socket) from a file the sentry served: the same host inode
 * under another fd number. Any entry with that inode names the same file, so the new fd is
 * recorded under that dentry, with the open flags the live fd really has.
 */
static struct entry *adopt(struct cbox_sentry *s, struct cbox_task *t, int fd,
                           const struct stat *st, int flags)
{
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		return NULL;
	size_t it = 0;
	uint64_t key;
	void *v;
	struct cbox_dentry *d = NULL, *walked = NULL;
	while (!d && cbox_hashmap_next(t->files->map, &it, &key, NULL, NULL, &v)) {
		struct entry *o = v;
		if (o->dev == (uint64_t)st->st_dev && o->ino == (uint64_t)st->st_ino) {
			d = o->d;
			/* A copy of an O_PATH fd has its flags: of a stand-in (sys_file.c
			 * path_stand_in), whose host flags say no access, and of the ptrace
			 * platform's host O_PATH fd, whose flags are the sentry's open's. */
			if ((o->flags & O_PATH) && flags >= 0 &&
			    ((flags & O_ACCMODE) == O_ACCMODE || (flags & O_PATH)))
				flags = o->flags & ~O_CLOEXEC;
		}
	}
	/* Its original fd may be gone (bash: open, dup2 to 0, close): the recent paths, walked
	 * again and believed only if they still lead to the same inode. */
	for (unsigned i = 0; !d && i < CBOX_ARRAY_SIZE(s->recent); i++) {
		const struct cbox_recent *r = &s->recent[i];
		if (!r->path || r->dev != (uint64_t)st->st_dev || r->ino != (uint64_t)st->st_ino)
			continue;
		if (cbox_vfs_walk(s, t, AT_FDCWD, r->path, 0, &walked, NULL) < 0)
			break;
		if (walked->host_dev == r->dev && walked->host_ino == r->ino)
			d = walked;
		break;
	}
	int rc = d && flags >= 0
	             ? cbox_fd_set(s, t, fd, d, flags, (uint64_t)st->st_dev, (uint64_t)st->st_ino)
	             : -1;
	if (walked)
		cbox_dentry_put(s, walked);
	return rc < 0 ? NULL : cbox_hashmap_get_u64(t->files->map, (uint64_t)fd);
}

/*
 * The ptrace platform's install socket (CBOX_PTRACE_INSTALL_FD) sits in every guest task's
 * table, but it is the sentry's channel into the task: to the guest it is a closed fd. The guest
 * filter traps the fast-path calls that name it (platform/filter.c), /proc does not list it,
 * and every call the sentry answers on an fd takes the fd through cbox_fd_get. Handed on, the
 * socket was stat'ed as the guest's (a program listing its open fds by fstat saw one it never
 * opened: Python's test_subprocess) and could be bound to a name in the sandbox's tree (bind,
 * sys_net.c; being a connected datagram socket, it takes no message from anyone else).
 */
bool cbox_fd_reserved(struct cbox_sentry *s, int fd)
{
	return s && s->platform->ops->needs_install_fd && fd == CBOX_PTRACE_INSTALL_FD;
}

int cbox_fd_get(struct cbox_sentry *s, struct cbox_task *t, int fd)
{
	return cbox_fd_reserved(s, fd) ? -EBADF : cbox_task_getfd(t, fd);
}

struct cbox_dentry *cbox_fd_lookup(struct cbox_sentry *s, struct cbox_task *t, int fd, int *flags,
                                   int *err)
{
	if (fd < 0) {
		*err = -EBADF;
		return NULL;
	}
	int host = cbox_fd_get(s, t, fd);
	if (host < 0) {
		*err = host == -ESRCH ? -ESRCH : -EBADF;
		return NULL;
	}
	struct stat st;
	int r = fstat(host, &st);
	struct entry *e = cbox_hashmap_get_u64(t->files->map, (uint64_t)fd);
	bool same = r == 0 && e && e->dev == (uint64_t)st.st_dev && e->ino == (uint64_t)st.st_ino;
	/* The open flags are read only for an fd the sentry did not know (every fd-based call
	 * comes through here: one syscall less on the common path). */
	int live_flags = r == 0 && !same ? fcntl(host, F_GETFL) : -1;
	close(host);
	if (!same) {
		if (e)
			cbox_fd_forget(s, t, fd);
		e = r == 0 ? adopt(s, t, fd, &st, live_flags) : NULL;
		if (!e) {
			*err = -ENOENT;
			return NULL;
		}
	}
	if (flags)
		*flags = e->flags;
	return e->d;
}

void cbox_fd_each(struct cbox_fdtable *tab, void (*fn)(void *ctx, int fd, struct cbox_dentry *d),
                  void *ctx)
{
	size_t it = 0;
	uint64_t fd;
	void *v;
	while (cbox_hashmap_next(tab->map, &it, &fd, NULL, NULL, &v))
		fn(ctx, (int)fd, ((struct entry *)v)->d);
}
