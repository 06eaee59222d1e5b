/*
 * `cbox-compat report`: README.md and matrix.tsv from the syscall table and the results.
 * The output is a pure function of its inputs (sorted, no timestamps, no host names), so
 * regenerating it gives no diff when nothing changed and the files can be committed.
 */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FAIL_LIST_CAP 200

int cbox_compat_matrix_build(const struct cbox_compat_table *table,
                             struct cbox_compat_results **results, const bool *present,
                             struct cbox_compat_matrix *m, struct cbox_err **err)
{
	*m = (struct cbox_compat_matrix){.table = table, .results = results, .present = present};
	m->rows = calloc(table->n + 1, sizeof(*m->rows));
	if (m->rows == NULL)
		return cbox_err_set(err, ENOMEM, "matrix");
	for (size_t t = 0; t < cbox_compat_ntargets; t++) {
		size_t n;
		CBOX_AUTOFREE struct cbox_compat_result **rows =
		    cbox_compat_results_sorted(results[t], &n);
		if (n == (size_t)-1)
			return cbox_err_set(err, ENOMEM, "matrix");
		for (size_t i = 0; i < n; i++) {
			const struct cbox_compat_syscall *sys =
			    cbox_compat_table_get(table, rows[i]->syscall);
			if (sys == NULL)
				continue;
			struct cbox_compat_matrix_row *row = &m->rows[sys - table->rows];
			row->ran[t]++;
			row->pass[t] += rows[i]->status == CBOX_COMPAT_PASS;
		}
	}
	for (size_t i = 0; i < table->n; i++) {
		/* "cases": how many distinct cases any target reported for the syscall. */
		size_t most = 0;
		for (size_t t = 0; t < cbox_compat_ntargets; t++)
			most = m->rows[i].ran[t] > most ? m->rows[i].ran[t] : most;
		m->rows[i].cases = most;
		m->exercised += m->rows[i].pass[0] > 0;
		m->levels[table->rows[i].level]++;
	}
	return 0;
}

void cbox_compat_matrix_free(struct cbox_compat_matrix *m)
{
	free(m->rows);
	m->rows = NULL;
}

/* A note for a Markdown table cell: '|' escaped, newlines flattened. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void cell_note(FILE *f, const struct cbox_compat_syscall *sys)
{
	if (sys->level == CBOX_COMPAT_REFUSED) {
		fprintf(f, "%s", *sys->err_name ? sys->err_name : "refused");
		if (*sys->note)
			fputs(": ", f);
	}
	md_cell(f, sys->note);
}

static void summary(FILE *f, const struct cbox_compat_matrix *m)
{
	const struct cbox_compat_table *table = m->table;
	fprintf(f, "## Summary\n\n");
	fprintf(f, "- Syscalls in the sentry's table: %zu (full %zu, partial %zu, refused %zu)\n",
	        table->n, m->levels[0], m->levels[1], m->levels[2]);
	fprintf(f,
	        "- Distinct syscalls exercised natively (at least one natively passing case): "
	        "%zu\n\n",
	        m->exercised);
	fprintf(f, "| target | cases | pass | fail | skip | crash | timeout | pass rate vs native "
	           "|\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
	const struct cbox_compat_results *native = m->results[0];
	for (size_t t = 0; t < cbox_compat_ntargets; t++) {
		if (!m->present[t])
			continue;
		size_t c[CBOX_COMPAT_NSTATUS] = {0}, n, both = 0, npass = 0;
		CBOX_AUTOFREE struct cbox_compat_result **rows =
		    cbox_compat_results_sorted(m->results[t], &n);
		for (size_t i = 0; rows && i < n; i++) {
			c[rows[i]->status]++;
			const struct cbox_compat_result *nr =
			    cbox_compat_results_get(native, rows[i]->name);
			both += rows[i]->status == CBOX_COMPAT_PASS && nr &&
			        nr->status == CBOX_COMPAT_PASS;
		}
		CBOX_AUTOFREE struct cbox_compat_result **nrows =
		    cbox_compat_results_sorted(native, &npass);
		size_t np = 0;
		for (size_t i = 0; nrows && i < npass; i++)
			np += nrows[i]->status == CBOX_COMPAT_PASS;
		fprintf(f, "| %s | %zu | %zu | %zu | %zu | %zu | %zu | ",
		        cbox_compat_targets[t].name, rows ? n : 0, c[0], c[1], c[2], c[3], c[4]);
		if (np)
			fprintf(f, "%.1f%% (%zu/%zu) |\n", 100.0 * (double)both / (double)np, both,
			        np);
		else
			fprintf(f, "- |\n");
	}
	fputc('\n', f);
}

static void syscall_table(FILE *f, const struct cbox_compat_matrix *m)
{
	fprintf(f, "## Syscalls\n\nOne row per syscall of the table, in number order. A target "
	           "column shows passing/run cases.\n\n| nr | syscall | level | cases | native |");
	for (size_t t = 1; t < cbox_compat_ntargets; t++)
		if (m->present[t])
			fprintf(f, " %s |", cbox_compat_targets[t].name);
	fprintf(f, " notes |\n|---:|---|---|---:|---:|");
	for (size_t t = 1; t < cbox_compat_ntargets; t++)
		if (m->present[t])
			fprintf(f, "---:|");
	fprintf(f, "---|\n");
	for (size_t i = 0; i < m->table->n; i++) {
		const struct cbox_compat_syscall *sys = &m->table->rows[i];
		const struct cbox_compat_matrix_row *row = &m->rows[i];
		fprintf(f, "| %ld | %s | %s | %zu | %zu |", sys->nr, sys->name,
		        cbox_compat_level_name(sys->level), row->cases, row->pass[0]);
		for (size_t t = 1; t < cbox_compat_ntargets; t++) {
			if (!m->present[t])
				continue;
			if (row->ran[t])
				fprintf(f, " %zu/%zu |", row->pass[t], row->ran[t]);
			else
				fprintf(f, " - |");
		}
		fputc(' ', f);
		cell_note(f, sys);
		fprintf(f, " |\n");
	}
	fputc('\n', f);
}

static void failing(FILE *f, const struct cbox_compat_matrix *m)
{
	fprintf(f,
	        "## Failing cases\n\nPer target, the natively passing cases that do not pass "
	        "there (at most %d listed).\n",
	        FAIL_LIST_CAP);
	for (size_t t = 1; t < cbox_compat_ntargets; t++) {
		if (!m->present[t])
			continue;
		fprintf(f, "\n### %s\n\n", cbox_compat_targets[t].name);
		size_t n, shown = 0, total = 0;
		CBOX_AUTOFREE struct cbox_compat_result **rows =
		    cbox_compat_results_sorted(m->results[t], &n);
		for (size_t i = 0; rows && i < n; i++) {
			const struct cbox_compat_result *nr =
			    cbox_compat_results_get(m->results[0], rows[i]->name);
			if (rows[i]->status == CBOX_COMPAT_PASS || !nr ||
			    nr->status != CBOX_COMPAT_PASS)
				continue;
			if (++total > FAIL_LIST_CAP)
				continue;
			shown++;
			fprintf(f, "- `%s`: %s", rows[i]->name,
			        cbox_compat_status_name(rows[i]->status));
			if (*rows[i]->msg) {
				fputs(": ", f);
				md_cell(f, rows[i]->msg);
			}
			fputc('\n', f);
		}
		if (total == 0)
			fprintf(f, "None.\n");
		else if (total > shown)
			fprintf(f, "- ... and %zu more\n", total - shown);
	}
}

int cbox_compat_report_readme(FILE *f, const struct cbox_compat_matrix *m)
{
	fprintf(f, "# cbox syscall compatibility matrix\n\n"
	           "Generated by `cbox-compat report` from the sentry's syscall table (`cbox "
	           "syscalls --json`) and the results of the test programs in `tests/syscalls/`. "
	           "Do not edit by hand. To regenerate:\n\n"
	           "```\ncbox-compat run && cbox-compat report\n```\n\n"
	           "A case counts only once it passes natively: the pass rate of a target is the "
	           "share of natively passing cases that also pass there.\n\n");
	summary(f, m);
	syscall_table(f, m);
	failing(f, m);
	return ferror(f) ? -EIO : 0;
}

int cbox_compat_report_tsv(FILE *f, const struct cbox_compat_matrix *m)
{
	fprintf(f, "nr\tname\tlevel\tcases\tnative_pass");
	for (size_t t = 1; t < cbox_compat_ntargets; t++)
		if (m->present[t])
			fprintf(f, "\t%s_pass\t%s_run", cbox_compat_targets[t].name,
			        cbox_compat_targets[t].name);
	fprintf(f, "\terrno\tnote\n");
	for (size_t i = 0; i < m->table->n; i++) {
		const struct cbox_compat_syscall *sys = &m->table->rows[i];
		const struct cbox_compat_matrix_row *row = &m->rows[i];
		fprintf(f, "%ld\t%s\t%s\t%zu\t%zu", sys->nr, sys->name,
		        cbox_compat_level_name(sys->level), row->cases, row->pass[0]);
		for (size_t t = 1; t < cbox_compat_ntargets; t++)
			if (m->present[t])
				fprintf(f, "\t%zu\t%zu", row->pass[t], row->ran[t]);
		CBOX_AUTOFREE char *note = cbox_compat_tsv_escape(sys->note);
		fprintf(f, "\t%s\t%s\n", sys->err_name, note ? note : "");
	}
	return ferror(f) ? -EIO : 0;
}
