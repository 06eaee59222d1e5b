/*
 * What the guest gave a file that its host file does not keep: its owner under one host id, and
 * its set-user-ID and set-group-ID bits.
 *
 * Owners (cbox-run, or the OCI runtime not run as root): there every guest id stands for the one
 * host id the sandbox's user namespace maps, so a chown changes no host owner (cbox_id_to_host
 * maps every guest id to that one), and neither does a node made by a guest user other than
 * root. The sentry remembers the owner the guest gave instead, by the file's host (dev, ino), for
 * the sandbox's lifetime, and shows it wherever it shows or checks the file's owner (fs_gofer.c):
 * `tar xf` as root gives its files their owners, `chown -R app:app` works, and a file a guest
 * user made is that user's. fakeroot keeps owners the same way. The host never learns them: its
 * files stay the caller's, so no file is ever given to another host user.
 *
 * Only files the sandbox's host id owns take a remembered owner; another host user's file keeps
 * showing as unmapped (CBOX_UNMAPPED_ID), which may not be chowned (no capability applies).
 *
 * Set-ID bits (every mode of the sentry): the gofer never sets them on a host file (safe_mode in
 * gofer/serve_mut.c: a file written in the box must never become a privileged program for whoever
 * runs it on the host later), so `chmod u+s`, `install -m 4755` or `tar xpf` would seem to do
 * nothing. The sentry remembers the bits instead and shows them in the file's mode, as a nosuid
 * mount keeps them: stored and shown, never honoured (the sentry's exec raises no ids, and the
 * guest's /proc/mounts says nosuid). They go as Linux clears them: on a chown of a non-directory
 * (set-group-ID only with group execute), and on a truncation by a caller without CAP_FSETID
 * (syscalls/sys_fsmut.c, vfs.c). A write through an fd the sentry does not see keeps them.
 *
 * An entry goes when its file's last name goes through the sandbox (cbox_owner_gone); a file
 * the host removes behind the sandbox's back leaves its entry, which a later file of the same
 * inode number would show: a wrong owner or mode in the guest's view and checks, never a host
 * right.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "internal.h"

/*
 * The table: open addressing with linear probing, one 32-byte slot per file and no allocation
 * per entry (a general hash map took ~190 bytes an entry: 100000 chowned files grew the sentry
 * by 19 MB). A hostile guest chowning millions of files must not grow the sentry without
 * bound: past OWNERS_MAX entries (~67 MB of slots) a chown that needs one more is ENOMEM.
 * No host device number is all ones, so two such values mark an empty and a removed slot.
 */
#define OWNERS_MAX (1u << 20)
#define EMPTY      UINT64_MAX
#define REMOVED    (UINT64_MAX - 1)

#define NO_ID UINT32_MAX /* an owner not remembered: the host's shows */

struct owner {
	uint64_t dev, ino;
	uint32_t uid, gid; /* guest ids, or NO_ID (both or neither) */
	uint32_t setid;    /* S_ISUID, S_ISGID */
};

struct cbox_owners {
	struct owner *slot;
	size_t cap;  /* a power of two, or 0 */
	size_t used; /* entries */
	size_t dead; /* removed slots */
};

static size_t hash(uint64_t dev, uint64_t ino)
{
	uint64_t x = ino ^ (dev * 0x9e3779b97f4a7c15ULL);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return (size_t)(x ^ (x >> 31));
}

/* The slot of (dev, ino), or NULL. */
static struct owner *find(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	const struct cbox_owners *t = s->owners;
	if (!t || !t->used)
		return NULL;
	for (size_t i = hash(dev, ino) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct owner *o = &t->slot[i];
		if (o->dev == EMPTY)
			return NULL;
		if (o->dev == dev && o->ino == ino)
			return o;
	}
}

/* Room for one more entry: a new table, or one rebuilt twice as large (or as large, when
 * removed slots fill it) at three quarters full. */
static int make_room(struct cbox_sentry *s)
{
	struct cbox_owners *t = s->owners;
	if (!t && !(t = s->owners = calloc(1, sizeof(*t))))
		return -ENOMEM;
	if (t->used >= OWNERS_MAX)
		return -ENOMEM;
	if (t->cap && (t->used + t->dead + 1) * 4 <= t->cap * 3)
		return 0;
	size_t cap = t->cap ? t->cap : 64;
	if ((t->used + 1) * 2 > cap)
		cap *= 2;
	struct owner *slot = malloc(cap * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		slot[i].dev = EMPTY;
	for (size_t i = 0; i < t->cap; i++) {
		const struct owner *o = &t->slot[i];
		if (o->dev == EMPTY || o->dev == REMOVED)
			continue;
		size_t j = hash(o->dev, o->ino) & (cap - 1);
		while (slot[j].dev != EMPTY)
			j = (j + 1) & (cap - 1);
		slot[j] = *o;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	t->dead = 0;
	return 0;
}

static void remove_slot(struct cbox_sentry *s, struct owner *o)
{
	o->dev = REMOVED;
	s->owners->used--;
	s->owners->dead++;
}

void cbox_owner_of(const struct cbox_sentry *s, const struct cbox_gofer_stat *g, uint32_t *uid,
                   uint32_t *gid, uint32_t *mode)
{
	*uid = cbox_id_to_guest(s, g->uid, false);
	*gid = cbox_id_to_guest(s, g->gid, true);
	const struct owner *o = find(s, g->dev, g->ino);
	if (mode)
		*mode = g->mode | (o ? o->setid : 0);
	if (!o || o->uid == NO_ID || s->cfg->all_ids)
		return;
	/* Each id only where the host's is the sandbox's own. */
	if (g->uid == s->cfg->owner_uid)
		*uid = o->uid;
	if (g->gid == s->cfg->owner_gid)
		*gid = o->gid;
}

/* Put (dev, ino)'s entry as given: an entry that keeps nothing goes. */
static int put(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid,
               uint32_t setid)
{
	if (dev >= REMOVED)
		return 0;
	struct owner *o = find(s, dev, ino);
	if (uid == NO_ID && !setid) {
		if (o)
			remove_slot(s, o);
		return 0;
	}
	if (o) {
		*o = (struct owner){dev, ino, uid, gid, setid};
		return 0;
	}
	int r = make_room(s);
	if (r < 0)
		return r;
	struct cbox_owners *t = s->owners;
	size_t i = hash(dev, ino) & (t->cap - 1);
	while (t->slot[i].dev != EMPTY && t->slot[i].dev != REMOVED)
		i = (i + 1) & (t->cap - 1);
	if (t->slot[i].dev == REMOVED)
		t->dead--;
	t->slot[i] = (struct owner){dev, ino, uid, gid, setid};
	t->used++;
	return 0;
}

int cbox_owner_set(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid)
{
	if (s->cfg->all_ids)
		return 0;
	const struct owner *o = find(s, dev, ino);
	if (uid == s->cfg->uid && gid == s->cfg->gid) /* what the host's owner shows as */
		uid = gid = NO_ID;
	return put(s, dev, ino, uid, gid, o ? o->setid : 0);
}

int cbox_owner_chown(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid)
{
	const struct owner *o = find(s, dev, ino);
	bool known = o && o->uid != NO_ID;
	if (uid == (uint32_t)-1 || uid == CBOX_UNMAPPED_ID)
		uid = known ? o->uid : s->cfg->uid;
	if (gid == (uint32_t)-1 || gid == CBOX_UNMAPPED_ID)
		gid = known ? o->gid : s->cfg->gid;
	return cbox_owner_set(s, dev, ino, uid, gid);
}

uint32_t cbox_owner_setid(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	const struct owner *o = find(s, dev, ino);
	return o ? o->setid : 0;
}

int cbox_owner_set_setid(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t setid)
{
	const struct owner *o = find(s, dev, ino);
	setid &= S_ISUID | S_ISGID;
	if (!o && !setid)
		return 0;
	return put(s, dev, ino, o ? o->uid : NO_ID, o ? o->gid : NO_ID, setid);
}

void cbox_owner_kill_setid(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t mode)
{
	uint32_t setid = cbox_owner_setid(s, dev, ino);
	uint32_t kill = S_ISUID | ((mode & S_IXGRP) ? S_ISGID : 0);
	if (setid & kill)
		cbox_owner_set_setid(s, dev, ino, setid & ~kill);
}

bool cbox_owner_known(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	return find(s, dev, ino) != NULL;
}

void cbox_owner_gone(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	struct owner *o = find(s, dev, ino);
	if (o)
		remove_slot(s, o);
}

void cbox_owners_free(struct cbox_sentry *s)
{
	if (s->owners)
		free(s->owners->slot);
	free(s->owners);
	s->owners = NULL;
}
