/* Unit tests of the syscall table parser and the consistency check of cbox-compat. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

static const char table_json[] =
    "[\n"
    " {\"nr\":1,\"name\":\"write\",\"kind\":\"fast\",\"level\":\"full\",\"errno\":\"\","
    "\"note\":\"\"},\n"
    " {\"nr\":0,\"name\":\"read\",\"level\":\"full\"},\n"
    " {\"nr\":2,\"name\":\"open\",\"level\":\"partial\",\"note\":\"read-only \\\"rootfs\\\" "
    "\\u00e9\"},\n"
    " {\"nr\":169,\"name\":\"reboot\",\"level\":\"refused\",\"errno\":\"EPERM\","
    "\"note\":\"host\",\"extra\":true}\n"
    "]\n";

static struct cbox_compat_table table;

static void setup(void)
{
	struct cbox_err *err = NULL;
	cr_assert_eq(cbox_compat_table_parse(table_json, strlen(table_json), &table, &err), 0, "%s",
	             err ? err->msg : "");
}

static void teardown(void)
{
	cbox_compat_table_free(&table);
}

Test(table, parses_and_sorts, .init = setup, .fini = teardown)
{
	cr_assert_eq(table.n, 4);
	cr_assert_str_eq(table.rows[0].name, "read");
	cr_assert_str_eq(table.rows[3].name, "reboot");
	cr_assert_eq(table.rows[3].level, CBOX_COMPAT_REFUSED);
	cr_assert_str_eq(table.rows[3].err_name, "EPERM");
	cr_assert_str_eq(cbox_compat_table_get(&table, "open")->note,
	                 "read-only \"rootfs\" \xc3\xa9");
	cr_assert_str_eq(cbox_compat_table_get(&table, "read")->note, "");
	cr_assert_null(cbox_compat_table_get(&table, "nosuch"));
}

Test(table, errors)
{
	const char *bad[] = {"", "{}", "[", "[{]", "[{\"nr\":1,\"name\":\"a\"}]",
	                     "[{\"nr\":1,\"name\":\"a\",\"level\":\"maybe\"}]",
	                     "[{\"nr\":\"x\",\"name\":\"a\",\"level\":\"full\"}]",
	                     /* (one string: two entries with the same name) */
	                     ("[{\"nr\":1,\"name\":\"a\",\"level\":\"full\"},"
	                      "{\"nr\":2,\"name\":\"a\",\"level\":\"full\"}]"),
	                     "[{\"nr\":1,\"name\":\"a\",\"level\":\"full\",\"x\":[1]}]",
	                     "[{\"nr\":1,\"name\":\"a\\u0000\",\"level\":\"full\"}]",
	                     "[] trailing"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cbox_compat_table t;
		struct cbox_err *err = NULL;
		cr_assert_lt(cbox_compat_table_parse(bad[i], strlen(bad[i]), &t, &err), 0, "'%s'",
		             bad[i]);
		cr_assert_not_null(err);
		cbox_err_free(&err);
	}
}

static void put(struct cbox_compat_results *rs, const char *name, enum cbox_compat_status st)
{
	cr_assert_eq(cbox_compat_results_put(rs, cbox_compat_result_new(name, NULL, st, "m")), 0);
}

static char *check(struct cbox_compat_results *native, struct cbox_compat_results *box,
                   struct cbox_compat_check_stats *st)
{
	char *log = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&log, &n);
	*st = (struct cbox_compat_check_stats){0};
	cbox_compat_check_names(&table, "box", box, f, st);
	cbox_compat_check_target(&table, "box", native, box, f, st);
	fclose(f);
	return log;
}

Test(check, rules, .init = setup, .fini = teardown)
{
	CBOX_AUTO(cbox_compat_results) *native = cbox_compat_results_new();
	CBOX_AUTO(cbox_compat_results) *box = cbox_compat_results_new();
	put(native, "read.a", CBOX_COMPAT_PASS);
	put(native, "read.b", CBOX_COMPAT_FAIL); /* fails natively: no evidence */
	put(native, "write.a", CBOX_COMPAT_PASS);
	put(native, "open.a", CBOX_COMPAT_PASS);
	put(native, "reboot.a", CBOX_COMPAT_PASS);
	put(box, "read.a", CBOX_COMPAT_PASS);
	put(box, "read.b", CBOX_COMPAT_FAIL);
	put(box, "write.a", CBOX_COMPAT_CRASH);
	put(box, "open.a", CBOX_COMPAT_FAIL);
	put(box, "reboot.a", CBOX_COMPAT_PASS);
	put(box, "raed.typo", CBOX_COMPAT_PASS);
	put(box, "suite1", CBOX_COMPAT_PASS);
	cbox_compat_results_get(box, "suite1")->syscall[0] = '-';
	cbox_compat_results_get(box, "suite1")->syscall[1] = '\0';

	struct cbox_compat_check_stats st;
	char *log = check(native, box, &st);
	cr_assert_eq(st.errors, 3, "%s", log);
	cr_assert_eq(st.warnings, 1, "%s", log);
	cr_assert(strstr(log, "error: box: write is declared full but case write.a is crash"), "%s",
	          log);
	cr_assert(strstr(log, "error: box: reboot is declared refused but answered"), "%s", log);
	cr_assert(strstr(log, "error: box: case raed.typo names syscall 'raed'"), "%s", log);
	cr_assert(strstr(log, "warning: box: open (partial: read-only"), "%s", log);
	cr_assert_null(strstr(log, "read.b"), "%s", log);
	free(log);
}

Test(check, refused_and_refusing_is_fine, .init = setup, .fini = teardown)
{
	CBOX_AUTO(cbox_compat_results) *native = cbox_compat_results_new();
	CBOX_AUTO(cbox_compat_results) *box = cbox_compat_results_new();
	put(native, "reboot.a", CBOX_COMPAT_PASS);
	put(native, "reboot.b", CBOX_COMPAT_PASS);
	put(box, "reboot.a", CBOX_COMPAT_PASS);
	put(box, "reboot.b", CBOX_COMPAT_FAIL);
	put(native, "write.a", CBOX_COMPAT_PASS); /* not run on box: not judged */
	struct cbox_compat_check_stats st;
	char *log = check(native, box, &st);
	cr_assert_eq(st.errors, 0, "%s", log);
	cr_assert_eq(st.warnings, 0, "%s", log);
	free(log);
}

/* report --check: only the table-derived columns of matrix.tsv are compared. */
static const char tsv_head[] = "nr\tname\tlevel\tcases\tnative_pass\terrno\tnote\n";

Test(stale, pass_counts_do_not_matter)
{
	char a[256], b[256];
	snprintf(a, sizeof(a), "%s0\tread\tfull\t8\t8\t\t\n", tsv_head);
	snprintf(b, sizeof(b), "%s0\tread\tfull\t8\t7\t\t\n", tsv_head);
	cr_assert_eq(cbox_compat_report_stale(a, b, stderr), 0);
}

Test(stale, level_note_and_rows_do)
{
	char a[256], b[256], c[256];
	snprintf(a, sizeof(a), "%s0\tread\tfull\t8\t8\t\t\n2\topen\tpartial\t3\t3\t\tx\n",
	         tsv_head);
	snprintf(b, sizeof(b), "%s0\tread\tpartial\t8\t8\t\t\n2\topen\tpartial\t3\t3\t\ty\n",
	         tsv_head);
	snprintf(c, sizeof(c), "%s0\tread\tfull\t8\t8\t\t\n", tsv_head);
	FILE *devnull = fopen("/dev/null", "we");
	cr_assert_eq(cbox_compat_report_stale(a, b, devnull), 2);
	cr_assert_eq(cbox_compat_report_stale(a, c, devnull), 1);
	fclose(devnull);
}

Test(stale, missing_column_is_einval)
{
	const char bad[] = "nr\tname\tlevel\n0\tread\tfull\n";
	char good[256];
	snprintf(good, sizeof(good), "%s0\tread\tfull\t8\t8\t\t\n", tsv_head);
	cr_assert_eq(cbox_compat_report_stale(bad, good, stderr), -EINVAL);
	cr_assert_eq(cbox_compat_report_stale(good, "", stderr), -EINVAL);
}
