/*
 * The gofer's batched requests: WALKN (the names of a path), WALKDIR (a directory's entries in
 * its own listing order) and CLUNKN (many fids released), each one round trip where the single
 * requests of serve.c would take one per name or fid, and each made of exactly what those do.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "internal.h"

/* Append the entry walked as fid to a WALKDIR reply's records; a record that does not fit gives
 * its fid back. */
static int put_walked(struct cbox_gofer_server *s, char *buf, size_t size, size_t *len,
                      uint32_t fid, const struct cbox_gofer_stat *st, const char *name)
{
	struct cbox_gofer_walked w = {.fid = fid, .stat = *st};
	int rc = cbox_gofer_put_dirent(buf, size, len, &w, name, strlen(name));
	if (rc < 0)
		cbox_gofer_clunk_one(s, fid);
	return rc;
}

/*
 * WALKDIR: the name, then up to count - 1 of the entries that follow it in the directory's own
 * listing, each walked exactly as a WALK of it (O_NOFOLLOW, a fid each). A tool that reads a
 * directory and then looks at each entry in that order (du, find, tar, rm -r) would otherwise
 * cost a round trip per entry. An entry that cannot be walked any more (removed since) is left
 * out; the name asked for fails as its WALK would (the reply's error), and is walked alone when
 * the listing does not have it (made after the read). Running out of fids or of reply space
 * just ends the batch.
 *
 * The name is found by reading the listing: from where the last WALKDIR of the same directory
 * stopped when the name is the entry there (the next batch of a tool going through it in
 * order, so a directory of n entries costs O(n) reads, not O(n^2)), else from the start. A
 * stale position costs nothing but that second read: only a name that is there is believed.
 *
 * With CBOX_GOFER_WALKDIR_WRAP the listing is read once more from its start after its end, up
 * to the name: a tool that looks at a directory's names in an order of its own (git, in its
 * index's sorted order) gets the whole directory in one batch whatever name it missed first.
 * The second pass stops at the name, so no entry is walked twice.
 */
int cbox_gofer_do_walkdir(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, char *buf, size_t size)
{
	struct cbox_gofer_node *dir;
	char first[CBOX_GOFER_NAME_MAX + 1];
	int rc = cbox_gofer_lookup_dir(s, q->fid, &dir);
	if (rc < 0)
		return rc;
	cbox_gofer_cstr(first, q->name, q->name_len);
	uint32_t fid;
	struct cbox_gofer_stat st;
	rc = cbox_gofer_walk_name(s, dir, first, &fid, &st);
	if (rc < 0)
		return rc;
	size_t len = 0;
	rc = put_walked(s, buf, size, &len, fid, &st, first);
	if (rc < 0)
		return rc;
	r->nwalked = 1;
	r->walked = buf;
	r->walked_len = len;
	uint32_t count = q->flags & ~CBOX_GOFER_WALKDIR_WRAP;
	bool wrap = (q->flags & CBOX_GOFER_WALKDIR_WRAP) != 0, wrapped = false;
	if (count < 2)
		return 0;
	/* The listing through a descriptor of its own (the fid's is O_PATH), kept for the next
	 * batch. */
	bool resumed =
	    s->wd_node == dir && s->wd_fd >= 0 && lseek(s->wd_fd, (off_t)s->wd_next, SEEK_SET) >= 0;
	if (!resumed) {
		if (s->wd_fd >= 0)
			close(s->wd_fd);
		cbox_gofer_node_unref(s->wd_node);
		s->wd_node = NULL;
		s->wd_fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
		if (s->wd_fd < 0)
			return 0;
		s->wd_node = dir;
		dir->refs++;
	}
	/* resumed: the first name read must be the one asked for, else (or at the end of the
	 * listing already) the listing is read again from its start. */
	bool found = false;
	char ents[8192];
	while (r->nwalked < count) {
		long got = syscall(SYS_getdents64, s->wd_fd, ents, sizeof(ents));
		if (got <= 0 && resumed) {
			resumed = false;
			if (got < 0 || lseek(s->wd_fd, 0, SEEK_SET) < 0)
				return 0;
			continue;
		}
		if (got == 0 && wrap && found && !wrapped) {
			wrapped = true;
			if (lseek(s->wd_fd, 0, SEEK_SET) < 0)
				return 0;
			continue;
		}
		if (got <= 0)
			break;
		for (long off = 0; off < got && r->nwalked < count;) {
			struct dirent64 *e = (struct dirent64 *)(ents + off);
			off += e->d_reclen;
			s->wd_next = e->d_off;
			const char *name = e->d_name;
			if (cbox_gofer_check_name(name, strlen(name)) < 0)
				continue; /* "." and ".." */
			if (resumed) {
				resumed = false;
				if (strcmp(name, first) != 0) {
					/* Not where the last batch stopped. */
					if (lseek(s->wd_fd, 0, SEEK_SET) < 0)
						return 0;
					break;
				}
			}
			if (!found) {
				found = strcmp(name, first) == 0;
				continue;
			}
			if (wrapped && strcmp(name, first) == 0)
				return 0; /* round to the name again: that is the whole listing */
			rc = cbox_gofer_walk_name(s, dir, name, &fid, &st);
			if (rc == -ENOENT || rc == -EACCES || rc == -ENOTDIR)
				continue; /* gone since the listing, or not ours to see */
			if (rc < 0 || put_walked(s, buf, size, &len, fid, &st, name) < 0)
				return 0; /* out of fids or space: what is there is the answer */
			r->nwalked++;
			r->walked_len = len;
		}
	}
	return 0;
}

/*
 * WALKN: the names of the path one by one, each exactly as a WALK of it (O_NOFOLLOW, a fid per
 * name), into buf (at least CBOX_GOFER_WALKN_MAX entries). The walk goes on only from a
 * directory: after a symlink or a file the sentry decides what comes next (it resolves symlinks
 * within the guest's root; a file in the middle of a path is its ENOTDIR). A failing first name
 * is the reply's error; a later one ends the walk with what was walked and that name's errno.
 */
int cbox_gofer_do_walkn(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r, char *buf, size_t size)
{
	if (size < CBOX_GOFER_WALKN_MAX * sizeof(struct cbox_gofer_walked))
		return -EIO;
	uint32_t dir = q->fid, n = 0;
	const char *p = q->name2, *end = q->name2 + q->name2_len;
	while (p < end) {
		const char *e = memchr(p, '/', (size_t)(end - p));
		if (!e)
			e = end;
		struct cbox_gofer_node *d;
		char name[CBOX_GOFER_NAME_MAX + 1];
		struct cbox_gofer_reply got = {0};
		int rc = cbox_gofer_lookup_dir(s, dir, &d);
		if (rc == 0) {
			cbox_gofer_cstr(name, p, (size_t)(e - p));
			rc = cbox_gofer_walk_name(s, d, name, &got.fid, &got.stat);
		}
		if (rc < 0) {
			if (n == 0)
				return rc;
			r->walk_error = -rc;
			break;
		}
		struct cbox_gofer_walked w = {.fid = got.fid, .stat = got.stat};
		memcpy(buf + n * sizeof(w), &w, sizeof(w));
		n++;
		if (!S_ISDIR(got.stat.mode))
			break;
		dir = got.fid;
		p = e + 1;
	}
	r->nwalked = n;
	r->walked = buf;
	return 0;
}

/* CLUNKN: each fid as a CLUNK of it; one that fails does not stop the others. */
int cbox_gofer_do_clunkn(struct cbox_gofer_server *s, const struct cbox_gofer_req *q)
{
	int first = 0;
	for (size_t i = 0; i < q->value_len; i++) {
		int rc = cbox_gofer_clunk_one(s, cbox_gofer_req_fid(q, i));
		if (rc < 0 && first == 0)
			first = rc;
	}
	return first;
}
