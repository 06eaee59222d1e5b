/*
 * The hand-built allowlist filters (lib/seccomp_allow.c): each case loads a filter in a forked
 * child, which then makes allowed and refused calls with raw syscalls only; a refused call must
 * kill it with SIGSYS, an allowed one must work.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/seccomp_allow.h"

#define X32_BIT 0x40000000L

/* Run body(fd) in a child under rules, fd a pipe's write end; rules[pin].arg0 (pin >= 0) is set
 * to that fd first. Returns the child's wait status. */
static int run_filtered(struct cbox_allow *rules, size_t n, int pin, void (*body)(int fd))
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	if (pin >= 0)
		rules[pin].arg0 = p[1];
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (cbox_allow_load(rules, n) < 0)
			syscall(SYS_exit_group, 99);
		body(p[1]);
		syscall(SYS_exit_group, 0);
	}
	close(p[1]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	close(p[0]);
	return st;
}

static struct cbox_allow base[] = {
    {SYS_getpid, CBOX_ALLOW_ANY},
    {SYS_exit_group, CBOX_ALLOW_ANY},
    {SYS_write, 0}, /* the pipe's fd (run_filtered) */
};

static void allowed_calls(int fd)
{
	if (syscall(SYS_getpid) <= 0 || syscall(SYS_write, fd, "x", 1) != 1)
		syscall(SYS_exit_group, 98);
	syscall(SYS_exit_group, 7);
}

Test(seccomp_allow, allowed_calls_work)
{
	int st = run_filtered(base, 3, 2, allowed_calls);
	cr_assert(WIFEXITED(st), "status %#x", st);
	cr_expect_eq(WEXITSTATUS(st), 7);
}

static void call_unlisted(int fd)
{
	(void)fd;
	syscall(SYS_getppid);
}

static void write_other_fd(int fd)
{
	syscall(SYS_write, fd + 1, "x", 1);
}

static void write_high_bits(int fd)
{
	syscall(SYS_write, (long)fd | (1L << 32), "x", 1);
}

static void x32_call(int fd)
{
	(void)fd;
	syscall(X32_BIT | SYS_getpid);
}

static void expect_killed(void (*body)(int))
{
	int st = run_filtered(base, 3, 2, body);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "status %#x", st);
}

Test(seccomp_allow, unlisted_call_kills)
{
	expect_killed(call_unlisted);
}

Test(seccomp_allow, pinned_argument_on_another_fd_kills)
{
	expect_killed(write_other_fd);
}

Test(seccomp_allow, pinned_argument_with_high_bits_kills)
{
	expect_killed(write_high_bits);
}

Test(seccomp_allow, x32_call_kills)
{
	expect_killed(x32_call);
}

/* The same syscall twice, pinned to two fds: both pass, a third is killed. */
static int second_fd;

static void write_both(int fd)
{
	if (syscall(SYS_write, fd, "x", 1) != 1 || syscall(SYS_write, second_fd, "y", 1) != 1)
		syscall(SYS_exit_group, 98);
	syscall(SYS_exit_group, 7);
}

static void write_third(int fd)
{
	(void)fd;
	syscall(SYS_write, 2, "z", 1);
}

Test(seccomp_allow, one_syscall_two_values)
{
	int q[2];
	cr_assert_eq(pipe(q), 0);
	second_fd = q[1];
	struct cbox_allow rules[] = {
	    {SYS_exit_group, CBOX_ALLOW_ANY},
	    {SYS_write, second_fd},
	    {SYS_write, 0}, /* the pipe's fd (run_filtered) */
	};
	int st = run_filtered(rules, 3, 2, write_both);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 7, "status %#x", st);
	st = run_filtered(rules, 3, 2, write_third);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "status %#x", st);
	close(q[0]);
	close(q[1]);
}

Test(seccomp_allow, bad_rules_refused)
{
	struct cbox_allow neg_nr = {-5, CBOX_ALLOW_ANY};
	cr_expect_eq(cbox_allow_load(&neg_nr, 1), -EINVAL);
	struct cbox_allow neg_arg = {SYS_write, -7};
	cr_expect_eq(cbox_allow_load(&neg_arg, 1), -EINVAL);
	size_t n = 1000; /* 7 instructions each: past BPF_MAXINSNS */
	struct cbox_allow *many = calloc(n, sizeof(*many));
	cr_assert_not_null(many);
	for (size_t i = 0; i < n; i++)
		many[i] = (struct cbox_allow){(int)i, 1};
	struct sock_filter *prog = NULL;
	unsigned short len = 0;
	cr_expect_eq(cbox_allow_build(many, n, &prog, &len), -E2BIG);
	cr_expect_eq(cbox_allow_build(many, 100, &prog, &len), 0);
	cr_expect_eq(len, 6 + 7 * 100 + 1);
	free(prog);
	free(many);
}
