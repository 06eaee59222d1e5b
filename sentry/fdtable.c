/* The shadow fd table: what the sentry installed at each guest fd (see kernel.h). */
#include <errno.h>
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
	free(t);
}

int cbox_fd_set(struct cbox_sentry *s, struct cbox_task *t, int fd, struct cbox_dentry *d,
                int flags, uint64_t dev, uint64_t ino)
{
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
struct cbox_dentry *cbox_fd_lookup(struct cbox_sentry *s, struct cbox_task *t, int fd, int *flags,
                                   int *err)
{
	if (fd < 0) {
		*err = -EBADF;
		return NULL;
	}
	int host = cbox_task_getfd(t, fd);
	if (host < 0) {
		*err = host == -ESRCH ? -ESRCH : -EBADF;
		return NULL;
	}
	struct stat st;
	int r = fstat(host, &st);
	close(host);
	struct entry *e = cbox_hashmap_get_u64(t->files->map, (uint64_t)fd);
	if (r < 0 || !e || e->dev != (uint64_t)st.st_dev || e->ino != (uint64_t)st.st_ino) {
		if (e)
			cbox_fd_forget(s, t, fd);
		*err = -ENOENT;
		return NULL;
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
