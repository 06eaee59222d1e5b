/*
 * cbox-run --user USER[:GROUP]: the ids the program starts with, as `docker run -u` takes them.
 * A name is looked up in the guest's own /etc/passwd or /etc/group (the rootfs's, which is the
 * host's by default), and a user's primary group comes from its passwd entry; a number needs no
 * entry, and a number without one gets group 0, as Docker gives it. As Docker (runc's
 * GetExecUser), a user with a passwd entry and no :GROUP also gets the groups whose member list
 * names it as supplementary groups; --group-add adds more, by name or number.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/cred.h"
#include "cbox_run.h"

/* s as a whole decimal id, or -1. */
static int64_t parse_id(const char *s)
{
	if (!*s || strlen(s) > 10)
		return -1;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return *end || v > UINT32_MAX ? -1 : (int64_t)v;
}

/* The rootfs's /etc/<file> for reading, or NULL (a file that cannot be read, or is not a regular
 * file inside the rootfs, has no entries): cbox_run_rootfs_fopen. */
static FILE *open_etc(const char *rootfs, const char *file)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "etc/%s", file);
	return cbox_run_rootfs_fopen(rootfs, rel);
}

/* A passwd entry's fields cbox-run uses; home is "" when it does not fit. */
struct user_entry {
	uint32_t uid, gid;
	char name[256];
	char home[PATH_MAX];
};

/* The passwd entry of name (or of uid, name NULL) in the rootfs into *e: 0, or -ENOENT. */
static int find_user(const char *rootfs, const char *name, uint32_t uid, struct user_entry *e)
{
	FILE *f = open_etc(rootfs, "passwd");
	const struct passwd *pw = NULL;
	while (f && (pw = fgetpwent(f)) != NULL &&
	       !(name ? strcmp(pw->pw_name, name) == 0 : pw->pw_uid == uid))
		;
	if (pw) {
		e->uid = pw->pw_uid;
		e->gid = pw->pw_gid;
		snprintf(e->name, sizeof(e->name), "%s", pw->pw_name);
		if (snprintf(e->home, sizeof(e->home), "%s", pw->pw_dir) >= (int)sizeof(e->home))
			e->home[0] = '\0';
	}
	if (f)
		fclose(f);
	return pw ? 0 : -ENOENT;
}

int cbox_run_user_home(const struct cbox_run_opts *o, char *home, size_t size)
{
	struct user_entry e;
	if (find_user(o->rootfs, NULL, o->uid, &e) < 0 || !e.home[0])
		return -1;
	return snprintf(home, size, "%s", e.home) < (int)size ? 0 : -1;
}

/* The gid of group name in the rootfs, or -ENOENT. */
static int find_group(const char *rootfs, const char *name, uint32_t *gid)
{
	FILE *f = open_etc(rootfs, "group");
	const struct group *gr = NULL;
	while (f && (gr = fgetgrent(f)) != NULL && strcmp(gr->gr_name, name) != 0)
		;
	if (gr)
		*gid = gr->gr_gid;
	if (f)
		fclose(f);
	return gr ? 0 : -ENOENT;
}

/* Add gid to o's supplementary groups, once. 0, or -1 (out of memory, said). */
static int add_group(struct cbox_run_opts *o, uint32_t gid)
{
	for (size_t i = 0; i < o->ngroups; i++)
		if (o->groups[i] == gid)
			return 0;
	uint32_t *g = o->ngroups < CBOX_NGROUPS_MAX
	                  ? realloc(o->groups, (o->ngroups + 1) * sizeof(*g))
	                  : NULL;
	if (!g) {
		fprintf(stderr, "cbox-run: more than %d supplementary groups\n", CBOX_NGROUPS_MAX);
		return -1;
	}
	o->groups = g;
	o->groups[o->ngroups++] = gid;
	return 0;
}

/* The groups of the rootfs's /etc/group whose member list names user. */
static int member_groups(struct cbox_run_opts *o, const char *user)
{
	FILE *f = open_etc(o->rootfs, "group");
	const struct group *gr;
	int r = 0;
	while (r == 0 && f && (gr = fgetgrent(f)) != NULL)
		for (char **m = gr->gr_mem; r == 0 && m && *m; m++)
			if (strcmp(*m, user) == 0 && gr->gr_gid < CBOX_UNMAPPED_ID)
				r = add_group(o, gr->gr_gid);
	if (f)
		fclose(f);
	return r;
}

/* --group-add: each a number or a name of the rootfs's /etc/group. */
static int added_groups(struct cbox_run_opts *o)
{
	for (size_t i = 0; i < o->n_group_add; i++) {
		const char *g = o->group_add[i];
		int64_t n = parse_id(g);
		uint32_t gid = (uint32_t)n;
		if (n < 0 && find_group(o->rootfs, g, &gid) < 0) {
			fprintf(stderr, "cbox-run: --group-add %s: no such group in %s/etc/group\n",
			        g, strcmp(o->rootfs, "/") == 0 ? "" : o->rootfs);
			return -1;
		}
		if (gid >= CBOX_UNMAPPED_ID) {
			fprintf(
			    stderr,
			    "cbox-run: --group-add %s: ids 4294967294 and 4294967295 are not ids "
			    "here\n",
			    g);
			return -1;
		}
		if (add_group(o, gid) < 0)
			return -1;
	}
	return 0;
}

int cbox_run_resolve_user(struct cbox_run_opts *o)
{
	if (!o->user)
		return added_groups(o);
	char spec[256];
	if (snprintf(spec, sizeof(spec), "%s", o->user) >= (int)sizeof(spec) || !spec[0]) {
		fprintf(stderr, "cbox-run: --user '%s': expected USER[:GROUP]\n", o->user);
		return -1;
	}
	char *group = strchr(spec, ':');
	if (group)
		*group++ = '\0';
	int64_t n = parse_id(spec);
	struct user_entry e = {.name = ""};
	if (n >= 0) {
		if (find_user(o->rootfs, NULL, (uint32_t)n, &e) < 0)
			e.uid = (uint32_t)n; /* a uid without an entry: group 0, as Docker */
	} else if (find_user(o->rootfs, spec, 0, &e) < 0) {
		fprintf(stderr, "cbox-run: --user %s: no such user in %s/etc/passwd\n", spec,
		        strcmp(o->rootfs, "/") == 0 ? "" : o->rootfs);
		return -1;
	}
	if (group) {
		int64_t g = parse_id(group);
		if (g >= 0)
			e.gid = (uint32_t)g;
		else if (find_group(o->rootfs, group, &e.gid) < 0) {
			fprintf(stderr, "cbox-run: --user %s: no such group in %s/etc/group\n",
			        o->user, strcmp(o->rootfs, "/") == 0 ? "" : o->rootfs);
			return -1;
		}
	}
	/* (uint32_t)-1 is no id, and CBOX_UNMAPPED_ID stands for the host's other users. */
	if (e.uid >= CBOX_UNMAPPED_ID || e.gid >= CBOX_UNMAPPED_ID) {
		fprintf(stderr,
		        "cbox-run: --user %s: ids 4294967294 and 4294967295 are not ids here\n",
		        o->user);
		return -1;
	}
	o->uid = e.uid;
	o->gid = e.gid;
	if (!group && e.name[0] && member_groups(o, e.name) < 0)
		return -1;
	return added_groups(o);
}
