/*
 * The pure part of cgroups: where the hierarchies are (mountinfo + /proc/self/cgroup), the
 * conversions and the value formats. No file is touched here, so that the unit tests can feed
 * fixture strings of v1, hybrid and v2 hosts.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"

static const char *const ctl_names[CBOX_CGROUP_NCTL] = {"memory", "pids", "cpu", "freezer", NULL};

const char *cbox_cgroup_mode_name(enum cbox_cgroup_mode m)
{
	switch (m) {
	case CBOX_CGROUP_V1:
		return "v1";
	case CBOX_CGROUP_HYBRID:
		return "hybrid";
	case CBOX_CGROUP_V2:
		return "v2";
	default:
		return "none";
	}
}

void cbox_cgroup_layout_free(struct cbox_cgroup_layout *l)
{
	if (!l)
		return;
	for (int i = 0; i < CBOX_CGROUP_NCTL; i++) {
		free(l->mount[i]);
		free(l->own[i]);
	}
	free(l);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. In place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* True when the comma-separated list holds the token. */
static bool has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, tok, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

struct mount_roots {
	char *root[CBOX_CGROUP_NCTL];
};

/*
 * One mountinfo line (modified in place): "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] -
 * FSTYPE SOURCE SUPER". 1 with *m filled for a cgroup or cgroup2 mount (ROOT and POINT
 * unescaped), 0 for another file system, -1 for a line without those fields.
 */
static int mount_line(char *line, struct cbox_cgroup_mount *m)
{
	char *f[6], *save = NULL, *tok;
	int n = 0;
	for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
		f[n++] = tok;
	/* Optional fields run up to the lone "-"; then fstype, source, super options. */
	while (tok && strcmp(tok, "-") != 0)
		tok = strtok_r(NULL, " ", &save);
	char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
	char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
	char *super = source ? strtok_r(NULL, " ", &save) : NULL;
	if (n < 6 || !super)
		return -1;
	bool v1 = strcmp(fstype, "cgroup") == 0, v2 = strcmp(fstype, "cgroup2") == 0;
	if (!v1 && !v2)
		return 0;
	unescape(f[3]);
	unescape(f[4]);
	*m = (struct cbox_cgroup_mount){.v2 = v2, .root = f[3], .point = f[4], .super = super};
	return 1;
}

int cbox_cgroup_mounts_each(const char *mountinfo, bool strict,
                            int (*fn)(const struct cbox_cgroup_mount *m, void *arg), void *arg,
                            struct cbox_err **err)
{
	CBOX_AUTOFREE char *copy = strdup(mountinfo);
	if (!copy)
		return cbox_err_set(err, ENOMEM, "mountinfo");
	unsigned lineno = 0;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct cbox_cgroup_mount m;
		int k = mount_line(line, &m);
		lineno++;
		if (k < 0 && strict)
			return cbox_err_set(err, EINVAL, "mountinfo line %u: expected 10 fields",
			                    lineno);
		int r = k > 0 ? fn(&m, arg) : 0;
		if (r < 0)
			return r;
	}
	return 0;
}

struct layout_walk {
	struct cbox_cgroup_layout *l;
	struct mount_roots *roots;
	struct cbox_err **err;
};

/* Record a cgroup/cgroup2 mount in the layout. */
static int layout_mount(const struct cbox_cgroup_mount *m, void *arg)
{
	struct layout_walk *w = arg;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		bool match = m->v2 ? c == CBOX_CGROUP_UNIFIED
		                   : ctl_names[c] && has_token(m->super, ctl_names[c]);
		/* The first mount of a hierarchy wins: later ones are bind mounts of it. */
		if (!match || w->l->mount[c])
			continue;
		w->l->mount[c] = strdup(m->point);
		w->roots->root[c] = strdup(m->root);
		if (!w->l->mount[c] || !w->roots->root[c])
			return cbox_err_set(w->err, ENOMEM, "mountinfo");
	}
	return 0;
}

char *cbox_cgroup_below_root(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (strcmp(root, "/") != 0 && strncmp(path, root, n) == 0 &&
	    (path[n] == '/' || path[n] == '\0'))
		path += n;
	return strdup(path[0] ? path : "/");
}

/* One /proc/self/cgroup line "ID:controllers:path" (modified in place). */
static int parse_self_line(char *line, unsigned lineno, struct cbox_cgroup_layout *l,
                           const struct mount_roots *roots, struct cbox_err **err)
{
	char *c1 = strchr(line, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || c2[1] != '/')
		return cbox_err_set(err, EINVAL,
		                    "/proc/self/cgroup line %u: expected ID:LIST:/PATH", lineno);
	*c1 = '\0';
	*c2 = '\0';
	const char *ctls = c1 + 1, *path = c2 + 1;
	/* Hierarchy 0 with no controller list is the cgroup2 one. */
	bool unified = strcmp(line, "0") == 0 && !*ctls;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		bool match = c == CBOX_CGROUP_UNIFIED
		                 ? unified
		                 : ctl_names[c] && has_token(ctls, ctl_names[c]);
		if (!match || !l->mount[c] || l->own[c])
			continue;
		if (!(l->own[c] = cbox_cgroup_below_root(path, roots->root[c])))
			return cbox_err_set(err, ENOMEM, "/proc/self/cgroup");
	}
	return 0;
}

/* Each line of /proc/self/cgroup's text, numbered from 1. */
static int self_lines(const char *text, struct cbox_cgroup_layout *l,
                      const struct mount_roots *roots, struct cbox_err **err)
{
	CBOX_AUTOFREE char *copy = strdup(text);
	if (!copy)
		return cbox_err_set(err, ENOMEM, "cgroup layout");
	unsigned lineno = 0;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (parse_self_line(line, ++lineno, l, roots, err) < 0)
			return -1;
	return 0;
}

int cbox_cgroup_layout_parse(const char *mountinfo, const char *self_cgroup,
                             struct cbox_cgroup_layout **out, struct cbox_err **err)
{
	struct mount_roots roots = {0};
	struct cbox_cgroup_layout *l = calloc(1, sizeof(*l));
	int r = l ? 0 : cbox_err_set(err, ENOMEM, "cgroup layout");
	struct layout_walk w = {l, &roots, err};
	if (r == 0)
		r = cbox_cgroup_mounts_each(mountinfo, true, layout_mount, &w, err);
	if (r == 0)
		r = self_lines(self_cgroup, l, &roots, err);
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++)
		free(roots.root[c]);
	if (r < 0) {
		cbox_cgroup_layout_free(l);
		return r;
	}
	bool any_v1 = false;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		if (l->mount[c] && !l->own[c] && !(l->own[c] = strdup("/"))) {
			cbox_cgroup_layout_free(l);
			return cbox_err_set(err, ENOMEM, "cgroup layout");
		}
		any_v1 |= c != CBOX_CGROUP_UNIFIED && l->mount[c];
	}
	bool v2 = l->mount[CBOX_CGROUP_UNIFIED] != NULL;
	l->mode = any_v1 ? (v2 ? CBOX_CGROUP_HYBRID : CBOX_CGROUP_V1)
	                 : (v2 ? CBOX_CGROUP_V2 : CBOX_CGROUP_NONE);
	*out = l;
	return 0;
}

uint64_t cbox_cgroup_shares_to_weight(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	return 1 + ((shares - 2) * 9999) / 262142;
}

int cbox_cgroup_cpus_to_quota(double cpus, uint64_t period, int64_t *quota)
{
	if (period == 0)
		period = 100000;
	if (!isfinite(cpus) || cpus <= 0 || cpus > 1024)
		return -1;
	double q = cpus * (double)period;
	if (q < 1000)
		return -1;
	*quota = (int64_t)(q + 0.5); /* q >= 1000: rounds half up, as llround; no libm */
	return 0;
}

int cbox_cgroup_parse_size(const char *s, int64_t *bytes)
{
	const char *p = s;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return -1;
	if (*p == '.') {
		const char *frac = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == frac)
			return -1;
	}
	double v = strtod(s, NULL);
	static const char units[] = "bkmgtp";
	double mult = 1;
	if (*p) {
		const char *u = strchr(units, tolower((unsigned char)*p));
		if (!u)
			return -1;
		mult = ldexp(1, 10 * (int)(u - units));
		p++;
		/* "64mib" and "64mb" are docker's spellings of 64m. */
		if (u != units && tolower((unsigned char)*p) == 'i')
			p++;
		if (u != units && tolower((unsigned char)*p) == 'b')
			p++;
	}
	double b = v * mult;
	if (*p || !(b >= 1) || b >= 9.2e18)
		return -1;
	*bytes = (int64_t)b;
	return 0;
}

void cbox_cgroup_format_size(int64_t bytes, char *buf, size_t n)
{
	static const char *const names[] = {"KiB", "MiB", "GiB", "TiB"};
	if (bytes < 0) {
		snprintf(buf, n, "unlimited");
		return;
	}
	int u = -1;
	while (u < 3 && bytes >= (int64_t)1 << (10 * (u + 2)))
		u++;
	if (u < 0) {
		snprintf(buf, n, "%" PRId64 " bytes", bytes);
		return;
	}
	int64_t unit = (int64_t)1 << (10 * (u + 1));
	if (bytes % unit == 0) {
		snprintf(buf, n, "%" PRId64 " %s", bytes / unit, names[u]);
		return;
	}
	char num[64];
	snprintf(num, sizeof(num), "%.2f", (double)bytes / (double)unit);
	char *end = num + strlen(num) - 1;
	while (*end == '0')
		*end-- = '\0';
	if (*end == '.')
		*end = '\0';
	snprintf(buf, n, "%s %s", num, names[u]);
}

int cbox_cgroup_read_key(const char *text, const char *key, uint64_t *out)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, n) != 0 || p[n] != ' ')
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p + n + 1, &end, 10);
		if (errno || end == p + n + 1 || (*end && *end != '\n'))
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

/* Append "/comp" or "comp" to out, refusing "." and "..": a sandbox's cgroup stays inside the
 * hierarchy, whatever config.json says. */
static int append_components(const char *path, char *out, size_t n, size_t *used,
                             struct cbox_err **err)
{
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if (len == 0)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return cbox_err_set(err, EINVAL,
			                    "cgroup path %s: '.' and '..' are not allowed", path);
		int w = snprintf(out + *used, n - *used, "%s%.*s",
		                 *used && out[*used - 1] != '/' ? "/" : "", (int)len, p);
		if (w < 0 || (size_t)w >= n - *used)
			return cbox_err_set(err, ENAMETOOLONG, "cgroup path %s", path);
		*used += (size_t)w;
		p += len;
	}
	return 0;
}

int cbox_cgroup_resolve_path(const char *cgroups_path, const char *id, char *out, size_t n,
                             struct cbox_err **err)
{
	char tmp[4096];
	size_t used = 0;
	if (n < 2)
		return cbox_err_set(err, ENAMETOOLONG, "cgroup path");
	out[0] = '\0';
	if (!cgroups_path || !*cgroups_path) {
		if (!id || !*id)
			return cbox_err_set(err, EINVAL, "cgroup path: no container id");
		snprintf(tmp, sizeof(tmp), "cbox/%s", id);
		cgroups_path = tmp;
	} else if (cgroups_path[0] != '/' && strchr(cgroups_path, ':')) {
		/* systemd's "slice:prefix:name"; cbox has no systemd driver, so the cgroupfs
		 * path systemd would have made is used. */
		const char *c1 = strchr(cgroups_path, ':'), *c2 = strchr(c1 + 1, ':');
		if (!c2 || strchr(c2 + 1, ':') || !c2[1])
			return cbox_err_set(err, EINVAL,
			                    "cgroup path %s: expected slice:prefix:name",
			                    cgroups_path);
		int sl = (int)(c1 - cgroups_path), pl = (int)(c2 - c1 - 1);
		int w =
		    snprintf(tmp, sizeof(tmp), "/%.*s/%.*s%s%s.scope", sl ? sl : 12,
		             sl ? cgroups_path : "system.slice", pl, c1 + 1, pl ? "-" : "", c2 + 1);
		if (w < 0 || (size_t)w >= sizeof(tmp))
			return cbox_err_set(err, ENAMETOOLONG, "cgroup path %s", cgroups_path);
		cgroups_path = tmp;
	}
	if (cgroups_path[0] == '/')
		out[used++] = '/', out[used] = '\0';
	if (append_components(cgroups_path, out, n, &used, err) < 0)
		return -1;
	if (strcmp(out, "/") == 0 || !*out)
		return cbox_err_set(err, EINVAL, "cgroup path %s: names no cgroup below the root",
		                    cgroups_path);
	return 0;
}
