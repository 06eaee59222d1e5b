/*
 * The hand-built allowlist filters (lib/seccomp_allow.c): each case loads a filter in a forked
 * child, which then makes allowed and refused calls with raw syscalls only; a refused call must
 * kill it with SIGSYS, an allowed one must work.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
	cr_expect(len > 6 + 7 * 100 && len <= BPF_MAXINSNS, "length %u", len);
	free(prog);
	free(many);
}

/* Classic BPF, the instructions cbox_allow_build emits, run on d: the action. Any other
 * instruction, a load past seccomp_data or a jump past the end fails the test. */
static uint32_t run_prog(const struct sock_filter *p, unsigned short len,
                         const struct seccomp_data *d)
{
	uint32_t a = 0;
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &p[pc];
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			cr_assert(f->k + 4 <= sizeof(*d), "load at %u", f->k);
			memcpy(&a, (const char *)d + f->k, 4);
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		default:
			cr_assert_fail("instruction %#x at %u", f->code, pc);
		}
	}
	cr_assert_fail("ran off the end of the program");
	return 0;
}

/* Many rules in no order, numbers allowed with any argument, pinned to one value, to two, and
 * gaps between them: the program allows exactly what the rules say, for every number. */
Test(seccomp_allow, search_matches_the_rules)
{
	struct cbox_allow rules[200];
	size_t n = 0;
	for (int nr = 0; nr < 450; nr += 3) {
		rules[n++] = (struct cbox_allow){nr, nr % 4 == 0 ? nr + 10 : CBOX_ALLOW_ANY};
		if (nr % 12 == 0)
			rules[n++] = (struct cbox_allow){nr, nr + 20};
	}
	srand(7);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1);
		struct cbox_allow t = rules[i];
		rules[i] = rules[j];
		rules[j] = t;
	}
	struct sock_filter *prog;
	unsigned short len;
	cr_assert_eq(cbox_allow_build(rules, n, &prog, &len), 0);
	for (int nr = 0; nr < 460; nr++) {
		uint64_t args[] = {0, (uint64_t)nr + 10, (uint64_t)nr + 20,
		                   ((uint64_t)1 << 32) | (uint64_t)(nr + 10), 12345};
		for (size_t k = 0; k < sizeof(args) / sizeof(args[0]); k++) {
			bool want = false;
			for (size_t i = 0; i < n; i++)
				want |= rules[i].nr == nr && (rules[i].arg0 == CBOX_ALLOW_ANY ||
				                              (uint64_t)rules[i].arg0 == args[k]);
			struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
			d.args[0] = args[k];
			uint32_t got = run_prog(prog, len, &d);
			cr_expect_eq(got, want ? SECCOMP_RET_ALLOW : SECCOMP_RET_TRAP,
			             "nr %d arg %#lx: %#x", nr, (unsigned long)args[k], got);
		}
		struct seccomp_data x32 = {.nr = 0x40000000 | nr, .arch = AUDIT_ARCH_X86_64};
		struct seccomp_data i386 = {.nr = nr, .arch = AUDIT_ARCH_I386};
		cr_expect_eq(run_prog(prog, len, &x32), SECCOMP_RET_KILL_PROCESS);
		cr_expect_eq(run_prog(prog, len, &i386), SECCOMP_RET_KILL_PROCESS);
	}
	free(prog);
}

/* The kernel takes such a program (its checker refuses a jump out of it) and runs it. */
static void exit_seven(int fd)
{
	(void)fd;
	syscall(SYS_exit_group, 7);
}

Test(seccomp_allow, kernel_loads_a_large_search)
{
	struct cbox_allow rules[120];
	size_t n = 0;
	for (int nr = 0; nr < 360 && n < 119; nr += 3)
		if (nr != SYS_exit_group)
			rules[n++] = (struct cbox_allow){nr, nr % 2 ? CBOX_ALLOW_ANY : nr};
	rules[n++] = (struct cbox_allow){SYS_exit_group, CBOX_ALLOW_ANY};
	int st = run_filtered(rules, n, -1, exit_seven);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 7, "status %#x", st);
	st = run_filtered(rules, n, -1, call_unlisted);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "status %#x", st);
}
