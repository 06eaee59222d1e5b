/* Unit tests for lib/log.c: exact text and JSON lines, escaping, level filter, one write per
 * line (checked over a SOCK_SEQPACKET socket, where each write is one message). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/log.h"

static int sock[2] = {-1, -1};

static void setup(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sock), 0);
}

static void teardown(void)
{
	close(sock[0]);
	close(sock[1]);
}

/* One message = one write(2) by the logger. Returns NULL when nothing was written. */
static char *next_write(void)
{
	static char buf[65536];
	ssize_t n = recv(sock[0], buf, sizeof(buf) - 1, 0);
	if (n < 0 && errno == EAGAIN)
		return NULL;
	cr_assert_geq(n, 0);
	buf[n] = '\0';
	return buf;
}

static void expect_text(const char *level, const char *who, const char *msg)
{
	char want[1024];
	char *got = next_write();

	snprintf(want, sizeof(want), "cbox[%s %d]: %s: %s\n", who, (int)getpid(), level, msg);
	cr_assert_not_null(got, "expected a line for %s", msg);
	cr_assert_str_eq(got, want);
}

/* Check a JSON line: exact fields in order, and an RFC 3339 UTC time of the right shape. */
static void expect_json(const char *level, const char *msg_escaped, const char *who_escaped)
{
	char want[1024];
	char *got = next_write();

	cr_assert_not_null(got);
	int n = snprintf(want, sizeof(want),
	                 "{\"level\":\"%s\",\"msg\":\"%s\",\"who\":\"%s\",\"time\":\"", level,
	                 msg_escaped, who_escaped);
	cr_assert_eq(strncmp(got, want, (size_t)n), 0, "got %s\nwant prefix %s", got, want);
	const char *t = got + n;
	const char *shape = "dddd-dd-ddTdd:dd:ddZ";
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == 'd')
			cr_assert(isdigit((unsigned char)t[i]), "bad time in %s", got);
		else
			cr_assert_eq(t[i], shape[i], "bad time in %s", got);
	}
	cr_assert_str_eq(t + strlen(shape), "\"}\n");
}

Test(log, defaults_before_init)
{
	cr_assert_eq(cbox_log_get_fd(), 2);
	cr_assert_eq(cbox_log_get_level(), CBOX_LOG_WARNING);
	cr_assert_str_eq(cbox_log_get_who(), "cbox");
}

Test(log, text_lines_and_level_filter, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_INFO, "sentry");
	cr_assert_eq(cbox_log_get_fd(), sock[1]);
	cr_assert_eq(cbox_log_get_level(), CBOX_LOG_INFO);

	cbox_warn("hello %d", 42);
	expect_text("warning", "sentry", "hello 42");
	cbox_debug("dropped %d", 1);
	cbox_log(CBOX_LOG_DEBUG, "dropped too");
	cr_assert_null(next_write());
	cbox_info("info");
	expect_text("info", "sentry", "info");
	cbox_error("bad");
	expect_text("error", "sentry", "bad");

	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_ERROR, "gofer");
	cbox_warn("dropped");
	cbox_info("dropped");
	cr_assert_null(next_write());
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_DEBUG, "gofer");
	cbox_debug("dbg");
	expect_text("debug", "gofer", "dbg");
}

Test(log, text_escapes_control_bytes, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_WARNING, "sentry");
	cbox_warn("path a\nb\x01\tc");
	expect_text("warning", "sentry", "path a\\x0ab\\x01\tc");
	cbox_warn("trailing newline\n");
	expect_text("warning", "sentry", "trailing newline");
}

Test(log, set_who, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_WARNING, "cbox-run");
	cbox_log_set_who("sentry");
	cr_assert_str_eq(cbox_log_get_who(), "sentry");
	cbox_warn("x");
	expect_text("warning", "sentry", "x");
}

Test(log, json_line_and_escaping, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_JSON, CBOX_LOG_WARNING, "sentry");
	cbox_error("plain");
	expect_json("error", "plain", "sentry");
	cbox_warn("q\"b\\s/n\nt\tc\x01\x1f del\x7f");
	expect_json("warning", "q\\\"b\\\\s/n\\u000at\\u0009c\\u0001\\u001f del\x7f", "sentry");
	cbox_info("dropped");
	cr_assert_null(next_write());

	cbox_log_set_who("a\"b");
	cbox_warn("w");
	expect_json("warning", "w", "a\\\"b");
}

Test(log, json_replaces_invalid_utf8, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_JSON, CBOX_LOG_WARNING, "sentry");
	/* Valid 2- and 4-byte sequences pass; a stray byte, an overlong form, a surrogate and a
	 * truncated sequence become one U+FFFD per byte. */
	cbox_warn("\xc3\xa9 \xf0\x9f\x98\x80 \xff \xc0\xaf \xed\xa0\x80 \xe2\x82");
	expect_json("warning",
	            "\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
	            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd",
	            "sentry");
}

Test(log, long_messages_truncated_in_one_write, .init = setup, .fini = teardown)
{
	static char big[20000];

	memset(big, 'x', sizeof(big) - 1);
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_WARNING, "sentry");
	cbox_warn("%s", big);
	char *got = next_write();
	cr_assert_not_null(got);
	size_t len = strlen(got);
	cr_assert_lt(len, 8192 + 64);
	cr_assert_gt(len, 8000);
	cr_assert_str_eq(got + len - 4, "...\n");
	cr_assert_null(next_write(), "a long line must be a single write");

	/* Escapes are never cut in half: 5000 quotes escape to 10000 bytes. */
	memset(big, '"', 5000);
	big[5000] = '\0';
	cbox_log_init(sock[1], CBOX_LOG_JSON, CBOX_LOG_WARNING, "sentry");
	cbox_warn("%s", big);
	got = next_write();
	cr_assert_not_null(got);
	const char *m = strstr(got, "\"msg\":\"") + 7;
	const char *end = strstr(m, "...\",\"who\":\"sentry\"");
	cr_assert_not_null(end, "no truncation mark in %.100s", got);
	cr_assert_eq((end - m) % 2, 0);
	for (const char *p = m; p < end; p += 2)
		cr_assert(p[0] == '\\' && p[1] == '"');
	cr_assert_gt(end - m, 8000);
	cr_assert_null(next_write());
}

Test(log, raw_writes_bytes_as_given, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_JSON, CBOX_LOG_ERROR, "sentry");
	cbox_log_raw("raw\nline\n", 9);
	cr_assert_str_eq(next_write(), "raw\nline\n");
	cbox_log_raw(NULL, 5);
	cr_assert_null(next_write());
}

Test(log, log_preserves_errno, .init = setup, .fini = teardown)
{
	cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_WARNING, "sentry");
	errno = ENOTDIR;
	cbox_warn("x");
	cbox_log_raw("y", 1);
	cr_assert_eq(errno, ENOTDIR);
}

Test(log, parse_names)
{
	cr_assert_eq(cbox_log_level_parse("error"), CBOX_LOG_ERROR);
	cr_assert_eq(cbox_log_level_parse("warning"), CBOX_LOG_WARNING);
	cr_assert_eq(cbox_log_level_parse("info"), CBOX_LOG_INFO);
	cr_assert_eq(cbox_log_level_parse("debug"), CBOX_LOG_DEBUG);
	cr_assert_eq(cbox_log_level_parse("verbose"), -1);
	cr_assert_eq(cbox_log_level_parse(""), -1);
	cr_assert_eq(cbox_log_level_parse(NULL), -1);
	cr_assert_eq(cbox_log_format_parse("text"), CBOX_LOG_TEXT);
	cr_assert_eq(cbox_log_format_parse("json"), CBOX_LOG_JSON);
	cr_assert_eq(cbox_log_format_parse("JSON"), -1);
	cr_assert_eq(cbox_log_format_parse(NULL), -1);
}

Test(log, die_logs_then_exits, .init = setup, .fini = teardown)
{
	int status = 0;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		cbox_log_init(sock[1], CBOX_LOG_TEXT, CBOX_LOG_ERROR, "child");
		cbox_die(3, "cannot drop %s", "caps");
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	char want[128];
	snprintf(want, sizeof(want), "cbox[child %d]: error: cannot drop caps\n", (int)pid);
	cr_assert_str_eq(next_write(), want);
}
