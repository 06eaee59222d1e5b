/* Unit tests for lib/crash.c: run a helper that crashes and check the report and exit status.
 * CBOX_CRASH_HELPER is the helper's path, set by CMake. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char output[65536];

/* Run the helper with stderr to a pipe; return its wait status, output in `output`. */
static int run_helper(const char *mode)
{
	int p[2], status = 0;
	size_t len = 0;

	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* No core files from crashes we cause on purpose. */
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl(CBOX_CRASH_HELPER, CBOX_CRASH_HELPER, mode, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], output + len, sizeof(output) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	output[len] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

Test(crash, segv_reports_signal_and_backtrace)
{
	int status = run_helper("segv");
	char want[128];

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 11 (SIGSEGV) at 0x0000000000000000 in "
	                                  "crash-helper pid "),
	                   "output:\n%s", output);
	snprintf(want, sizeof(want), "  #0 0x");
	cr_assert_not_null(strstr(output, want), "output:\n%s", output);
	cr_assert_not_null(strstr(output, " cbox_test_crash_here+0x"), "output:\n%s", output);
	cr_assert_not_null(strstr(output, " main+0x"), "output:\n%s", output);
}

Test(crash, abort_reports_sigabrt)
{
	int status = run_helper("abort");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 6 (SIGABRT) sent by pid "), "output:\n%s",
	                   output);
	cr_assert_not_null(strstr(output, " cbox_test_abort_here+0x"), "output:\n%s", output);
}

Test(crash, stack_overflow_reported_from_alternate_stack)
{
	int status = run_helper("overflow");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 11 (SIGSEGV) at 0x"), "output:\n%.2000s",
	                   output);
	cr_assert_not_null(strstr(output, " cbox_test_recurse+0x"), "output:\n%.2000s", output);
	cr_assert_not_null(strstr(output, "  #63 0x"), "64 frames expected:\n%.2000s", output);
	cr_assert_null(strstr(output, "  #64 0x"), "at most 64 frames:\n%.2000s", output);
}
