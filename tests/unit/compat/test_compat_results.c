/* Unit tests of cbox-compat's results files: load, save (sorted, escaped) and merge. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

static char dir[] = "/tmp/cbox-compat-ut.XXXXXX";
static char path[256];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/native.tsv", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

static void put(struct cbox_compat_results *rs, const char *name, enum cbox_compat_status st,
                const char *msg)
{
	cr_assert_eq(cbox_compat_results_put(rs, cbox_compat_result_new(name, NULL, st, msg)), 0);
}

static char *slurp(void)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char *buf = calloc(1, 65536);
	fread(buf, 1, 65535, f);
	fclose(f);
	return buf;
}

Test(results, save_sorted_and_escaped, .init = setup, .fini = teardown)
{
	CBOX_AUTO(cbox_compat_results) *rs = cbox_compat_results_new();
	put(rs, "write.b", CBOX_COMPAT_FAIL, "line 3:\tgot\n2");
	put(rs, "read.a", CBOX_COMPAT_PASS, "");
	put(rs, "read.a", CBOX_COMPAT_SKIP, "replaced");
	cr_assert_eq(cbox_compat_results_save(rs, path, NULL), 0);
	char *text = slurp();
	cr_assert_str_eq(text, "read.a\tread\tskip\treplaced\n"
	                       "write.b\twrite\tfail\tline 3:\\tgot\\n2\n");
	free(text);

	CBOX_AUTO(cbox_compat_results) *back = cbox_compat_results_new();
	cr_assert_eq(cbox_compat_results_load(back, path, NULL, NULL), 2);
	struct cbox_compat_result *r = cbox_compat_results_get(back, "write.b");
	cr_assert_not_null(r);
	cr_assert_str_eq(r->msg, "line 3:\tgot\n2");
	cr_assert_eq(r->status, CBOX_COMPAT_FAIL);
}

Test(results, merge_replaces_only_the_run_cases, .init = setup, .fini = teardown)
{
	CBOX_AUTO(cbox_compat_results) *first = cbox_compat_results_new();
	put(first, "read.a", CBOX_COMPAT_PASS, "");
	put(first, "read.b", CBOX_COMPAT_FAIL, "old");
	put(first, "write.c", CBOX_COMPAT_CRASH, "x");
	cr_assert_eq(cbox_compat_results_merge(path, first, NULL), 0);

	CBOX_AUTO(cbox_compat_results) *again = cbox_compat_results_new();
	put(again, "read.b", CBOX_COMPAT_PASS, "");
	put(again, "stat.d", CBOX_COMPAT_TIMEOUT, "slow");
	cr_assert_eq(cbox_compat_results_merge(path, again, NULL), 0);
	char *text = slurp();
	cr_assert_str_eq(text, "read.a\tread\tpass\t\n"
	                       "read.b\tread\tpass\t\n"
	                       "stat.d\tstat\ttimeout\tslow\n"
	                       "write.c\twrite\tcrash\tx\n");
	free(text);
}

Test(results, bad_lines_are_skipped, .init = setup, .fini = teardown)
{
	FILE *f = fopen(path, "w");
	fputs("a.b\ta\tpass\t\nno tabs here\nc.d\tc\tbogus\tm\n\ne.f\te\tfail\tm\tmore\n", f);
	fclose(f);
	char *log = NULL;
	size_t n = 0;
	FILE *warn = open_memstream(&log, &n);
	CBOX_AUTO(cbox_compat_results) *rs = cbox_compat_results_new();
	cr_assert_eq(cbox_compat_results_load(rs, path, warn, NULL), 2);
	fclose(warn);
	cr_assert(strstr(log, ":2: expected 4"), "%s", log);
	cr_assert(strstr(log, ":3: "), "%s", log);
	/* A tab inside the message field can only come from a hand edit: kept, not lost. */
	cr_assert_str_eq(cbox_compat_results_get(rs, "e.f")->msg, "m\tmore");
	free(log);
}

Test(results, missing_file_is_empty)
{
	CBOX_AUTO(cbox_compat_results) *rs = cbox_compat_results_new();
	cr_assert_eq(cbox_compat_results_load(rs, "/nonexistent/x.tsv", NULL, NULL), 0);
	size_t n;
	cr_assert_null(cbox_compat_results_sorted(rs, &n));
	cr_assert_eq(n, 0);
}
