/* The guest filter's decisions as the kernel makes them agree with cbox_platform_traps, which the
 * sentry uses to tell a call that waited for it from one the host ran (an interrupted call's
 * restart). The filter is built with a trap action the test can see (an errno nobody else
 * gives) and installed in a child, which makes each call and compares. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
