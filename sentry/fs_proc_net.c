/*
 * /proc/<pid>/net/unix: the AF_UNIX sockets of the sandbox's network namespace, as Linux lists
 * them, but only those a guest task holds an fd of.
 *
 * Security: the namespace holds more than the guest's sockets. The sentry's own (its end of each
 * task's start-up socket, the `cbox exec` spawner's, the ptrace platform's install socket, which
 * every guest task holds under a number its /proc/<pid>/fd does not show) are the sandbox's
 * machinery, and a shared namespace (a Kubernetes pod's) holds other containers' sockets and
 * their paths. So the host's list is read, and a line is kept only when a guest task's fd names
 * its inode, as /proc/<pid>/fd shows it (lsof -U and ss -xp match the two). A socket only in
 * flight in an SCM_RIGHTS message is left out with them: no guest fd names it yet.
 *
 * The rest is the host's line: paths are the guest's own strings (the gofer binds a guest's
 * socket with the guest's path, relative to its cwd: syscalls/sys_net.c), abstract names as
 * Linux shows them ('@' for each NUL). Num, a kernel address, reads as Linux shows it to a reader
 * without CAP_SYSLOG under kptr_restrict: zeros.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_proc_internal.h"

struct held {
	struct cbox_sentry *s;
	uint64_t *ino;
	size_t n, cap;
	const struct cbox_fdtable **seen; /* tables already read (threads and CLONE_FILES share) */
	size_t nseen, capseen;
	int err;
};

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

static bool seen_before(struct held *h, const struct cbox_fdtable *files)
{
	if (!files)
		return false;
	for (size_t i = 0; i < h->nseen; i++)
		if (h->seen[i] == files)
			return true;
	if (!grow((void **)&h->seen, &h->capseen, h->nseen, sizeof(*h->seen))) {
		h->err = -ENOMEM;
		return true;
	}
	h->seen[h->nseen++] = files;
	return false;
}

/* The socket inodes of the task's fds (cbox_task_each: false stops on an error). */
static bool collect(struct cbox_task *t, void *ctx)
{
	struct held *h = ctx;
	if (seen_before(h, t->files))
		return h->err == 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", t->tid);
	DIR *d = opendir(path);
	if (!d)
		return true; /* (gone meanwhile) */
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || cbox_fd_reserved(h->s, (int)fd))
			continue;
		char link[64];
		ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		unsigned long long ino;
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1)
			continue;
		if (!grow((void **)&h->ino, &h->cap, h->n, sizeof(*h->ino))) {
			h->err = -ENOMEM;
			break;
		}
		h->ino[h->n++] = ino;
	}
	closedir(d);
	return h->err == 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* One line of the host's list, kept (Num zeroed) when a guest fd holds its socket. */
static void filter_line(struct cbox_proc_buf *b, const char *line, size_t len, const struct held *h)
{
	const char *colon = memchr(line, ':', len);
	unsigned rc, proto, flags, type, st;
	unsigned long long ino;
	if (!colon ||
	    sscanf(colon + 1, "%x %x %x %x %x %llu", &rc, &proto, &flags, &type, &st, &ino) != 6)
		return;
	uint64_t key = ino;
	if (!h->n || !bsearch(&key, h->ino, h->n, sizeof(*h->ino), by_value))
		return;
	for (const char *p = line; p < colon; p++)
		cbox_proc_append(b, "0", 1);
	cbox_proc_append(b, colon, len - (size_t)(colon - line));
	cbox_proc_append(b, "\n", 1);
}

int cbox_proc_gen_net_unix(struct cbox_sentry *s, struct cbox_task *pt, struct cbox_proc_buf *b)
{
	struct cbox_proc_buf host = {0};
	char what[64];
	snprintf(what, sizeof(what), "%d/net/unix", pt->tid);
	int r = cbox_proc_append_host(&host, what);
	if (r == 0)
		r = host.err;
	struct held h = {.s = s};
	if (r == 0) {
		cbox_task_each(s, collect, &h);
		r = h.err;
	}
	if (r == 0 && h.n)
		qsort(h.ino, h.n, sizeof(*h.ino), by_value);
	const char *p = host.data, *end = host.data ? host.data + host.len : NULL;
	for (bool header = true; r == 0 && p && p < end; header = false) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (header) {
			cbox_proc_append(b, p, len);
			cbox_proc_append(b, "\n", 1);
		} else {
			filter_line(b, p, len, &h);
		}
		p += len + 1;
	}
	free(h.ino);
	free(h.seen);
	free(host.data);
	return r;
}
