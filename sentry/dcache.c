/*
 * The sentry's dentries and their cache: references, the children a directory has looked up
 * (indexed by name past a few), the LRU of unreferenced gofer dentries and its eviction, which
 * also gives back fids when the gofer runs out of fds. The walk that fills it is in vfs.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/hashmap.h"
#include "cbox/log.h"
#include "internal.h"

struct cbox_dentry *cbox_dentry_new(struct cbox_mount *mnt, struct cbox_dentry *parent,
                                    const char *name, uint32_t mode)
{
	struct cbox_dentry *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strdup(name);
	if (!d->name) {
		free(d);
		return NULL;
	}
	d->refs = 1;
	d->mnt = mnt;
	d->mode = mode;
	d->parent = parent ? cbox_dentry_get(parent) : NULL;
	return d;
}

struct cbox_dentry *cbox_dentry_get(struct cbox_dentry *d)
{
	if (d)
		d->refs++;
	return d;
}

/*
 * A directory's cached children are a list, and past CHILD_MAP_MIN of them also a map by name:
 * du over a 5000-entry directory spent 15% of the sentry's time in strcmp along the list. The
 * list stays the truth (doubly linked through pprev, so that eviction and uncaching unlink in
 * O(1)); a map that could not grow is dropped and the list searched instead.
 */
#define CHILD_MAP_MIN 16

static void index_child(struct cbox_dentry *dir, struct cbox_dentry *c)
{
	if (dir->child_map && cbox_hashmap_put(dir->child_map, c->name, strlen(c->name), c) < 0) {
		cbox_hashmap_free(dir->child_map);
		dir->child_map = NULL;
	}
}

void cbox_vfs_cache_link(struct cbox_dentry *dir, struct cbox_dentry *d)
{
	d->sibling = dir->children;
	if (d->sibling)
		d->sibling->pprev = &d->sibling;
	dir->children = d;
	d->pprev = &dir->children;
	d->cached = true;
	dir->nchildren++;
	if (dir->child_map) {
		index_child(dir, d);
	} else if (dir->nchildren > CHILD_MAP_MIN &&
	           (dir->child_map = cbox_hashmap_new(true, NULL)) != NULL) {
		for (struct cbox_dentry *c = dir->children; c && dir->child_map; c = c->sibling)
			index_child(dir, c);
	}
}

struct cbox_dentry *cbox_vfs_cached_child(const struct cbox_dentry *dir, const char *name)
{
	if (dir->child_map)
		return cbox_hashmap_get(dir->child_map, name, strlen(name));
	for (struct cbox_dentry *c = dir->children; c; c = c->sibling)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* Take c (cached) out of dir's children. */
static void unlink_child(struct cbox_dentry *dir, struct cbox_dentry *c)
{
	*c->pprev = c->sibling;
	if (c->sibling)
		c->sibling->pprev = c->pprev;
	c->sibling = NULL;
	c->pprev = NULL;
	c->cached = false;
	dir->nchildren--;
	if (dir->child_map && cbox_hashmap_get(dir->child_map, c->name, strlen(c->name)) == c)
		cbox_hashmap_take(dir->child_map, c->name, strlen(c->name));
}

/* Free a dentry no one refers to any more (its fs data released by the caller). */
static void dentry_free(struct cbox_dentry *d)
{
	cbox_hashmap_free(d->child_map);
	free(d->name);
	free(d);
}

void cbox_vfs_uncache(struct cbox_dentry *d)
{
	if (d->cached && d->parent)
		unlink_child(d->parent, d);
}

/*
 * Gofer dentries with no references stay in their parent's child list (the cache) and in the
 * LRU, a list of them oldest first; when there are more than lru_cap (CBOX_VFS_LRU_MAX), the
 * oldest quarter of that many leaves are freed. This keeps repeated walks of /usr/lib/... off the
 * gofer without letting a `find /` pin every fid, and keeps what was just read ahead (read_ahead)
 * for the lookups it was read for. An entry that gains a reference without going through lookup (a
 * child's on its parent) stays listed until eviction reaches it and lets it go; put lists it again.
 */
void cbox_vfs_lru_del(struct cbox_sentry *s, struct cbox_dentry *d)
{
	if (!d->in_lru)
		return;
	if (d->lru_prev)
		d->lru_prev->lru_next = d->lru_next;
	else
		s->lru_head = d->lru_next;
	if (d->lru_next)
		d->lru_next->lru_prev = d->lru_prev;
	else
		s->lru_tail = d->lru_prev;
	d->lru_prev = d->lru_next = NULL;
	d->in_lru = false;
	s->lru_len--;
}

static void lru_add(struct cbox_sentry *s, struct cbox_dentry *d)
{
	cbox_vfs_lru_del(s, d);
	d->lru_prev = s->lru_tail;
	if (s->lru_tail)
		s->lru_tail->lru_next = d;
	else
		s->lru_head = d;
	s->lru_tail = d;
	d->in_lru = true;
	s->lru_len++;
}

static void dentry_destroy(struct cbox_sentry *s, struct cbox_dentry *d);

/* Free up to want of the oldest unreferenced cached leaves (their fids go back in one CLUNKN). */
static void evict(struct cbox_sentry *s, size_t want)
{
	cbox_fs_gofer_batch_clunks(s, true);
	for (size_t freed = 0; s->lru_head && freed < want;) {
		struct cbox_dentry *c = s->lru_head;
		cbox_vfs_lru_del(s, c);
		if (c->refs != 0 || c->children || c->covered_by || !c->cached || !c->parent)
			continue; /* in use again, or holding children: listed again when put */
		struct cbox_dentry *dir = c->parent;
		unlink_child(dir, c);
		c->parent = NULL; /* its reference on dir is dropped below */
		if (c->mnt && c->mnt->ops->release)
			c->mnt->ops->release(s, c);
		dentry_free(c);
		freed++;
		if (--dir->refs == 0) {
			/* dir is now an unreferenced leaf itself */
			if (dir->cached)
				lru_add(s, dir);
			else
				dentry_destroy(s, dir);
		}
	}
	cbox_fs_gofer_batch_clunks(s, false);
}

/*
 * Every cached dentry holds a fid, i.e. an fd in the gofer, whose limit may be far below what
 * CBOX_VFS_LRU_MAX needs (the sandbox's hard limit; the gofer raises its soft one to it). An EMFILE
 * from the gofer is the measure: the cache is capped at half of what it held and cut down to that,
 * and the request is made once more. A lookup or open then fails with EMFILE only when the fids
 * the guest holds itself (open files, cwds) fill the gofer's limit.
 */
bool cbox_vfs_relieve(struct cbox_sentry *s, int err)
{
	if ((err != -EMFILE && err != -ENFILE) || s->lru_len == 0)
		return false;
	s->lru_cap = s->lru_len / 2 > 16 ? s->lru_len / 2 : 16;
	cbox_debug("the gofer is out of fds: the dentry cache holds at most %zu now", s->lru_cap);
	evict(s, s->lru_len > s->lru_cap ? s->lru_len - s->lru_cap : s->lru_len);
	return true;
}

static void dentry_destroy(struct cbox_sentry *s, struct cbox_dentry *d)
{
	while (d) {
		struct cbox_dentry *parent = d->parent;
		cbox_vfs_lru_del(s, d);
		cbox_vfs_uncache(d);
		if (d->mnt && d->mnt->ops->release)
			d->mnt->ops->release(s, d);
		dentry_free(d);
		d = NULL;
		if (parent && --parent->refs == 0) {
			if (parent->cached) {
				lru_add(s, parent); /* kept by the cache, freed on eviction */
				return;
			}
			d = parent;
		}
	}
}

void cbox_dentry_put(struct cbox_sentry *s, struct cbox_dentry *d)
{
	if (!d || --d->refs > 0)
		return;
	if (d->cached) {
		lru_add(s, d);
		if (s->lru_len > s->lru_cap)
			evict(s, s->lru_cap / 4 + 1);
		return;
	}
	dentry_destroy(s, d);
}

void cbox_vfs_cache(struct cbox_sentry *s, struct cbox_dentry *dir, struct cbox_dentry *d)
{
	cbox_vfs_forget(s, dir, d->name);
	cbox_vfs_cache_link(dir, d);
}
