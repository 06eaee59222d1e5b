/* Unit tests for lib/crash.c: run a helper that crashes and check the report and exit status.
 * CBOX_CRASH_HELPER is the helper built like the rest of this build, CBOX_CRASH_HELPER_STATIC a
 * static PIE like the release cbox-run and cbox (and ".stripped", the same without symbols);
 * paths set by CMake. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char output[65536];

/* Run the helper with stderr to a pipe; return its wait status, output in `output`. */
static int run_helper(const char *helper, const char *mode)
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
		execl(helper, helper, mode, (char *)NULL);
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

/* The report of a NULL dereference in cbox_test_crash_here, called from main. */
static void check_segv_report(void)
{
	cr_assert_not_null(strstr(output, "fatal signal 11 (SIGSEGV) at 0x0000000000000000 in "
	                                  "crash-helper pid "),
	                   "output:\n%s", output);
	/* Frame 0 is the faulting instruction, not the handler. */
	const char *f0 = strstr(output, "  #0 0x");
	cr_assert_not_null(f0, "output:\n%s", output);
	cr_assert(strncmp(f0 + strlen("  #0 0x") + 16, " cbox_test_crash_here+0x",
	                  strlen(" cbox_test_crash_here+0x")) == 0,
	          "output:\n%s", output);
	cr_assert_not_null(strstr(output, " main+0x"), "output:\n%s", output);
}

Test(crash, segv_reports_signal_and_backtrace)
{
	int status = run_helper(CBOX_CRASH_HELPER, "segv");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	check_segv_report();
}

Test(crash, static_pie_reports_names)
{
	int status = run_helper(CBOX_CRASH_HELPER_STATIC, "segv");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	check_segv_report();
	status = run_helper(CBOX_CRASH_HELPER_STATIC, "overflow");
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x", status);
	cr_assert_not_null(strstr(output, " cbox_test_recurse+0x"), "output:\n%.2000s", output);
	cr_assert_not_null(strstr(output, "  #63 0x"), "64 frames expected:\n%.2000s", output);
}

/* Without a symbol table a frame is an offset into the executable, for addr2line. */
Test(crash, stripped_reports_offsets)
{
	int status = run_helper(CBOX_CRASH_HELPER_STATIC ".stripped", "segv");
	uint64_t func = 0, at = 0;

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	const char *said = strstr(output, "cbox_test_crash_here is at exe+0x");
	cr_assert_not_null(said, "output:\n%s", output);
	cr_assert_eq(sscanf(said, "cbox_test_crash_here is at exe+0x%" SCNx64, &func), 1);
	const char *f0 = strstr(output, "  #0 0x");
	cr_assert_not_null(f0, "output:\n%s", output);
	cr_assert_eq(sscanf(f0 + strlen("  #0 0x") + 16, " exe+0x%" SCNx64, &at), 1, "output:\n%s",
	             output);
	cr_assert(at >= func && at < func + 64, "frame 0 at %#" PRIx64 ", function at %#" PRIx64,
	          at, func);
}

Test(crash, abort_reports_sigabrt)
{
	int status = run_helper(CBOX_CRASH_HELPER, "abort");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 6 (SIGABRT) sent by pid "), "output:\n%s",
	                   output);
	cr_assert_not_null(strstr(output, " cbox_test_abort_here+0x"), "output:\n%s", output);
}

Test(crash, stack_overflow_reported_from_alternate_stack)
{
	int status = run_helper(CBOX_CRASH_HELPER, "overflow");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 11 (SIGSEGV) at 0x"), "output:\n%.2000s",
	                   output);
	cr_assert_not_null(strstr(output, " cbox_test_recurse+0x"), "output:\n%.2000s", output);
	cr_assert_not_null(strstr(output, "  #63 0x"), "64 frames expected:\n%.2000s", output);
	cr_assert_null(strstr(output, "  #64 0x"), "at most 64 frames:\n%.2000s", output);
}

/* A call the process's own allowlist refuses (lib/seccomp_allow.c: SECCOMP_RET_TRAP) is named
 * by the report, and the process still dies of SIGSYS. */
Test(crash, seccomp_refusal_names_the_call)
{
	int status = run_helper(CBOX_CRASH_HELPER_STATIC, "seccomp");

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x, output:\n%s",
	          status, output);
	cr_assert_not_null(strstr(output, "fatal signal 31 (SIGSYS) refused by the seccomp filter: "
	                                  "syscall 110 in crash-helper pid "),
	                   "output:\n%s", output);
	cr_assert_null(strstr(output, "survived"), "output:\n%s", output);
}
