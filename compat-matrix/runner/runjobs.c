/*
 * The jobs of `cbox-compat run`: one per (test program, target) or (suite command, target),
 * and how each job's output becomes results. A case listed natively but missing from a
 * target's output is never dropped: it is recorded as timeout (the job was killed at its
 * deadline) or crash (the program died, flooded, or exited without its line), with the reason,
 * so a sandbox that kills its guest shows up in the matrix instead of vanishing from it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "job.h"
#include "run.h"

struct jobinfo {
	struct cbox_compat_job job;
	struct cbox_compat_run *run;
	size_t target, item; /* index of target; of program or suite case */
	char **argv;         /* owned array, borrowed strings (but argv_own) */
	char *argv_own[3];   /* strings this job allocated */
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
	CBOX_AUTOFREE char *why = missing_reason(&ji->job, run, t->platform != NULL, &st);
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

static void job_done(struct cbox_compat_job *job, void *ctx)
{
	struct jobinfo *ji = (struct jobinfo *)job;
	(void)ctx;
	if (ji->run->suite_file)
		suite_done(ji);
	else
		program_done(ji);
	cbox_compat_job_clear(job);
}

/* argv for a command on target t: cbox-run's options for the sandbox targets, then cmd. */
static int build_argv(struct jobinfo *ji, const struct cbox_compat_target *t, char **cmd,
                      size_t ncmd)
{
	size_t n = 0;
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
