/*
 * `cbox-compat run`: list the cases of every test program natively, run each (program, target)
 * pair as one job, and merge what each target reported into <results>/<target>.tsv. A test
 * that hangs, crashes or floods costs only its own cases: they are recorded as timeout or
 * crash with the reason, and the run goes on.
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/log.h"
#include "job.h"
#include "run.h"

#define OUTPUT_CAP   (4u << 20)
#define LIST_TIMEOUT 30

static void list_done(struct cbox_compat_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
}

/* The executables in dir, sorted by name, as absolute paths. */
static int find_programs(const char *dir, char ***out, size_t *n, struct cbox_err **err)
{
	struct dirent **ents = NULL;
	/* Absolute: each job runs in a work directory of its own. */
	CBOX_AUTOFREE char *abs = realpath(dir, NULL);
	int k = abs ? scandir(abs, &ents, NULL, alphasort) : -1;
	*n = 0;
	*out = NULL;
	if (k < 0)
		return cbox_err_set(err, errno, "list test programs in %s (use --tests DIR)", dir);
	char **progs = calloc((size_t)k + 1, sizeof(*progs));
	for (int i = 0; i < k; i++) {
		char *path = NULL;
		struct stat st;
		if (progs && ents[i]->d_name[0] != '.' &&
		    asprintf(&path, "%s/%s", abs, ents[i]->d_name) >= 0) {
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
				progs[(*n)++] = path;
			else
				free(path);
		}
		free(ents[i]);
	}
	free(ents);
	if (progs == NULL)
		return cbox_err_set(err, ENOMEM, "list test programs");
	*out = progs;
	return 0;
}

static bool valid_case_name(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '-' ||
		      *s == ':'))
			return false;
	return true;
}

/* Parse `PROG --list` output into prog->cases (selected by globs). */
static int parse_list(struct cbox_compat_program *prog, struct cbox_compat_job *job,
                      const char *globs)
{
	char *save = NULL;
	size_t cap = 0;
	for (char *line = strtok_r(job->out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!valid_case_name(line)) {
			fprintf(stderr, "cbox-compat: %s --list: ignoring line '%.80s'\n",
			        prog->name, line);
			continue;
		}
		if (!cbox_compat_selected(globs, line))
			continue;
		if (prog->ncases == cap) {
			cap = cap ? cap * 2 : 64;
			char **c = reallocarray(prog->cases, cap, sizeof(*c));
			if (c == NULL)
				return -ENOMEM;
			prog->cases = c;
		}
		prog->cases[prog->ncases] = strdup(line);
		if (prog->cases[prog->ncases] == NULL)
			return -ENOMEM;
		prog->ncases++;
	}
	return 0;
}

/* Run `PROG --list` for every program, natively and in parallel. A program whose list fails
 * is reported and left with no cases. */
static int list_cases(struct cbox_compat_run *run, struct cbox_err **err)
{
	CBOX_AUTOFREE struct cbox_compat_job *jobs = calloc(run->nprogs, sizeof(*jobs));
	CBOX_AUTOFREE struct cbox_compat_job **jp = calloc(run->nprogs, sizeof(*jp));
	CBOX_AUTOFREE char **argvs = calloc(run->nprogs * 3, sizeof(*argvs));
	if (run->nprogs && (jobs == NULL || jp == NULL || argvs == NULL))
		return cbox_err_set(err, ENOMEM, "list cases");
	for (size_t i = 0; i < run->nprogs; i++) {
		argvs[i * 3] = run->progs[i].path;
		argvs[i * 3 + 1] = (char *)"--list";
		jobs[i] = (struct cbox_compat_job){
		    .argv = &argvs[i * 3], .timeout = LIST_TIMEOUT, .cap = OUTPUT_CAP};
		jp[i] = &jobs[i];
	}
	int r = cbox_compat_jobs_run(jp, run->nprogs, run->parallel, list_done, NULL, err);
	for (size_t i = 0; i < run->nprogs; i++) {
		struct cbox_compat_job *j = &jobs[i];
		if (r == 0 && (j->spawn_failed || j->timed_out || j->flooded ||
		               !WIFEXITED(j->wstatus) || WEXITSTATUS(j->wstatus) != 0)) {
			fprintf(stderr, "cbox-compat: %s --list failed (%s); program skipped\n",
			        run->progs[i].path,
			        j->timed_out ? "timed out"
			        : j->flooded ? "output flood"
			        : *j->err    ? j->err
			                     : "bad exit status");
		} else if (r == 0 && parse_list(&run->progs[i], j, run->only) < 0) {
			r = cbox_err_set(err, ENOMEM, "list cases");
		}
		cbox_compat_job_clear(j);
	}
	return r;
}

static void program_free(struct cbox_compat_program *p)
{
	for (size_t i = 0; i < p->ncases; i++)
		free(p->cases[i]);
	free(p->cases);
	free(p->path);
}

void cbox_compat_run_free(struct cbox_compat_run *run)
{
	for (size_t i = 0; i < run->nprogs; i++)
		program_free(&run->progs[i]);
	free(run->progs);
	free(run->targets);
	for (size_t i = 0; i < run->ntargets; i++)
		cbox_compat_results_free(run->fresh[i]);
	free(run->fresh);
	cbox_compat_suite_free(&run->suite);
	free(run->caps_json);
	free(run->tests_abs);
}

static int load_programs(struct cbox_compat_run *run, struct cbox_err **err)
{
	char **paths = NULL;
	size_t n = 0;
	if (find_programs(run->tests_dir, &paths, &n, err) < 0)
		return -1;
	run->progs = calloc(n + 1, sizeof(*run->progs));
	if (run->progs == NULL) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		return cbox_err_set(err, ENOMEM, "list test programs");
	}
	for (size_t i = 0; i < n; i++) {
		run->progs[i].path = paths[i];
		const char *slash = strrchr(paths[i], '/');
		run->progs[i].name = slash ? slash + 1 : paths[i];
	}
	run->nprogs = n;
	free(paths);
	if (n == 0)
		fprintf(stderr, "cbox-compat: no test programs in %s\n", run->tests_dir);
	return list_cases(run, err);
}

static void print_summary(const struct cbox_compat_run *run)
{
	printf("summary:\n");
	for (size_t t = 0; t < run->ntargets; t++) {
		size_t c[CBOX_COMPAT_NSTATUS] = {0}, n;
		CBOX_AUTOFREE struct cbox_compat_result **rows =
		    cbox_compat_results_sorted(run->fresh[t], &n);
		for (size_t i = 0; rows && i < n; i++)
			c[rows[i]->status]++;
		if (rows == NULL)
			n = 0;
		printf("  %-22s %zu cases: %zu pass, %zu fail, %zu skip, %zu crash, %zu timeout\n",
		       run->targets[t]->name, n, c[0], c[1], c[2], c[3], c[4]);
	}
}

static int save_results(const struct cbox_compat_run *run, struct cbox_err **err)
{
	for (size_t t = 0; t < run->ntargets; t++) {
		if (cbox_hashmap_size(run->fresh[t]->map) == 0)
			continue;
		CBOX_AUTOFREE char *path = NULL;
		if (asprintf(&path, "%s/%s%s.tsv", run->results_dir,
		             run->suite_file ? "suite-" : "", run->targets[t]->name) < 0)
			return cbox_err_set(err, ENOMEM, "save results");
		if (cbox_compat_results_merge(path, run->fresh[t], err) < 0)
			return -1;
	}
	return 0;
}

static int prepare(struct cbox_compat_run *run, struct cbox_err **err)
{
	run->fresh = calloc(run->ntargets, sizeof(*run->fresh));
	if (run->fresh == NULL)
		return cbox_err_set(err, ENOMEM, "results");
	for (size_t t = 0; t < run->ntargets; t++)
		if ((run->fresh[t] = cbox_compat_results_new()) == NULL)
			return cbox_err_set(err, ENOMEM, "results");
	if (mkdir(run->results_dir, 0755) < 0 && errno != EEXIST)
		return cbox_err_set(err, errno, "create results directory %s", run->results_dir);
	/* NULL when missing: load_programs reports it (a suite needs no test programs). */
	run->tests_abs = realpath(run->tests_dir, NULL);
	for (size_t t = 0; t < run->ntargets && run->caps_json == NULL; t++)
		if (run->targets[t]->oci_tier &&
		    (run->caps_json = cbox_compat_spec_capabilities(run->cbox, err)) == NULL)
			return cbox_err_wrap(err, "target %s", run->targets[t]->name);
	if (run->suite_file == NULL)
		return load_programs(run, err);
	CBOX_AUTOFREE char *buf = NULL;
	size_t len;
	if (cbox_compat_read_file(run->suite_file, 64 << 20, &buf, &len, err) < 0)
		return cbox_err_wrap(err, "suite");
	return cbox_compat_suite_parse(run->suite_file, buf, len, stderr, &run->suite, err);
}

int cbox_compat_run_execute(struct cbox_compat_run *run, struct cbox_err **err)
{
	if (prepare(run, err) < 0)
		return -1;
	double t0 = cbox_compat_now();
	if (cbox_compat_run_jobs(run, err) < 0)
		return -1;
	if (save_results(run, err) < 0)
		return -1;
	print_summary(run);
	printf("results in %s (%.1f s)\n", run->results_dir, cbox_compat_now() - t0);
	return 0;
}
