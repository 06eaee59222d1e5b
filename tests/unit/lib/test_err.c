/* Unit tests for lib/err.c: message building, first failure wins, wrapping, NULL safety. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cbox/err.h"
#include "cbox/log.h"

Test(err, set_appends_strerror_and_returns_minus_errno)
{
	struct cbox_err *err = NULL;

	cr_assert_eq(cbox_err_set(&err, ENOENT, "open %s", "/etc/x"), -ENOENT);
	cr_assert_not_null(err);
	cr_assert_eq(err->errno_, ENOENT);
	cr_assert_str_eq(err->msg, "open /etc/x: No such file or directory");
	cr_assert_eq(cbox_err_code(err), -ENOENT);
	cbox_err_free(&err);
	cr_assert_null(err);
}

Test(err, set_without_errno_has_no_suffix_and_returns_minus_one)
{
	struct cbox_err *err = NULL;

	cr_assert_eq(cbox_err_set(&err, 0, "bad config key %d", 7), -1);
	cr_assert_str_eq(err->msg, "bad config key 7");
	cr_assert_eq(cbox_err_code(err), -1);
	cbox_err_free(&err);
}

Test(err, first_failure_wins)
{
	struct cbox_err *err = NULL;

	cbox_err_set(&err, EACCES, "first");
	cr_assert_eq(cbox_err_set(&err, EINVAL, "second"), -EINVAL);
	cr_assert_eq(err->errno_, EACCES);
	cr_assert_str_eq(err->msg, "first: Permission denied");
	cbox_err_free(&err);
}

Test(err, wrap_prefixes_context)
{
	struct cbox_err *err = NULL;

	cbox_err_set(&err, ENOENT, "open %s", "/rootfs");
	cr_assert_eq(cbox_err_wrap(&err, "mount %s", "rootfs"), -ENOENT);
	cr_assert_eq(cbox_err_wrap(&err, "start"), -ENOENT);
	cr_assert_str_eq(err->msg, "start: mount rootfs: open /rootfs: No such file or directory");
	cbox_err_free(&err);
}

Test(err, null_safety)
{
	struct cbox_err *err = NULL;

	cr_assert_eq(cbox_err_set(NULL, EPERM, "dropped"), -EPERM);
	cr_assert_eq(cbox_err_set(NULL, 0, "dropped"), -1);
	cr_assert_eq(cbox_err_wrap(NULL, "ctx"), -1);
	cr_assert_eq(cbox_err_wrap(&err, "ctx"), -1);
	cr_assert_null(err);
	cr_assert_eq(cbox_err_code(NULL), -1);
	cbox_err_free(NULL);
	cbox_err_free(&err);
	cbox_err_report(NULL, "x");
	cbox_err_report(&err, "x");
	cr_assert_null(err);
}

Test(err, set_preserves_errno)
{
	struct cbox_err *err = NULL;

	errno = EBADF;
	cbox_err_set(&err, ENOMEM, "alloc");
	cbox_err_wrap(&err, "ctx");
	cr_assert_eq(errno, EBADF);
	cbox_err_free(&err);
}

static void read_line(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
}

Test(err, report_logs_at_error_level_and_frees)
{
	struct cbox_err *err = NULL;
	char buf[512], want[512];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cbox_log_init(p[1], CBOX_LOG_TEXT, CBOX_LOG_ERROR, "test");
	cbox_err_set(&err, ENOENT, "open %s", "/x");
	cbox_err_report(&err, "cannot start");
	cr_assert_null(err);
	read_line(p[0], buf, sizeof(buf));
	snprintf(want, sizeof(want),
	         "cbox[test %d]: error: cannot start: open /x: No such file or directory\n",
	         (int)getpid());
	cr_assert_str_eq(buf, want);

	cbox_err_set(&err, 0, "plain");
	cbox_err_report(&err, NULL);
	read_line(p[0], buf, sizeof(buf));
	snprintf(want, sizeof(want), "cbox[test %d]: error: plain\n", (int)getpid());
	cr_assert_str_eq(buf, want);
	close(p[0]);
	close(p[1]);
}
