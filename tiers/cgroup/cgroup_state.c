/*
 * A sandbox's cgroup recorded in a file of the runtime's state directory, so that `cbox delete`
 * (another process, maybe after the sentry or the init was killed -9) removes what `cbox create`
 * made. Format, one directory a line after a header:
 *   cbox-cgroup 1 v1|v2
 *   <hierarchy index> <levels created> <absolute path>
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "internal.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cbox_cgroup_save(const struct cbox_cgroup *cg, const char *file, struct cbox_err **err)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	FILE *f = fopen(tmp, "wxe");
	if (!f && errno == EEXIST && unlink(tmp) == 0)
		f = fopen(tmp, "wxe");
	if (!f)
		return cbox_err_set(err, errno, "create %s", tmp);
	fprintf(f, "cbox-cgroup 1 %s\n", cg->v2 ? "v2" : "v1");
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++)
		if (cg->d[c].path)
			fprintf(f, "%d %d %s\n", c, cg->d[c].created, cg->d[c].path);
	if (fflush(f) != 0 || ferror(f)) {
		int e = errno;
		fclose(f);
		unlink(tmp);
		return cbox_err_set(err, e, "write %s", tmp);
	}
	fclose(f);
	if (rename(tmp, file) < 0) {
		int e = errno;
		unlink(tmp);
		return cbox_err_set(err, e, "rename %s", tmp);
	}
	return 0;
}

/*
 * True when path, or its nearest existing ancestor when it is already gone, is on a cgroup
 * file system. A state file is the runtime's own, but `cbox delete` removes what it names: a
 * corrupted or planted one must not make it rmdir directories elsewhere.
 */
static bool on_cgroupfs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		struct statfs st;
		if (statfs(p, &st) == 0)
			return st.f_type == CGROUP_SUPER_MAGIC || st.f_type == CGROUP2_SUPER_MAGIC;
		char *slash = strrchr(p, '/');
		if (errno != ENOENT || !slash || slash == p)
			return false;
		*slash = '\0';
	}
}

static int parse_line(struct cbox_cgroup *cg, char *line, const char *file, struct cbox_err **err)
{
	char *end;
	long c = strtol(line, &end, 10);
	if (end == line || *end != ' ' || c < 0 || c >= CBOX_CGROUP_NCTL || cg->d[c].path)
		return cbox_err_set(err, EINVAL, "%s: bad hierarchy in '%s'", file, line);
	char *p = end + 1;
	long created = strtol(p, &end, 10);
	if (end == p || *end != ' ' || created < 0 || created > 64 || end[1] != '/')
		return cbox_err_set(err, EINVAL, "%s: bad line '%s'", file, line);
	if (strstr(end + 1, "/../") || !on_cgroupfs(end + 1))
		return cbox_err_set(err, EINVAL, "%s: %s is not a cgroup directory", file, end + 1);
	if (!(cg->d[c].path = strdup(end + 1)))
		return cbox_err_set(err, ENOMEM, "%s", file);
	cg->d[c].created = (int)created;
	return 0;
}

int cbox_cgroup_load(const char *file, struct cbox_cgroup **out, struct cbox_err **err)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return cbox_err_set(err, errno, "open %s", file);
	CBOX_AUTO(cbox_cgroup) *cg = calloc(1, sizeof(*cg));
	char line[PATH_MAX + 64];
	int r = cg ? 0 : cbox_err_set(err, ENOMEM, "%s", file);
	if (r == 0 && (!fgets(line, sizeof(line), f) || strncmp(line, "cbox-cgroup 1 v", 15) != 0 ||
	               (line[15] != '1' && line[15] != '2')))
		r = cbox_err_set(err, EINVAL, "%s: not a cbox cgroup record", file);
	if (r == 0)
		cg->v2 = line[15] == '2';
	while (r == 0 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		r = parse_line(cg, line, file, err);
	}
	fclose(f);
	if (r < 0)
		return r;
	*out = cbox_steal_ptr(&cg);
	return 0;
}
