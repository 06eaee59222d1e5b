#pragma once
/*
 * The state of one `cbox-compat run` (run.c lists the cases and saves the results; jobs.c
 * builds the jobs and turns their output into results).
 */
#include <stddef.h>

#include "cli.h"

struct cbox_compat_program {
	char *path;       /* owned */
	const char *name; /* basename, inside path */
	char **cases;     /* selected case names from `PROG --list`, owned */
	size_t ncases;
};

struct cbox_compat_run {
	/* Options (borrowed strings). */
	const char *only;       /* --only globs, or NULL */
	const char *tests_dir;  /* --tests */
	const char *suite_file; /* --suite, or NULL: run the test programs */
	const char *results_dir;
	const char *cbox_run;
	const char *cbox; /* for the OCI tier targets */
	struct cbox_compat_exit_map exit_map;
	unsigned parallel, timeout;

	const struct cbox_compat_target **targets; /* owned array */
	size_t ntargets;

	/* State. */
	struct cbox_compat_program *progs; /* owned */
	size_t nprogs;
	struct cbox_compat_suite suite;
	struct cbox_compat_results **fresh; /* per target: what this run produced */
	char *caps_json;                    /* owned: `cbox spec`'s capabilities, for OCI tiers */
	char *tests_abs;                    /* owned: realpath of tests_dir */
};

/* Prepare, run every job, merge the results into the TSVs and print the summary.
 * Returns 0, or < 0 with err on a setup error (bad tests dir, unwritable results). */
int cbox_compat_run_execute(struct cbox_compat_run *run, struct cbox_err **err);

/* Run the jobs (programs or suite commands) on every target and fill run->fresh, printing one
 * progress line per job. Returns 0, < 0 with err when the runner itself fails. */
int cbox_compat_run_jobs(struct cbox_compat_run *run, struct cbox_err **err);

/* Frees what run owns (not the borrowed option strings). */
void cbox_compat_run_free(struct cbox_compat_run *run);
