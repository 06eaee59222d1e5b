/* `cbox-compat report --check`: whether a committed matrix.tsv is still current. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

/* The stable columns of matrix.tsv, by header name. */
static const char *const stable_cols[] = {"nr", "name", "level", "cases", "errno", "note"};
#define NSTABLE (sizeof(stable_cols) / sizeof(stable_cols[0]))

/* Split one line (without its newline) at tabs into at most max fields (pointers into s,
 * which is modified). Returns the number of fields. */
static size_t split_tabs(char *s, char **f, size_t max)
{
	size_t n = 0;
	while (n < max) {
		f[n++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			break;
		*t = '\0';
		s = t + 1;
	}
	return n;
}

/* The stable fields of every row of tsv, one string per row ("nr\tname\t..."), in *rows. */
static int stable_rows(const char *tsv, char ***rows, size_t *nrows)
{
	CBOX_AUTOFREE char *copy = strdup(tsv);
	if (!copy)
		return -ENOMEM;
	*rows = NULL;
	*nrows = 0;
	int idx[NSTABLE];
	char *save = NULL;
	bool header = true;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[64];
		size_t n = split_tabs(line, f, 64);
		if (header) {
			for (size_t c = 0; c < NSTABLE; c++) {
				idx[c] = -1;
				for (size_t i = 0; i < n; i++)
					if (strcmp(f[i], stable_cols[c]) == 0)
						idx[c] = (int)i;
				if (idx[c] < 0)
					return -EINVAL;
			}
			header = false;
			continue;
		}
		char *row = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&row, &len);
		if (!m)
			return -ENOMEM;
		for (size_t c = 0; c < NSTABLE; c++)
			fprintf(m, "%s%s", c ? "\t" : "", (size_t)idx[c] < n ? f[idx[c]] : "");
		if (fclose(m) != 0)
			return -ENOMEM;
		char **grown = realloc(*rows, (*nrows + 1) * sizeof(**rows));
		if (!grown) {
			free(row);
			return -ENOMEM;
		}
		*rows = grown;
		(*rows)[(*nrows)++] = row;
	}
	return header ? -EINVAL : 0;
}

static void free_rows(char **rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
}

int cbox_compat_report_stale(const char *committed, const char *fresh, FILE *diag)
{
	char **a = NULL, **b = NULL;
	size_t na = 0, nb = 0;
	int r = stable_rows(committed, &a, &na);
	if (r == 0)
		r = stable_rows(fresh, &b, &nb);
	if (r == 0) {
		size_t n = na > nb ? na : nb;
		for (size_t i = 0; i < n; i++) {
			const char *x = i < na ? a[i] : "(none)", *y = i < nb ? b[i] : "(none)";
			if (strcmp(x, y) != 0) {
				fprintf(diag, "row %zu: committed: %s\n        now:       %s\n",
				        i + 1, x, y);
				r++;
			}
		}
	}
	free_rows(a, na);
	free_rows(b, nb);
	return r;
}
