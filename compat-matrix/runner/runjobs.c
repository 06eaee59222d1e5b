/*
 * The jobs of `cbox-compat run`: one per (test program, target) or (suite command, target),
 * and how each job's output becomes results. A case listed natively but missing from a
 * target's output is never dropped: it is recorded as timeout (the job was killed at its
 * deadline) or crash (the program died, flooded, or exited without its line), with the reason,
 * so a sandbox that kills its guest shows up in the matrix instead of vanishing from it.
 * An OCI tier's job (ns) is `cbox --tier NAME run` of a bundle written in the job's own
 * directory: the host's root read-only, the work directory writable, the capabilities of a new
 * `cbox spec` bundle; a container left behind by a killed job is deleted after it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"
#include "run.h"

struct jobinfo {
	struct cbox_compat_job job; /* first: job.c's callbacks get this pointer */
	struct cbox_compat_run *run;
	size_t target, item; /* index of target; of program or suite case */
	char **argv;         /* owned array, borrowed strings (but argv_own) */
	char *argv_own[3];   /* strings this job allocated */
	/* An OCI tier's job: the guest's command (owned array, borrowed strings) goes into the
	 * bundle; the state directory, bundle and container id are made once the work directory
	 * exists (ns_prepare) and fill argv's slots. */
	char **cmd;
	size_t ncmd;
	char *state, *bundle, *id;
	size_t slot_state, slot_bundle, slot_id;
};

/* The last non-empty line of s, cut to 200 bytes, as a new string ("" when none). */
static char *last_line(const char *s, size_t len)
{
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	size_t start = len;
	while (start > 0 && s[start - 1] != '\n')
		start--;
	size_t n = len - start > 200 ? 200 : len - start;
	return strndup(s + start, n);
}

/* Signal number of the job's death: a real signal, or cbox-run's 128+N for its guest. */
static int death_signal(const struct cbox_compat_job *j, bool sandbox)
{
	if (WIFSIGNALED(j->wstatus))
		return WTERMSIG(j->wstatus);
	int code = WIFEXITED(j->wstatus) ? WEXITSTATUS(j->wstatus) : 0;
	return sandbox && code > 128 && code <= 128 + 64 ? code - 128 : 0;
}

/* Why a case has no line in the output; *st is timeout or crash. New string or NULL. */
static char *missing_reason(const struct cbox_compat_job *j, const struct cbox_compat_run *run,
                            bool sandbox, enum cbox_compat_status *st)
{
	CBOX_AUTOFREE char *tail = last_line(j->err, j->err_len);
	char *msg = NULL;
	int sig = death_signal(j, sandbox);
	int code = WIFEXITED(j->wstatus) ? WEXITSTATUS(j->wstatus) : -1;
	int r;
	*st = CBOX_COMPAT_CRASH;
	if (j->timed_out) {
		*st = CBOX_COMPAT_TIMEOUT;
		r = asprintf(&msg, "no result: job killed after the %u s timeout", run->timeout);
	} else if (j->flooded) {
		r = asprintf(&msg, "flood: job printed more than %zu bytes and was killed", j->cap);
	} else if (j->spawn_failed) {
		r = asprintf(&msg, "not run: %s", j->err);
		if (tail)
			tail[0] = '\0';
	} else if (sig) {
		r = asprintf(&msg, "no result: program killed by signal %d (%s)", sig,
		             strsignal(sig));
	} else if (sandbox && code == 125) {
		r = asprintf(&msg, "no result: cbox-run could not set up the sandbox (exit 125)");
	} else {
		r = asprintf(&msg,
		             "no result: program exited with status %d without this case's line",
		             code);
	}
	if (r < 0)
		return NULL;
	if (tail && *tail) {
		char *m2 = NULL;
		if (asprintf(&m2, "%s; stderr: %s", msg, tail) >= 0) {
			free(msg);
			msg = m2;
		}
	}
	return msg;
}

static void count_print(const char *target, const char *name, const size_t *c,
                        const struct cbox_compat_job *j)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "%zu pass, %zu fail", c[0], c[1]);
	for (int s = CBOX_COMPAT_SKIP; s < CBOX_COMPAT_NSTATUS && n < (int)sizeof(buf); s++)
		if (c[s])
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, ", %zu %s", c[s],
			              cbox_compat_status_name(s));
	printf("[%s] %s: %s (%.1f s)%s%s\n", target, name, buf, j->secs,
	       j->timed_out ? " [timeout]" : "", j->flooded ? " [flood]" : "");
	fflush(stdout);
}

static void put(struct cbox_compat_results *rs, struct cbox_compat_result *r, size_t *counts)
{
	if (r == NULL) {
		fprintf(stderr, "cbox-compat: out of memory; a result is lost\n");
		return;
	}
	counts[r->status]++;
	cbox_compat_results_put(rs, r);
}

/* A test program's job: its case lines, then the cases it did not report. */
static void program_done(struct jobinfo *ji)
{
	struct cbox_compat_run *run = ji->run;
	struct cbox_compat_program *prog = &run->progs[ji->item];
	const struct cbox_compat_target *t = run->targets[ji->target];
	struct cbox_compat_results *rs = run->fresh[ji->target];
	CBOX_AUTO(cbox_compat_results) *seen = cbox_compat_results_new();
	size_t counts[CBOX_COMPAT_NSTATUS] = {0};
	const char *p = ji->job.out, *end = p + ji->job.out_len;
	while (seen && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct cbox_compat_result *r = NULL;
		/* A line cut by a kill is not a result. */
		if ((nl || !(ji->job.flooded || ji->job.timed_out)) &&
		    cbox_compat_parse_case_line(p, n, &r, NULL) == 1) {
			struct cbox_compat_result *copy =
			    cbox_compat_result_new(r->name, r->syscall, r->status, r->msg);
			if (copy)
				cbox_compat_results_put(seen, copy);
			put(rs, r, counts);
		}
		p += n + 1;
	}
	enum cbox_compat_status st;
	CBOX_AUTOFREE char *why =
	    missing_reason(&ji->job, run, cbox_compat_target_sandboxed(t), &st);
	for (size_t i = 0; i < prog->ncases; i++) {
		if (seen && cbox_compat_results_get(seen, prog->cases[i]) != NULL)
			continue;
		put(rs, cbox_compat_result_new(prog->cases[i], NULL, st, why ? why : "no result"),
		    counts);
	}
	count_print(t->name, prog->name, counts, &ji->job);
}

/* A suite command's job: classified by its exit status. */
static void suite_done(struct jobinfo *ji)
{
	struct cbox_compat_run *run = ji->run;
	const struct cbox_compat_suite_case *sc = &run->suite.cases[ji->item];
	const struct cbox_compat_target *t = run->targets[ji->target];
	const struct cbox_compat_job *j = &ji->job;
	enum cbox_compat_status st;
	CBOX_AUTOFREE char *msg = NULL;
	int code = WIFEXITED(j->wstatus) ? WEXITSTATUS(j->wstatus) : -1;
	bool mapped = code >= 0 && run->exit_map.codes[code] >= 0;
	/* 128+N is a death by signal N on every target here: the shell's convention for a
	 * command it ran, and cbox-run's for its guest. An exit map entry for the code wins. */
	if (j->timed_out || j->flooded || j->spawn_failed || (death_signal(j, true) && !mapped)) {
		msg = missing_reason(j, run, true, &st);
	} else {
		st = cbox_compat_exit_map_get(&run->exit_map, code);
		CBOX_AUTOFREE char *tail = last_line(j->err, j->err_len);
		if (st == CBOX_COMPAT_PASS)
			msg = strdup("");
		else if (asprintf(&msg, "exit status %d%s%s", code,
		                  tail && *tail && st != CBOX_COMPAT_PASS ? "; stderr: " : "",
		                  tail && st != CBOX_COMPAT_PASS ? tail : "") < 0)
			msg = NULL;
	}
	size_t counts[CBOX_COMPAT_NSTATUS] = {0};
	put(run->fresh[ji->target], cbox_compat_result_new(sc->name, "-", st, msg ? msg : ""),
	    counts);
	count_print(t->name, sc->name, counts, j);
}

/* What an OCI tier job's bundle holds (every string borrowed). */
struct bundle {
	const char *dir; /* the bundle directory to create */
	const char *cwd; /* the job's work directory: the guest's cwd, HOME, TMPDIR */
	char **args;     /* the guest's command */
	size_t nargs;
	const char *tests_dir; /* shown read-only at its own path, or NULL */
	const char *caps_json; /* process.capabilities, as `cbox spec` writes it */
};

/* prefix (plain ASCII, no escapes needed) then s, as one JSON string. */
static void json_str2(FILE *f, const char *prefix, const char *s)
{
	fprintf(f, "\"%s", prefix);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	json_str2(f, "", s);
}

static void json_mount(FILE *f, const char *dst, const char *type, const char *src,
                       const char *opts)
{
	fputs(",\n    {\"destination\": ", f);
	json_str(f, dst);
	fprintf(f, ", \"type\": \"%s\", \"source\": ", type);
	json_str(f, src);
	fprintf(f, ", \"options\": [%s]}", opts);
}

/*
 * The host's root, read-only, as the guest's root (cbox-run's default view). root.path "/"
 * itself cannot be used: the tier pivots into the bind mount of its rootfs on itself, and "/"
 * bound on "/" is not reachable by a path (pivot_root fails with EBUSY). So the rootfs is an
 * empty directory of the job's with each entry of the host's / bound read-only at its own
 * name, and its symlinks (bin -> usr/bin) copied. /proc, /dev and /sys are not bound: the
 * guest gets its own (as a new bundle from `cbox spec` does), never the host's /dev, which the
 * tier would fill with its device nodes.
 */
static int host_root_mounts(const char *rootfs, FILE *f, struct cbox_err **err)
{
	struct dirent **ents = NULL;
	int n = scandir("/", &ents, NULL, alphasort);
	if (n < 0)
		return cbox_err_set(err, errno, "list /");
	int r = 0;
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		char host[PATH_MAX], link[PATH_MAX], in[PATH_MAX];
		struct stat st;
		snprintf(host, sizeof(host), "/%s", e);
		bool skip = !strcmp(e, ".") || !strcmp(e, "..") || !strcmp(e, "proc") ||
		            !strcmp(e, "dev") || !strcmp(e, "sys") || lstat(host, &st) < 0;
		if (r < 0 || skip) {
			free(ents[i]);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t k = readlink(host, link, sizeof(link) - 1);
			int w = snprintf(in, sizeof(in), "%s/%s", rootfs, e);
			if (k >= 0)
				link[k] = '\0';
			if (w < 0 || (size_t)w >= sizeof(in))
				k = -1, errno = ENAMETOOLONG;
			if (k < 0 || symlink(link, in) < 0)
				r = cbox_err_set(err, errno, "copy the symlink %s", host);
		} else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
			json_mount(f, host, "bind", host, "\"rbind\", \"ro\"");
		}
		free(ents[i]);
	}
	free(ents);
	return r;
}

/* The mounts after the host's root: the guest's own /dev and /sys (the defaults of `cbox
 * spec`), the test programs read-only and the work directory writable. */
static void own_mounts(const struct bundle *b, FILE *f)
{
	json_mount(f, "/dev", "tmpfs", "tmpfs",
	           "\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"");
	json_mount(f, "/dev/pts", "devpts", "devpts",
	           "\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\", "
	           "\"gid=5\"");
	json_mount(f, "/dev/shm", "tmpfs", "shm",
	           "\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"");
	json_mount(f, "/dev/mqueue", "mqueue", "mqueue", "\"nosuid\", \"noexec\", \"nodev\"");
	json_mount(f, "/sys", "sysfs", "sysfs", "\"nosuid\", \"noexec\", \"nodev\", \"ro\"");
	if (b->tests_dir)
		json_mount(f, b->tests_dir, "bind", b->tests_dir, "\"rbind\", \"ro\"");
	json_mount(f, b->cwd, "bind", b->cwd, "\"rbind\", \"rw\"");
}

static void write_process(const struct bundle *b, FILE *f)
{
	const char *path = getenv("PATH");
	fputs("{\n  \"ociVersion\": \"1.2.0\",\n  \"process\": {\n    \"terminal\": false,\n"
	      "    \"user\": {\"uid\": 0, \"gid\": 0},\n    \"args\": [",
	      f);
	for (size_t i = 0; i < b->nargs; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, b->args[i]);
	}
	fputs("],\n    \"env\": [", f);
	json_str2(f, "PATH=",
	          path && *path ? path
	                        : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	fputs(", ", f);
	json_str2(f, "HOME=", b->cwd);
	fputs(", ", f);
	json_str2(f, "TMPDIR=", b->cwd);
	fputs("],\n    \"cwd\": ", f);
	json_str(f, b->cwd);
	/* The capabilities of a new bundle (Docker's default set), not the full set the suite
	 * has natively: a case that needs more is reported failing under ns, as it would be in
	 * a container. */
	fprintf(f, ",\n    \"capabilities\": %s\n  },\n", b->caps_json);
}

/* Write the bundle: <dir>/config.json and <dir>/rootfs. Returns 0, < 0 with err. */
static int bundle_write(const struct bundle *b, struct cbox_err **err)
{
	char rootfs[PATH_MAX], cfg[PATH_MAX];
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", b->dir);
	snprintf(cfg, sizeof(cfg), "%s/config.json", b->dir);
	if (mkdir(b->dir, 0700) < 0 || mkdir(rootfs, 0755) < 0)
		return cbox_err_set(err, errno, "create %s", rootfs);
	FILE *f = fopen(cfg, "we");
	if (f == NULL)
		return cbox_err_set(err, errno, "create %s", cfg);
	write_process(b, f);
	fputs("  \"root\": {\"path\": ", f);
	json_str(f, rootfs);
	fputs(", \"readonly\": true},\n  \"mounts\": [\n    {\"destination\": \"/proc\", "
	      "\"type\": \"proc\", \"source\": \"proc\"}",
	      f);
	int r = host_root_mounts(rootfs, f, err);
	own_mounts(b, f);
	/* The namespaces of a new bundle; no user namespace: the suite runs as root, as it
	 * does natively. */
	fputs("\n  ],\n  \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": "
	      "\"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}, "
	      "{\"type\": \"cgroup\"}]}\n}\n",
	      f);
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad)
		return r < 0 ? r : cbox_err_set(err, EIO, "write %s", cfg);
	return r;
}

static void quiet_done(struct cbox_compat_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
}

/* After an OCI tier job: when its container is still there (the job was killed at its
 * timeout, or flooded, before `cbox run` could delete it), `cbox delete --force` stops what is
 * left of it and removes its cgroup; the state directory goes with the work directory. */
static void ns_cleanup(const char *cbox, const char *state, const char *id)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", state, id);
	if (access(path, F_OK) < 0)
		return;
	char *argv[] = {(char *)cbox,      (char *)"--root", (char *)state, (char *)"delete",
	                (char *)"--force", (char *)id,       NULL};
	struct cbox_compat_job job = {.argv = argv, .timeout = 30, .cap = 1 << 20};
	struct cbox_compat_job *jobs[] = {&job};
	struct cbox_err *err = NULL;
	if (cbox_compat_jobs_run(jobs, 1, 1, quiet_done, NULL, &err) < 0 || job.spawn_failed ||
	    !WIFEXITED(job.wstatus) || WEXITSTATUS(job.wstatus) != 0)
		fprintf(stderr, "cbox-compat: warning: %s --root %s delete --force %s failed: %s\n",
		        cbox, state, id,
		        err && err->msg       ? err->msg
		        : job.err && *job.err ? job.err
		                              : "no message");
	cbox_err_free(&err);
	cbox_compat_job_clear(&job);
}

static void job_done(struct cbox_compat_job *job, void *ctx)
{
	struct jobinfo *ji = (struct jobinfo *)job;
	(void)ctx;
	if (ji->run->suite_file)
		suite_done(ji);
	else
		program_done(ji);
	if (ji->id)
		ns_cleanup(ji->run->cbox, ji->state, ji->id);
	cbox_compat_job_clear(job);
}

/* Fill an OCI tier job's bundle and its argv slots, in its fresh work directory. */
static int ns_prepare(struct cbox_compat_job *job)
{
	struct jobinfo *ji = (struct jobinfo *)job;
	const char *base = strrchr(job->workdir, '.');
	if (asprintf(&ji->state, "%s/state", job->workdir) < 0 ||
	    asprintf(&ji->bundle, "%s/bundle", job->workdir) < 0 ||
	    /* The id names the container's cgroup (cbox/<id>), shared by the whole host: the
	     * runner's pid and the work directory's unique suffix keep it unique. */
	    asprintf(&ji->id, "cbox-compat-%d-%s", (int)getpid(), base ? base + 1 : "x") < 0) {
		free(job->err);
		job->err = strdup("cbox-compat: out of memory preparing a bundle");
		return -1;
	}
	struct bundle b = {.dir = ji->bundle,
	                   .cwd = job->cwd,
	                   .args = ji->cmd,
	                   .nargs = ji->ncmd,
	                   .tests_dir = ji->run->tests_abs,
	                   .caps_json = ji->run->caps_json};
	struct cbox_err *err = NULL;
	if (bundle_write(&b, &err) < 0) {
		free(job->err);
		if (asprintf(&job->err, "cbox-compat: bundle for %s: %s", ji->cmd[0],
		             err && err->msg ? err->msg : "?") < 0)
			job->err = NULL;
		cbox_err_free(&err);
		return -1;
	}
	ji->argv[ji->slot_state] = ji->state;
	ji->argv[ji->slot_bundle] = ji->bundle;
	ji->argv[ji->slot_id] = ji->id;
	return 0;
}

/* argv for an OCI tier: `cbox --root STATE --tier NAME run --bundle BUNDLE ID`, the slots
 * filled by ns_prepare; the command itself goes into the bundle. */
static int build_oci_argv(struct jobinfo *ji, const struct cbox_compat_target *t, char **cmd,
                          size_t ncmd)
{
	size_t n = 0;
	ji->argv = calloc(10, sizeof(char *));
	ji->cmd = calloc(ncmd + 1, sizeof(char *));
	if (ji->argv == NULL || ji->cmd == NULL)
		return -ENOMEM;
	memcpy(ji->cmd, cmd, ncmd * sizeof(char *));
	ji->ncmd = ncmd;
	ji->argv[n++] = (char *)ji->run->cbox;
	ji->argv[n++] = (char *)"--root";
	ji->slot_state = n++;
	ji->argv[n++] = (char *)"--tier";
	ji->argv[n++] = (char *)t->oci_tier;
	ji->argv[n++] = (char *)"run";
	ji->argv[n++] = (char *)"--bundle";
	ji->slot_bundle = n++;
	ji->slot_id = n++;
	ji->job.private_dir = true;
	ji->job.prepare = ns_prepare;
	return 0;
}

/* argv for a command on target t: cbox-run's options for the sandbox targets, then cmd. */
static int build_argv(struct jobinfo *ji, const struct cbox_compat_target *t, char **cmd,
                      size_t ncmd)
{
	size_t n = 0;
	if (t->oci_tier)
		return build_oci_argv(ji, t, cmd, ncmd);
	ji->argv = calloc(ncmd + 8, sizeof(char *));
	if (ji->argv == NULL)
		return -ENOMEM;
	if (t->platform) {
		ji->argv[n++] = (char *)ji->run->cbox_run;
		if (asprintf(&ji->argv_own[0], "--platform=%s", t->platform) < 0)
			return -ENOMEM;
		ji->argv[n++] = ji->argv_own[0];
		if (t->strict)
			ji->argv[n++] = (char *)"--strict";
		/* The test programs are shown read-only at their own path: the host tree they live
		 * in may be hidden in the sandbox (a clone under /tmp, which is the guest's own
		 * tmpfs there). */
		char *abs = realpath(ji->run->tests_dir, NULL);
		const char *dir = abs ? abs : ji->run->tests_dir;
		int rc = asprintf(&ji->argv_own[2], "%s:%s:ro", dir, dir);
		free(abs);
		if (rc < 0)
			return -ENOMEM;
		ji->argv[n++] = (char *)"-v";
		ji->argv[n++] = ji->argv_own[2];
		ji->argv[n++] = (char *)"--";
	}
	for (size_t i = 0; i < ncmd; i++)
		ji->argv[n++] = cmd[i];
	return 0;
}

/* The command of item i: the program with its selected cases, or /bin/sh -c CMD. */
static int job_cmd(struct cbox_compat_run *run, struct jobinfo *ji, char ***cmd, size_t *n)
{
	if (run->suite_file) {
		*cmd = calloc(3, sizeof(char *));
		if (*cmd == NULL)
			return -ENOMEM;
		(*cmd)[0] = (char *)"/bin/sh";
		(*cmd)[1] = (char *)"-c";
		(*cmd)[2] = run->suite.cases[ji->item].cmd;
		*n = 3;
		return 0;
	}
	struct cbox_compat_program *p = &run->progs[ji->item];
	/* Unfiltered: no names, the program runs everything (shorter command lines). */
	size_t k = run->only ? p->ncases : 0;
	*cmd = calloc(k + 1, sizeof(char *));
	if (*cmd == NULL)
		return -ENOMEM;
	(*cmd)[0] = p->path;
	for (size_t i = 0; i < k; i++)
		(*cmd)[i + 1] = p->cases[i];
	*n = k + 1;
	return 0;
}

static void jobinfo_free(struct jobinfo *ji, size_t n)
{
	for (size_t i = 0; ji && i < n; i++) {
		free(ji[i].argv);
		free(ji[i].argv_own[0]);
		free(ji[i].argv_own[2]);
		free(ji[i].argv_own[1]);
		free(ji[i].cmd);
		free(ji[i].state);
		free(ji[i].bundle);
		free(ji[i].id);
	}
	free(ji);
}

int cbox_compat_run_jobs(struct cbox_compat_run *run, struct cbox_err **err)
{
	size_t items = run->suite_file ? run->suite.n : run->nprogs;
	size_t total = items * run->ntargets, n = 0;
	struct jobinfo *ji = calloc(total + 1, sizeof(*ji));
	CBOX_AUTOFREE struct cbox_compat_job **jp = calloc(total + 1, sizeof(*jp));
	if (ji == NULL || jp == NULL) {
		free(ji);
		return cbox_err_set(err, ENOMEM, "jobs");
	}
	/* Item-major order: the targets of one program run side by side, so a slow sandbox
	 * target does not leave the end of the run to one program. */
	for (size_t i = 0; i < items; i++) {
		if (!run->suite_file && run->progs[i].ncases == 0)
			continue;
		for (size_t t = 0; t < run->ntargets; t++) {
			struct jobinfo *x = &ji[n];
			*x = (struct jobinfo){.run = run, .target = t, .item = i};
			CBOX_AUTOFREE char **cmd = NULL;
			size_t ncmd;
			if (job_cmd(run, x, &cmd, &ncmd) < 0 ||
			    build_argv(x, run->targets[t], cmd, ncmd) < 0) {
				jobinfo_free(ji, n + 1);
				return cbox_err_set(err, ENOMEM, "jobs");
			}
			x->job.argv = x->argv;
			x->job.timeout = run->timeout;
			x->job.cap = 4u << 20;
			jp[n] = &x->job;
			n++;
		}
	}
	int r = cbox_compat_jobs_run(jp, n, run->parallel, job_done, NULL, err);
	jobinfo_free(ji, n);
	return r;
}
