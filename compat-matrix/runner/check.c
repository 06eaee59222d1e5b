/*
 * The consistency rule between the sentry's syscall table and the results: what the table
 * promises (full / partial / refused) must be what the sandbox does. Only cases that pass
 * natively are evidence: a case failing on Linux itself says nothing about the sentry.
 */
#include "compat.h"

#include <stdlib.h>
#include <string.h>

struct sys_tally {
	size_t ran;    /* natively passing cases the target ran */
	size_t passed; /* ... of which passed there */
};

static bool native_pass(const struct cbox_compat_results *native, const char *name)
{
	const struct cbox_compat_result *n = cbox_compat_results_get(native, name);
	return n != NULL && n->status == CBOX_COMPAT_PASS;
}

/* Rules (a) and (c), one case at a time; the tallies feed rule (b). */
static void check_case(const struct cbox_compat_syscall *sys, const char *target,
                       const struct cbox_compat_result *r, FILE *out,
                       struct cbox_compat_check_stats *stats)
{
	if (r->status == CBOX_COMPAT_PASS)
		return;
	if (sys->level == CBOX_COMPAT_FULL) {
		fprintf(out,
		        "error: %s: %s is declared full but case %s is %s (passes natively)%s%s\n",
		        target, sys->name, r->name, cbox_compat_status_name(r->status),
		        *r->msg ? ": " : "", r->msg);
		stats->errors++;
	} else if (sys->level == CBOX_COMPAT_PARTIAL) {
		fprintf(out, "warning: %s: %s (partial: %s): case %s is %s%s%s\n", target,
		        sys->name, *sys->note ? sys->note : "no note", r->name,
		        cbox_compat_status_name(r->status), *r->msg ? ": " : "", r->msg);
		stats->warnings++;
	}
}

void cbox_compat_check_target(const struct cbox_compat_table *table, const char *target,
                              const struct cbox_compat_results *native,
                              const struct cbox_compat_results *results, FILE *out,
                              struct cbox_compat_check_stats *stats)
{
	size_t n;
	CBOX_AUTOFREE struct cbox_compat_result **rows = cbox_compat_results_sorted(results, &n);
	if (n == (size_t)-1) {
		fprintf(out, "error: %s: out of memory while checking\n", target);
		stats->errors++;
		return;
	}
	CBOX_AUTOFREE struct sys_tally *tally = calloc(table->n + 1, sizeof(*tally));
	if (tally == NULL) {
		fprintf(out, "error: %s: out of memory while checking\n", target);
		stats->errors++;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cbox_compat_syscall *sys =
		    cbox_compat_table_get(table, rows[i]->syscall);
		if (sys == NULL || !native_pass(native, rows[i]->name))
			continue;
		size_t idx = (size_t)(sys - table->rows);
		tally[idx].ran++;
		tally[idx].passed += rows[i]->status == CBOX_COMPAT_PASS;
		check_case(sys, target, rows[i], out, stats);
	}
	/* Rule (b): a refused syscall must not be answered. If every natively passing case of
	 * it passes in the box, either the table understates the support or the sentry lets
	 * the call reach the host: both must be fixed, so it is an error, not a warning. */
	for (size_t i = 0; i < table->n; i++) {
		const struct cbox_compat_syscall *sys = &table->rows[i];
		if (sys->level != CBOX_COMPAT_REFUSED || tally[i].ran == 0 ||
		    tally[i].passed != tally[i].ran)
			continue;
		fprintf(out,
		        "error: %s: %s is declared refused but answered: all %zu natively passing "
		        "case(s) pass\n",
		        target, sys->name, tally[i].ran);
		stats->errors++;
	}
}

void cbox_compat_check_names(const struct cbox_compat_table *table, const char *target,
                             const struct cbox_compat_results *results, FILE *out,
                             struct cbox_compat_check_stats *stats)
{
	size_t n;
	CBOX_AUTOFREE struct cbox_compat_result **rows = cbox_compat_results_sorted(results, &n);
	if (n == (size_t)-1) {
		fprintf(out, "error: %s: out of memory while checking\n", target);
		stats->errors++;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i]->syscall, "-") == 0 ||
		    cbox_compat_table_get(table, rows[i]->syscall) != NULL)
			continue;
		fprintf(out, "error: %s: case %s names syscall '%s', which is not in the table\n",
		        target, rows[i]->name, rows[i]->syscall);
		stats->errors++;
	}
}
