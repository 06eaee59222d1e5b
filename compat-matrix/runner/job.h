#pragma once
/*
 * Running cbox-compat's jobs: each job is one command (a test program natively, cbox-run
 * around it, or cbox running a bundle), run in its own process group and its own fresh work
 * directory (also its TMPDIR), with stdout and stderr captured through pipes up to a cap, and a
 * wall-clock timeout. A job that floods its output past the cap or outlives its timeout has its
 * whole process group killed. Many jobs run in parallel; the caller learns of each as it ends.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cbox/err.h"

struct cbox_compat_job {
	/* Set by the caller. */
	char **argv;      /* NULL-terminated; owned by the caller */
	unsigned timeout; /* seconds, > 0 */
	size_t cap;       /* bytes of stdout+stderr kept; more is a flood */
	void *data;       /* the caller's */
	/* When set, the job runs in <workdir>/work (its cwd and TMPDIR) and <workdir> keeps the
	 * caller's own files beside it (a bundle, a state directory). */
	bool private_dir;
	/* Called once the work directory exists (workdir and cwd set), before the fork: may write
	 * files there and fill argv slots. Returns 0, or < 0 with a message in job->err (malloc'd,
	 * replacing it) and then the job is not run (spawn_failed). May be NULL. */
	int (*prepare)(struct cbox_compat_job *job);

	/* Filled by cbox_compat_jobs_run. */
	char *out, *err;         /* captured output, NUL-terminated (never NULL once done) */
	size_t out_len, err_len; /* bytes captured */
	int wstatus;             /* waitpid status of argv[0]'s process */
	bool timed_out, flooded; /* the job was killed for one of these */
	bool spawn_failed;       /* fork/pipe/mkdtemp failed: nothing ran (see err) */
	double secs;             /* wall time */

	/* Private to job.c. */
	pid_t pid;
	int pidfd, fd[2];
	bool reaped;
	double start, exited_at;

	/* Set by job.c before prepare; read-only for the caller until cbox_compat_job_clear. */
	char *workdir; /* the job's fresh directory, removed by cbox_compat_job_clear */
	char *cwd;     /* workdir, or <workdir>/work with private_dir */
};

/* Frees what cbox_compat_jobs_run allocated in job (not argv or data) and removes its work
 * directory (never following symlinks or crossing mount points); NULL-safe. */
void cbox_compat_job_clear(struct cbox_compat_job *job);

/*
 * Run jobs[0..n), at most parallel (>= 1) at a time, calling done(job, ctx) in the order they
 * end (from this thread). A job that cannot be started is reported through done with
 * spawn_failed set and the reason in job->err. Returns 0 once every job ended, or < 0 with err
 * only when the runner itself cannot go on (poll failing); jobs still running are then killed.
 */
int cbox_compat_jobs_run(struct cbox_compat_job **jobs, size_t n, unsigned parallel,
                         void (*done)(struct cbox_compat_job *job, void *ctx), void *ctx,
                         struct cbox_err **err);

/* Seconds on the monotonic clock. */
double cbox_compat_now(void);
