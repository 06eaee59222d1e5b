/*
 * The targets and the shared loading code of the cbox-compat subcommands (see cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"

const struct cbox_compat_target cbox_compat_targets[] = {
    {"native", NULL, false, false},
    {"sentry-seccomp", "seccomp", false, false},
    {"sentry-ptrace", "ptrace", false, false},
    {"sentry-seccomp-strict", "seccomp", true, false},
    {"sentry-ptrace-strict", "ptrace", true, false},
    {"ns", NULL, false, true},
    {"os", NULL, false, true},
    {"wasm", NULL, false, true},
    {"microvm", NULL, false, true},
};
const size_t cbox_compat_ntargets = CBOX_ARRAY_SIZE(cbox_compat_targets);

const struct cbox_compat_target *cbox_compat_target_find(const char *name)
{
	for (size_t i = 0; i < cbox_compat_ntargets; i++)
		if (strcmp(cbox_compat_targets[i].name, name) == 0)
			return &cbox_compat_targets[i];
	return NULL;
}

static char *beside(const char *env, const char *dir, const char *name)
{
	const char *v = getenv(env);
	if (v && *v)
		return strdup(v);
	char *s = NULL;
	return asprintf(&s, "%s/%s", dir, name) < 0 ? NULL : s;
}

int cbox_compat_paths_init(struct cbox_compat_paths *p, struct cbox_err **err)
{
	char exe[PATH_MAX];
	*p = (struct cbox_compat_paths){0};
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return cbox_err_set(err, errno, "readlink /proc/self/exe");
	exe[n] = '\0';
	p->self_dir = strdup(dirname(exe));
	if (p->self_dir == NULL)
		return cbox_err_set(err, ENOMEM, "paths");
	p->cbox_run = beside("CBOX_RUN", p->self_dir, "cbox-run");
	p->cbox = beside("CBOX", p->self_dir, "cbox");
	if (p->cbox_run == NULL || p->cbox == NULL) {
		cbox_compat_paths_free(p);
		return cbox_err_set(err, ENOMEM, "paths");
	}
	return 0;
}

void cbox_compat_paths_free(struct cbox_compat_paths *p)
{
	free(p->self_dir);
	free(p->cbox_run);
	free(p->cbox);
	*p = (struct cbox_compat_paths){0};
}

bool cbox_compat_target_available(const struct cbox_compat_target *t,
                                  const struct cbox_compat_paths *p, const char **why)
{
	*why = NULL;
	if (t->tier) {
		*why = "tier not implemented yet (tiers/ has no runner for it)";
		return false;
	}
	if (t->platform == NULL)
		return true;
	struct stat st;
	if (stat(p->cbox_run, &st) < 0 || !S_ISREG(st.st_mode) || access(p->cbox_run, X_OK) < 0) {
		*why = "cbox-run not found or not executable (build it, or set CBOX_RUN)";
		return false;
	}
	return true;
}

static char *available_list(const struct cbox_compat_paths *p)
{
	char *s = strdup("");
	for (size_t i = 0; s && i < cbox_compat_ntargets; i++) {
		const char *why;
		if (!cbox_compat_target_available(&cbox_compat_targets[i], p, &why))
			continue;
		char *t = NULL;
		if (asprintf(&t, "%s%s%s", s, *s ? ", " : "", cbox_compat_targets[i].name) < 0)
			t = NULL;
		free(s);
		s = t;
	}
	return s;
}

static int target_error(const struct cbox_compat_paths *p, struct cbox_err **err, const char *name,
                        const char *why)
{
	CBOX_AUTOFREE char *avail = available_list(p);
	return cbox_err_set(err, 0, "target '%s' %s; available targets: %s", name, why,
	                    avail ? avail : "(out of memory)");
}

const struct cbox_compat_target **cbox_compat_targets_select(const char *list,
                                                             const struct cbox_compat_paths *p,
                                                             size_t *n, struct cbox_err **err)
{
	CBOX_AUTOFREE const struct cbox_compat_target **out =
	    calloc(cbox_compat_ntargets, sizeof(*out));
	*n = 0;
	if (out == NULL) {
		cbox_err_set(err, ENOMEM, "targets");
		return NULL;
	}
	const char *why;
	for (size_t i = 0; list == NULL && i < cbox_compat_ntargets; i++)
		if (cbox_compat_target_available(&cbox_compat_targets[i], p, &why))
			out[(*n)++] = &cbox_compat_targets[i];
	for (const char *s = list; s != NULL;) {
		const char *comma = strchrnul(s, ',');
		CBOX_AUTOFREE char *name = strndup(s, (size_t)(comma - s));
		const struct cbox_compat_target *t = name ? cbox_compat_target_find(name) : NULL;
		if (t == NULL) {
			target_error(p, err, name ? name : "?", "is unknown");
			return NULL;
		}
		if (!cbox_compat_target_available(t, p, &why)) {
			CBOX_AUTOFREE char *w = NULL;
			if (asprintf(&w, "is not available (%s)", why) < 0)
				w = NULL;
			target_error(p, err, name, w ? w : "is not available");
			return NULL;
		}
		bool dup = false;
		for (size_t i = 0; i < *n; i++)
			dup |= out[i] == t;
		if (!dup)
			out[(*n)++] = t;
		s = *comma ? comma + 1 : NULL;
	}
	if (*n == 0) {
		target_error(p, err, list ? list : "(default)", "selects nothing");
		return NULL;
	}
	return cbox_steal_ptr(&out);
}

int cbox_compat_read_file(const char *path, size_t max, char **buf, size_t *len,
                          struct cbox_err **err)
{
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	CBOX_AUTOFREE char *b = NULL;
	size_t n = 0;
	for (;;) {
		char *nb = realloc(b, n + 65536 + 1);
		if (nb == NULL)
			return cbox_err_set(err, ENOMEM, "read %s", path);
		b = nb;
		ssize_t r = read(fd, b + n, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cbox_err_set(err, errno, "read %s", path);
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return cbox_err_set(err, EFBIG, "read %s: larger than %zu bytes", path,
			                    max);
	}
	b[n] = '\0';
	*len = n;
	*buf = cbox_steal_ptr(&b);
	return 0;
}

static void table_done(struct cbox_compat_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
}

int cbox_compat_table_load(const char *file, const struct cbox_compat_paths *p,
                           struct cbox_compat_table *out, struct cbox_err **err)
{
	if (file != NULL) {
		CBOX_AUTOFREE char *buf = NULL;
		size_t len;
		if (cbox_compat_read_file(file, 16 << 20, &buf, &len, err) < 0)
			return cbox_err_wrap(err, "syscall table");
		if (cbox_compat_table_parse(buf, len, out, err) < 0)
			return cbox_err_wrap(err, "%s", file);
		return 0;
	}
	char *argv[] = {p->cbox, (char *)"syscalls", (char *)"--json", NULL};
	struct cbox_compat_job job = {.argv = argv, .timeout = 60, .cap = 16 << 20};
	struct cbox_compat_job *jobs[] = {&job};
	int r = cbox_compat_jobs_run(jobs, 1, 1, table_done, NULL, err);
	if (r == 0 && (job.spawn_failed || !WIFEXITED(job.wstatus) ||
	               WEXITSTATUS(job.wstatus) != 0 || job.flooded || job.timed_out))
		r = cbox_err_set(err, 0,
		                 "`%s syscalls --json` failed (set CBOX, or use --table): %s",
		                 p->cbox, job.err && *job.err ? job.err : "no message");
	if (r == 0 && cbox_compat_table_parse(job.out, job.out_len, out, err) < 0)
		r = cbox_err_wrap(err, "output of `%s syscalls --json`", p->cbox);
	cbox_compat_job_clear(&job);
	return r;
}

int cbox_compat_results_load_all(const char *dir, struct cbox_compat_results **out, bool *present,
                                 struct cbox_err **err)
{
	for (size_t i = 0; i < cbox_compat_ntargets; i++) {
		CBOX_AUTOFREE char *path = NULL;
		out[i] = cbox_compat_results_new();
		if (out[i] == NULL ||
		    asprintf(&path, "%s/%s.tsv", dir, cbox_compat_targets[i].name) < 0)
			return cbox_err_set(err, ENOMEM, "load results");
		present[i] = access(path, F_OK) == 0;
		if (cbox_compat_results_load(out[i], path, stderr, err) < 0)
			return -1;
	}
	return 0;
}
