#pragma once
/*
 * The compatibility matrix: per syscall of the table, how many cases each target ran and
 * passed; and its two renderings, README.md and matrix.tsv (report.c).
 */
#include <stdio.h>

#include "cli.h"

#define CBOX_COMPAT_MAX_TARGETS 16

struct cbox_compat_matrix_row {
	size_t cases;                         /* distinct cases (the most any target ran) */
	size_t ran[CBOX_COMPAT_MAX_TARGETS];  /* per target (index of cbox_compat_targets) */
	size_t pass[CBOX_COMPAT_MAX_TARGETS]; /* ... of which passed */
};

struct cbox_compat_matrix {
	const struct cbox_compat_table *table;      /* borrowed */
	struct cbox_compat_results *const *results; /* borrowed, per target; [0] native */
	const bool *present;                        /* borrowed, per target: has a results file */
	struct cbox_compat_matrix_row *rows;        /* owned, parallel to table->rows */
	size_t exercised;                           /* syscalls with >= 1 natively passing case */
	size_t levels[3];                           /* syscalls per level */
};

/* Build the matrix from the table and the results of every target (as loaded by
 * cbox_compat_results_load_all). Cases whose syscall is not in the table are not counted
 * (`cbox-compat check` reports them). Returns 0, < 0 with err (ENOMEM). */
int cbox_compat_matrix_build(const struct cbox_compat_table *table,
                             struct cbox_compat_results **results, const bool *present,
                             struct cbox_compat_matrix *m, struct cbox_err **err);
void cbox_compat_matrix_free(struct cbox_compat_matrix *m);

/* Write README.md / matrix.tsv contents to f. Return 0, -EIO on a write error. */
int cbox_compat_report_readme(FILE *f, const struct cbox_compat_matrix *m);
int cbox_compat_report_tsv(FILE *f, const struct cbox_compat_matrix *m);
