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
    {"native", NULL, false, false, NULL},
    {"sentry-seccomp", "seccomp", false, false, NULL},
    {"sentry-ptrace", "ptrace", false, false, NULL},
    {"sentry-seccomp-strict", "seccomp", true, false, NULL},
    {"sentry-ptrace-strict", "ptrace", true, false, NULL},
    {"ns", NULL, false, false, "ns"},
    {"os", NULL, false, true, NULL},
    {"wasm", NULL, false, true, NULL},
    {"microvm", NULL, false, true, NULL},
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

bool cbox_compat_target_sandboxed(const struct cbox_compat_target *t)
{
	return t->platform != NULL || t->oci_tier != NULL;
}

bool cbox_compat_target_judged(const struct cbox_compat_target *t)
{
	return t->platform != NULL;
}

static bool executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static void quiet_done(struct cbox_compat_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
}

/* Run argv (natively, in a fresh work directory) to its end. Returns 0 when it ran and exited
 * 0 (job holds its output: clear it), else < 0 with err naming what. */
static int run_capture(char **argv, struct cbox_compat_job *job, struct cbox_err **err)
{
	*job = (struct cbox_compat_job){.argv = argv, .timeout = 60, .cap = 16 << 20};
	struct cbox_compat_job *jobs[] = {job};
	if (cbox_compat_jobs_run(jobs, 1, 1, quiet_done, NULL, err) < 0)
		return -1;
	if (job->spawn_failed || !WIFEXITED(job->wstatus) || WEXITSTATUS(job->wstatus) != 0 ||
	    job->flooded || job->timed_out)
		return cbox_err_set(err, 0, "`%s %s` failed: %s", argv[0], argv[1],
		                    job->err && *job->err ? job->err : "no message");
	return 0;
}

/* The line of `cbox tiers` for tier: "NAME STATUS DETAILS". Sets *ok, and why on failure. */
static void tier_status(const char *tier, const char *out, bool *ok, char *why, size_t n)
{
	size_t len = strlen(tier);
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, tier, len) != 0 || (l[len] != ' ' && l[len] != '\t'))
			continue;
		const char *st = l + len + strspn(l + len, " \t");
		*ok = strncmp(st, "available", 9) == 0 &&
		      (st[9] == ' ' || st[9] == '\t' || st[9] == '\n' || st[9] == '\0');
		snprintf(why, n, "`cbox tiers` says: %.*s", (int)strcspn(st, "\n"), st);
		return;
	}
	*ok = false;
	snprintf(why, n, "`cbox tiers` does not list the %s tier", tier);
}

/* An OCI tier's availability, asked once per process (it costs a `cbox tiers`). */
static bool oci_tier_available(const struct cbox_compat_target *t,
                               const struct cbox_compat_paths *p, const char **why)
{
	static struct {
		bool asked, ok;
		char why[256];
	} cache[16];
	size_t i = (size_t)(t - cbox_compat_targets);
	if (i >= CBOX_ARRAY_SIZE(cache)) {
		*why = "internal error: too many targets";
		return false;
	}
	if (!cache[i].asked) {
		cache[i].asked = true;
		struct cbox_err *err = NULL;
		struct cbox_compat_job job = {0};
		char *argv[] = {p->cbox, (char *)"tiers", NULL};
		/* The ns tier makes namespaces, mounts and cgroups: only root may (CI runs the
		 * suite as root), and a non-root run would only record setup failures. */
		if (geteuid() != 0)
			snprintf(cache[i].why, sizeof(cache[i].why), "needs root (run as root)");
		else if (!executable(p->cbox))
			snprintf(cache[i].why, sizeof(cache[i].why),
			         "cbox not found or not executable (build it, or set CBOX)");
		else if (run_capture(argv, &job, &err) < 0)
			snprintf(cache[i].why, sizeof(cache[i].why), "%s",
			         err && err->msg ? err->msg : "`cbox tiers` failed");
		else
			tier_status(t->oci_tier, job.out, &cache[i].ok, cache[i].why,
			            sizeof(cache[i].why));
		cbox_compat_job_clear(&job);
		cbox_err_free(&err);
	}
	*why = cache[i].ok ? NULL : cache[i].why;
	return cache[i].ok;
}

bool cbox_compat_target_available(const struct cbox_compat_target *t,
                                  const struct cbox_compat_paths *p, const char **why)
{
	*why = NULL;
	if (t->tier) {
		*why = "tier not implemented yet (tiers/ has no runner for it)";
		return false;
	}
	if (t->oci_tier)
		return oci_tier_available(t, p, why);
	if (t->platform == NULL)
		return true;
	if (!executable(p->cbox_run)) {
		*why = "cbox-run not found or not executable (build it, or set CBOX_RUN)";
		return false;
	}
	return true;
}

/* The JSON value that starts at s (an object), up to its matching brace: its length, or 0 when
 * s does not hold a whole object. Strings are skipped with their escapes. */
static size_t object_len(const char *s)
{
	size_t depth = 0;
	bool str = false;
	if (*s != '{')
		return 0;
	for (size_t i = 0; s[i]; i++) {
		if (str) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			else if (s[i] == '"')
				str = false;
		} else if (s[i] == '"') {
			str = true;
		} else if (s[i] == '{') {
			depth++;
		} else if (s[i] == '}' && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

char *cbox_compat_spec_capabilities(const char *cbox, struct cbox_err **err)
{
	struct cbox_compat_job job;
	char *argv[] = {(char *)cbox, (char *)"spec", (char *)"--bundle", (char *)".", NULL};
	CBOX_AUTOFREE char *path = NULL, *buf = NULL;
	size_t len = 0;
	char *caps = NULL;
	if (run_capture(argv, &job, err) < 0 || asprintf(&path, "%s/config.json", job.cwd) < 0 ||
	    cbox_compat_read_file(path, 1 << 20, &buf, &len, err) < 0) {
		cbox_compat_job_clear(&job);
		return NULL;
	}
	cbox_compat_job_clear(&job);
	/* The first "capabilities" key is process.capabilities: the spec has no other. */
	const char *k = strstr(buf, "\"capabilities\"");
	if (k != NULL) {
		k += strlen("\"capabilities\"");
		k += strspn(k, " \t\r\n");
		k += *k == ':';
		k += strspn(k, " \t\r\n");
		size_t n = object_len(k);
		caps = n ? strndup(k, n) : NULL;
		if (n && caps == NULL)
			cbox_err_set(err, ENOMEM, "cbox spec");
		else if (!n)
			k = NULL;
	}
	if (k == NULL)
		cbox_err_set(err, 0, "`%s spec` wrote no process.capabilities object", cbox);
	return caps;
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
	int r = cbox_compat_jobs_run(jobs, 1, 1, quiet_done, NULL, err);
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
