/*
 * The per-target results: a map from case name to its latest outcome, stored as a TSV
 * (case<TAB>syscall<TAB>status<TAB>message, sorted by case name, messages escaped) so that a
 * regenerated file gives no diff when nothing changed, and merged on write so that an --only
 * re-run updates just the cases it ran.
 */
#include "compat.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void result_free_void(void *p)
{
	cbox_compat_result_free(p);
}

struct cbox_compat_results *cbox_compat_results_new(void)
{
	struct cbox_compat_results *rs = calloc(1, sizeof(*rs));
	if (rs == NULL)
		return NULL;
	rs->map = cbox_hashmap_new(true, result_free_void);
	if (rs->map == NULL) {
		free(rs);
		return NULL;
	}
	return rs;
}

void cbox_compat_results_free(struct cbox_compat_results *rs)
{
	if (rs == NULL)
		return;
	cbox_hashmap_free(rs->map);
	free(rs);
}

int cbox_compat_results_put(struct cbox_compat_results *rs, struct cbox_compat_result *r)
{
	if (cbox_hashmap_put(rs->map, r->name, strlen(r->name), r) < 0) {
		cbox_compat_result_free(r);
		return -ENOMEM;
	}
	return 0;
}

struct cbox_compat_result *cbox_compat_results_get(const struct cbox_compat_results *rs,
                                                   const char *name)
{
	return cbox_hashmap_get(rs->map, name, strlen(name));
}

static int by_name(const void *a, const void *b)
{
	const struct cbox_compat_result *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

struct cbox_compat_result **cbox_compat_results_sorted(const struct cbox_compat_results *rs,
                                                       size_t *n)
{
	size_t count = cbox_hashmap_size(rs->map), it = 0, i = 0;
	void *v;
	*n = 0;
	if (count == 0)
		return NULL;
	struct cbox_compat_result **arr = calloc(count, sizeof(*arr));
	if (arr == NULL) {
		*n = (size_t)-1;
		return NULL;
	}
	while (i < count && cbox_hashmap_next(rs->map, &it, NULL, NULL, NULL, &v))
		arr[i++] = v;
	qsort(arr, i, sizeof(*arr), by_name);
	*n = i;
	return arr;
}

/* Parse one TSV line into a result; NULL with *why set when malformed or on ENOMEM. */
static struct cbox_compat_result *tsv_line(const char *line, size_t n, const char **why)
{
	const char *f[4];
	size_t flen[4];
	const char *p = line, *end = line + n;
	for (int i = 0; i < 4; i++) {
		const char *tab = i < 3 ? memchr(p, '\t', (size_t)(end - p)) : NULL;
		if (i < 3 && tab == NULL) {
			*why = "expected 4 tab-separated fields";
			return NULL;
		}
		f[i] = p;
		flen[i] = (size_t)((tab ? tab : end) - p);
		p = tab ? tab + 1 : end;
	}
	int st = cbox_compat_status_parse(f[2], flen[2]);
	if (flen[0] == 0 || flen[1] == 0 || st < 0 || !islower((unsigned char)f[2][0])) {
		*why = "empty name or syscall, or unknown status";
		return NULL;
	}
	CBOX_AUTOFREE char *name = strndup(f[0], flen[0]);
	CBOX_AUTOFREE char *sys = strndup(f[1], flen[1]);
	CBOX_AUTOFREE char *msg = cbox_compat_tsv_unescape(f[3], flen[3]);
	*why = "out of memory";
	if (name == NULL || sys == NULL || msg == NULL)
		return NULL;
	return cbox_compat_result_new(name, sys, st, msg);
}

int cbox_compat_results_load(struct cbox_compat_results *rs, const char *path, FILE *warn,
                             struct cbox_err **err)
{
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return errno == ENOENT ? 0 : cbox_err_set(err, errno, "open results %s", path);
	CBOX_AUTOFREE char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int count = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			n--;
		if (n == 0)
			continue;
		const char *why = NULL;
		struct cbox_compat_result *r = tsv_line(line, (size_t)n, &why);
		if (r == NULL) {
			if (warn)
				fprintf(warn, "cbox-compat: %s:%zu: %s; line ignored\n", path,
				        lineno, why);
			continue;
		}
		if (cbox_compat_results_put(rs, r) < 0) {
			fclose(f);
			return cbox_err_set(err, ENOMEM, "load results %s", path);
		}
		count++;
	}
	int read_err = ferror(f) ? errno : 0;
	fclose(f);
	if (read_err)
		return cbox_err_set(err, read_err, "read results %s", path);
	return count;
}

static int write_rows(FILE *f, struct cbox_compat_result **rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CBOX_AUTOFREE char *name = cbox_compat_tsv_escape(rows[i]->name);
		CBOX_AUTOFREE char *sys = cbox_compat_tsv_escape(rows[i]->syscall);
		CBOX_AUTOFREE char *msg = cbox_compat_tsv_escape(rows[i]->msg);
		if (name == NULL || sys == NULL || msg == NULL)
			return -ENOMEM;
		if (fprintf(f, "%s\t%s\t%s\t%s\n", name, sys,
		            cbox_compat_status_name(rows[i]->status), msg) < 0)
			return -EIO;
	}
	return 0;
}

int cbox_compat_results_save(const struct cbox_compat_results *rs, const char *path,
                             struct cbox_err **err)
{
	size_t n;
	CBOX_AUTOFREE struct cbox_compat_result **rows = cbox_compat_results_sorted(rs, &n);
	if (n == (size_t)-1)
		return cbox_err_set(err, ENOMEM, "sort results for %s", path);
	CBOX_AUTOFREE char *tmp = NULL;
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return cbox_err_set(err, ENOMEM, "write results %s", path);
	FILE *f = fopen(tmp, "we");
	if (f == NULL)
		return cbox_err_set(err, errno, "create %s", tmp);
	int r = write_rows(f, rows, n);
	int saved = errno;
	if (fclose(f) != 0 && r == 0) {
		r = -EIO;
		saved = errno;
	}
	if (r < 0) {
		unlink(tmp);
		return cbox_err_set(err, r == -ENOMEM ? ENOMEM : saved, "write %s", tmp);
	}
	if (rename(tmp, path) < 0) {
		saved = errno;
		unlink(tmp);
		return cbox_err_set(err, saved, "rename %s to %s", tmp, path);
	}
	return 0;
}

int cbox_compat_results_merge(const char *path, const struct cbox_compat_results *fresh,
                              struct cbox_err **err)
{
	CBOX_AUTO(cbox_compat_results) *all = cbox_compat_results_new();
	if (all == NULL)
		return cbox_err_set(err, ENOMEM, "merge results %s", path);
	if (cbox_compat_results_load(all, path, stderr, err) < 0)
		return cbox_err_wrap(err, "merge results");
	size_t it = 0;
	void *v;
	while (cbox_hashmap_next(fresh->map, &it, NULL, NULL, NULL, &v)) {
		const struct cbox_compat_result *r = v;
		struct cbox_compat_result *copy =
		    cbox_compat_result_new(r->name, r->syscall, r->status, r->msg);
		if (copy == NULL || cbox_compat_results_put(all, copy) < 0)
			return cbox_err_set(err, ENOMEM, "merge results %s", path);
	}
	return cbox_compat_results_save(all, path, err);
}
