/*
 * File owners under one host id (cbox-run, or the OCI runtime not run as root).
 *
 * There every guest id stands for the one host id the sandbox's user namespace maps, so a
 * chown changes no host owner (cbox_id_to_host maps every guest id to that one), and neither
 * does a node made by a guest user other than root. The sentry remembers the owner the guest
 * gave instead, by the file's host (dev, ino), for the sandbox's lifetime, and shows it wherever
 * it shows or checks the file's owner (fs_gofer.c): `tar xf` as root gives its files their
 * owners, `chown -R app:app` works, and a file a guest user made is that user's. fakeroot keeps
 * owners the same way. The host never learns them: its files stay the caller's, so no file is
 * ever given to another host user.
 *
 * Only files the sandbox's host id owns take a remembered owner; another host user's file keeps
 * showing as unmapped (CBOX_UNMAPPED_ID), which may not be chowned (no capability applies).
 * An entry goes when its file's last name goes through the sandbox (cbox_owner_gone); a file
 * the host removes behind the sandbox's back leaves its entry, which a later file of the same
 * inode number would show: a wrong owner in the guest's view and checks, never a host right.
 */
#include <errno.h>
#include <stdlib.h>

#include "cbox/hashmap.h"
#include "internal.h"

/* A hostile guest chowning millions of files must not grow the sentry without bound. */
#define OWNERS_MAX (1u << 20)

struct key {
	uint64_t dev, ino;
};

struct owner {
	uint32_t uid, gid;
};

static struct owner *find(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	if (!s->owners)
		return NULL;
	struct key k = {dev, ino};
	return cbox_hashmap_get(s->owners, &k, sizeof(k));
}

void cbox_owner_of(const struct cbox_sentry *s, const struct cbox_gofer_stat *g, uint32_t *uid,
                   uint32_t *gid)
{
	*uid = cbox_id_to_guest(s, g->uid, false);
	*gid = cbox_id_to_guest(s, g->gid, true);
	const struct owner *o = s->cfg->all_ids ? NULL : find(s, g->dev, g->ino);
	if (!o)
		return;
	/* Each id only where the host's is the sandbox's own (0 to the guest). */
	if (*uid == 0)
		*uid = o->uid;
	if (*gid == 0)
		*gid = o->gid;
}

int cbox_owner_set(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid)
{
	if (s->cfg->all_ids)
		return 0;
	struct key k = {dev, ino};
	struct owner *o = find(s, dev, ino);
	if (uid == 0 && gid == 0) {
		if (o)
			free(cbox_hashmap_take(s->owners, &k, sizeof(k)));
		return 0;
	}
	if (o) {
		*o = (struct owner){uid, gid};
		return 0;
	}
	if (!s->owners && !(s->owners = cbox_hashmap_new(true, free)))
		return -ENOMEM;
	if (cbox_hashmap_size(s->owners) >= OWNERS_MAX || !(o = malloc(sizeof(*o))))
		return -ENOMEM;
	*o = (struct owner){uid, gid};
	if (cbox_hashmap_put(s->owners, &k, sizeof(k), o) < 0) {
		free(o);
		return -ENOMEM;
	}
	return 0;
}

int cbox_owner_chown(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid)
{
	const struct owner *o = find(s, dev, ino);
	if (uid == (uint32_t)-1 || uid == CBOX_UNMAPPED_ID)
		uid = o ? o->uid : 0;
	if (gid == (uint32_t)-1 || gid == CBOX_UNMAPPED_ID)
		gid = o ? o->gid : 0;
	return cbox_owner_set(s, dev, ino, uid, gid);
}

bool cbox_owner_known(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	return find(s, dev, ino) != NULL;
}

void cbox_owner_gone(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	struct key k = {dev, ino};
	if (find(s, dev, ino))
		free(cbox_hashmap_take(s->owners, &k, sizeof(k)));
}

void cbox_owners_free(struct cbox_sentry *s)
{
	cbox_hashmap_free(s->owners);
	s->owners = NULL;
}
