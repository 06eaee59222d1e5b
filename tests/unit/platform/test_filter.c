/* The guest filter's decisions as the kernel makes them agree with cbox_platform_traps, which the
 * sentry uses to tell a call that waited for it from one the host ran (an interrupted call's
 * restart). The filter is built with a trap action the test can see (an errno nobody else
 * gives) and installed in a child, which makes each call and compares. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/platform.h"

#define TRAPPED 4095 /* the test's trap action: SECCOMP_RET_ERRNO with this errno */

struct call {
	const char *what;
	int nr;
	uint64_t a[6];
};

static char name[16] = "t";
static char addr[16];

/* Each call is harmless when the host runs it: fd -1 (EBADF), an unopened fd 1022, a name. */
static const struct call calls[] = {
    {"getppid", SYS_getppid, {0}},
    {"stat", SYS_newfstatat, {(uint64_t)AT_FDCWD, (uint64_t) "/", (uint64_t)addr, 0}},
    {"ioctl TCGETS", SYS_ioctl, {(uint64_t)-1, TCGETS, 0}},
    {"ioctl TIOCGWINSZ", SYS_ioctl, {(uint64_t)-1, TIOCGWINSZ, 0}},
    {"ioctl FIONREAD", SYS_ioctl, {(uint64_t)-1, FIONREAD, 0}},
    {"ioctl TCGETS, high bits", SYS_ioctl, {(uint64_t)-1, (1ULL << 32) | TCGETS, 0}},
    {"ioctl TIOCSTI, high bits", SYS_ioctl, {(uint64_t)-1, (1ULL << 32) | TIOCSTI, 0}},
    {"ioctl TCGETS on fd 1022", SYS_ioctl, {1022, TCGETS, 0}},
    {"fcntl F_GETFL", SYS_fcntl, {(uint64_t)-1, F_GETFL}},
    {"fcntl F_SETFL", SYS_fcntl, {(uint64_t)-1, F_SETFL, 0}},
    {"fcntl F_GETFD", SYS_fcntl, {(uint64_t)-1, F_GETFD}},
    {"fcntl F_SETFL, high bits", SYS_fcntl, {(uint64_t)-1, (1ULL << 32) | F_SETFL, 0}},
    {"fcntl F_NOTIFY", SYS_fcntl, {(uint64_t)-1, F_NOTIFY}},
    {"fcntl F_SETLEASE", SYS_fcntl, {(uint64_t)-1, F_SETLEASE, F_UNLCK}},
    {"fcntl F_NOTIFY, high bits", SYS_fcntl, {(uint64_t)-1, (1ULL << 32) | F_NOTIFY}},
    {"fcntl F_GETFL on fd 1022", SYS_fcntl, {1022, F_GETFL}},
    {"prctl PR_GET_NAME", SYS_prctl, {PR_GET_NAME, (uint64_t)name}},
    {"prctl PR_SET_NAME", SYS_prctl, {PR_SET_NAME, (uint64_t)name}},
    {"prctl PR_GET_DUMPABLE", SYS_prctl, {PR_GET_DUMPABLE}},
    {"sendto without an address", SYS_sendto, {(uint64_t)-1, (uint64_t)addr, 1, 0, 0, 0}},
    {"sendto with an address",
     SYS_sendto,
     {(uint64_t)-1, (uint64_t)addr, 1, 0, (uint64_t)addr, sizeof(addr)}},
    {"close -1", SYS_close, {(uint64_t)-1}},
    {"close 1022", SYS_close, {1022}},
    {"dup2 onto 1022", SYS_dup2, {(uint64_t)-1, 1022}},
    {"dup -1", SYS_dup, {(uint64_t)-1}},
    {"dup 1022", SYS_dup, {1022}},
    {"wait4 WNOHANG", SYS_wait4, {(uint64_t)-1, 0, WNOHANG, 0}},
    {"wait4 __WALL", SYS_wait4, {(uint64_t)-1, 0, WNOHANG | __WALL, 0}},
    {"waitid WEXITED", SYS_waitid, {P_ALL, 0, 0, WEXITED | WNOHANG, 0}},
    {"waitid __WCLONE", SYS_waitid, {P_ALL, 0, 0, WEXITED | WNOHANG | __WCLONE, 0}},
};

/* In a child: install the filter, make every call, count the disagreements in *bad. The child
 * cannot exit by itself afterwards (--strict traps exit_group too): it ends on SIGILL. */
static CBOX_NORETURN void run_child(const struct cbox_platform_ops *ops, bool strict,
                                    volatile int *bad)
{
	struct sock_filter *prog;
	unsigned short len;
	*bad = 1000; /* (not set up) */
	if (cbox_platform_build_filter(ops, strict, &prog, &len) < 0)
		__builtin_trap();
	struct sock_fprog fp = {.len = len, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
		__builtin_trap();
	*bad = 0;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const struct call *c = &calls[i];
		errno = 0;
		long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
		bool kernel = r == -1 && errno == TRAPPED;
		bool predicate = cbox_platform_traps(ops, strict, c->nr, c->a);
		if (kernel != predicate) {
			/* (Under --strict the filter traps this write too: only the count tells.)
			 */
			fprintf(stderr, "%s%s: the filter %s, cbox_platform_traps says %s\n",
			        c->what, strict ? " (strict)" : "",
			        kernel ? "traps" : "lets it through",
			        predicate ? "trapped" : "not trapped");
			(*bad)++;
		}
	}
	__builtin_trap();
}

static void check(const char *platform, bool strict)
{
	struct cbox_platform_ops ops = *cbox_platform_find(platform);
	ops.trap_action = SECCOMP_RET_ERRNO | TRAPPED;
	volatile int *bad =
	    mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(bad, MAP_FAILED);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		run_child(&ops, strict, bad);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL, "the child ended otherwise");
	cr_expect_eq(*bad, 0, "%s%s: %d disagreement(s) (stderr says which)", platform,
	             strict ? " --strict" : "", *bad);
	munmap((void *)bad, sizeof(int));
}

Test(platform_filter, seccomp_traps_as_the_kernel_decides)
{
	check("seccomp", false);
}

Test(platform_filter, ptrace_traps_as_the_kernel_decides)
{
	check("ptrace", false);
}

Test(platform_filter, strict_traps_everything)
{
	check("seccomp", true);
	check("ptrace", true);
}

/* A child with the rights the spawner has (root of a user namespace of its own, in a mount
 * namespace of its own) installs the refuse filter: what the table refuses fails with the
 * table's errno although the kernel would have let the child do it, the rest still runs. Exit
 * status: 0, or the number of the first check that failed. */
static int refuse_child(void)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return 100;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 101;
	/* Without the filter this mount works: the attempt below must fail for the filter. */
	if (mount("t", "/tmp", "tmpfs", 0, "size=16k") < 0 || umount2("/tmp", 0) < 0)
		return 102;
	struct sock_filter *prog;
	unsigned short len;
	if (cbox_platform_build_refuse_filter(&prog, &len) < 0)
		return 103;
	struct sock_fprog fp = {.len = len, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
		return 104;
	free(prog);
	if (mount("t", "/tmp", "tmpfs", 0, "size=16k") == 0 || errno != EPERM)
		return 1;
	if (syscall(SYS_fsopen, "tmpfs", 0) >= 0 || errno != EPERM)
		return 2;
	if (syscall(SYS_pivot_root, "/", "/") == 0 || errno != EPERM)
		return 3;
	/* keyctl and io_uring_setup: the kernel would say EINVAL or EFAULT; the table ENOSYS. */
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) >= 0 || errno != ENOSYS)
		return 4;
	if (syscall(SYS_io_uring_setup, 1, NULL) >= 0 || errno != ENOSYS)
		return 5;
	if (syscall(1000) >= 0 || errno != ENOSYS) /* past the table */
		return 6;
	/* What the table does not refuse runs: getppid, a socketpair, a fork. */
	int sv[2];
	if (syscall(SYS_getppid) <= 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 7;
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return 8;
	/* The x32 ABI would name other calls with the same numbers: killed. */
	p = fork();
	if (p == 0) {
		syscall(0x40000000 | SYS_getppid);
		_exit(0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
		return 9;
	return 0;
}

Test(platform_filter, refuse_filter_answers_as_the_table)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(refuse_child());
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child ended otherwise (signal %d)",
	          WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (WEXITSTATUS(st) == 100 && !getenv("CBOX_TESTS_MUST_WORK"))
		cr_skip_test("user namespaces are not available here");
	cr_expect_eq(WEXITSTATUS(st), 0, "check %d failed", WEXITSTATUS(st));
}
