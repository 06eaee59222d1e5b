/* Unit tests of cbox-compat's parsers: result lines, --only globs, suite files, exit maps and
 * the TSV escaping of messages. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

static struct cbox_compat_result *line(const char *s)
{
	struct cbox_compat_result *r = NULL;
	struct cbox_err *err = NULL;
	int rc = cbox_compat_parse_case_line(s, strlen(s), &r, &err);
	cr_assert_geq(rc, 0);
	cr_assert_null(err);
	cr_assert_eq(rc == 1, r != NULL);
	return r;
}

Test(case_line, pass_fail_skip_crash_timeout)
{
	CBOX_AUTO(cbox_compat_result) *p = line("PASS openat.creat_excl_exists");
	cr_assert_not_null(p);
	cr_assert_str_eq(p->name, "openat.creat_excl_exists");
	cr_assert_str_eq(p->syscall, "openat");
	cr_assert_eq(p->status, CBOX_COMPAT_PASS);
	cr_assert_str_eq(p->msg, "");

	CBOX_AUTO(cbox_compat_result) *f =
	    line("FAIL openat.x: line 12: openat(...) expected -1/EEXIST, got 3");
	cr_assert_eq(f->status, CBOX_COMPAT_FAIL);
	cr_assert_str_eq(f->name, "openat.x");
	cr_assert_str_eq(f->msg, "line 12: openat(...) expected -1/EEXIST, got 3");

	CBOX_AUTO(cbox_compat_result) *s = line("SKIP rt_sigaction.y: no: reason");
	cr_assert_eq(s->status, CBOX_COMPAT_SKIP);
	cr_assert_str_eq(s->syscall, "rt_sigaction");
	cr_assert_str_eq(s->msg, "no: reason");

	CBOX_AUTO(cbox_compat_result) *c = line("CRASH a.b: killed by signal 11");
	cr_assert_eq(c->status, CBOX_COMPAT_CRASH);
	CBOX_AUTO(cbox_compat_result) *t = line("TIMEOUT a.c: no result after 10 s");
	cr_assert_eq(t->status, CBOX_COMPAT_TIMEOUT);
}

Test(case_line, not_case_lines)
{
	const char *bad[] = {"# summary: 1 passed, 0 failed",
	                     "",
	                     "PASS",
	                     "PASS ",
	                     "pass a.b",
	                     "Pass a.b",
	                     "PASSED a.b",
	                     "PASS a b",
	                     "PASS a/b",
	                     "hello world",
	                     "FAIL : msg"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_null(line(bad[i]), "'%s' taken for a case line", bad[i]);
}

Test(case_line, binary_garbage_is_bounded)
{
	char buf[] = {'P', 'A', 'S', 'S', ' ', 'x', '.', 'y', ':', ' ', 'a', '\0', 'b'};
	struct cbox_compat_result *r = NULL;
	cr_assert_eq(cbox_compat_parse_case_line(buf, sizeof(buf), &r, NULL), 1);
	cr_assert_str_eq(r->name, "x.y");
	cr_assert_str_eq(r->msg, "(message holds a NUL byte)");
	cbox_compat_result_free(r);
	/* The line is not NUL-terminated: the parser must stop at len. */
	cr_assert_eq(cbox_compat_parse_case_line("PASS abc.def", 8, &r, NULL), 1);
	cr_assert_str_eq(r->name, "abc");
	cbox_compat_result_free(r);
}

Test(select, globs_on_name_and_prefix)
{
	cr_assert(cbox_compat_selected(NULL, "openat.x"));
	cr_assert(cbox_compat_selected("", "openat.x"));
	cr_assert(cbox_compat_selected("open*,stat*", "openat.x"));
	cr_assert(cbox_compat_selected("open*,stat*", "stat.y"));
	cr_assert_not(cbox_compat_selected("open*,stat*", "fstat.y"));
	cr_assert(cbox_compat_selected("read", "read.short"));
	cr_assert_not(cbox_compat_selected("read", "readv.short"));
	cr_assert(cbox_compat_selected("*.short", "readv.short"));
	cr_assert(cbox_compat_selected("readv.short", "readv.short"));
	cr_assert_not(cbox_compat_selected(",", "readv.short"));
	cr_assert(cbox_compat_selected("x,,readv", "readv.short"));
}

Test(suite, names_comments_and_malformed_lines)
{
	const char text[] = "# a comment\n"
	                    "\n"
	                    "true\n"
	                    "named\texit 77\n"
	                    "\tno name\n"
	                    "empty\t   \n"
	                    "bad name\techo\n"
	                    "named\techo again\n"
	                    "nul \0 byte\n"
	                    "  # indented comment\r\n"
	                    "last\tfalse";
	char *log = NULL;
	size_t loglen = 0;
	FILE *warn = open_memstream(&log, &loglen);
	struct cbox_compat_suite s;
	struct cbox_err *err = NULL;
	int n = cbox_compat_suite_parse("t.suite", text, sizeof(text) - 1, warn, &s, &err);
	fclose(warn);
	cr_assert_eq(n, 3, "got %d cases; log: %s", n, log);
	cr_assert_str_eq(s.cases[0].name, "line3");
	cr_assert_str_eq(s.cases[0].cmd, "true");
	cr_assert_str_eq(s.cases[1].name, "named");
	cr_assert_str_eq(s.cases[1].cmd, "exit 77");
	cr_assert_str_eq(s.cases[2].name, "last");
	cr_assert_str_eq(s.cases[2].cmd, "false");
	cr_assert(strstr(log, "suite t.suite:5: empty case name"), "%s", log);
	cr_assert(strstr(log, "suite t.suite:6: empty command"), "%s", log);
	cr_assert(strstr(log, "suite t.suite:7: case name holds"), "%s", log);
	cr_assert(strstr(log, "suite t.suite:8: case name already used"), "%s", log);
	cr_assert(strstr(log, "suite t.suite:9: NUL byte"), "%s", log);
	cbox_compat_suite_free(&s);
	free(log);
}

Test(suite, long_line)
{
	size_t len = 5000;
	char *text = malloc(len + 10);
	memset(text, 'x', len);
	memcpy(text + len, "\nok\n", 4);
	struct cbox_compat_suite s;
	int n = cbox_compat_suite_parse("f", text, len + 4, NULL, &s, NULL);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(s.cases[0].name, "line2");
	cbox_compat_suite_free(&s);
	free(text);
}

Test(exit_map, default_and_custom)
{
	struct cbox_compat_exit_map m;
	cr_assert_eq(cbox_compat_exit_map_parse("0=pass,77=skip,*=fail", &m, NULL), 0);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 0), CBOX_COMPAT_PASS);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 77), CBOX_COMPAT_SKIP);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 1), CBOX_COMPAT_FAIL);
	cr_assert_eq(cbox_compat_exit_map_parse("32=skip,255=crash,*=pass", &m, NULL), 0);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 255), CBOX_COMPAT_CRASH);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 3), CBOX_COMPAT_PASS);
	cr_assert_eq(cbox_compat_exit_map_parse("0=pass", &m, NULL), 0);
	cr_assert_eq(cbox_compat_exit_map_get(&m, 9), CBOX_COMPAT_FAIL, "no '*': fail");
}

Test(exit_map, errors)
{
	const char *bad[] = {"",         "0",       "=pass",  "0=",      "0=ok",
	                     "256=pass", "-1=pass", "a=pass", "0=pass,", "99999999999=pass",
	                     "0=PASS"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cbox_compat_exit_map m;
		struct cbox_err *err = NULL;
		cr_assert_lt(cbox_compat_exit_map_parse(bad[i], &m, &err), 0, "'%s'", bad[i]);
		cr_assert_not_null(err);
		cbox_err_free(&err);
	}
}

Test(tsv, escape_roundtrip)
{
	const char *s = "a\tb\nc\\d\re\x01"
	                "f";
	char *e = cbox_compat_tsv_escape(s);
	cr_assert_str_eq(e, "a\\tb\\nc\\\\d\\re\\x01f");
	char *u = cbox_compat_tsv_unescape(e, strlen(e));
	cr_assert_str_eq(u, s);
	free(e);
	free(u);
	u = cbox_compat_tsv_unescape("x\\q\\x00\\", 8);
	cr_assert_str_eq(u, "x\\q\\x00\\");
	free(u);
}
