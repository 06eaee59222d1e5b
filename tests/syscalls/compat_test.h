#pragma once
/*
 * The tiny assertion helper of the syscall compatibility suite (tests/syscalls/).
 *
 * A test program is a set of cases. Each case is named "<syscall>.<what>", where <syscall> is
 * the x86_64 name of the syscall the case is about, exactly as in the sentry's table (openat,
 * newfstatat, rt_sigaction, ...). cbox-compat counts cases per syscall from that prefix.
 *
 *	CT_TEST(openat, creat_excl_exists)
 *	{
 *		int fd = CT_OK(openat(AT_FDCWD, "f", O_CREAT | O_WRONLY, 0600));
 *		close(fd);
 *		CT_ERR(openat(AT_FDCWD, "f", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
 *	}
 *
 * Every case runs in a forked child of its own, in a fresh empty directory (its cwd) under a
 * scratch directory the harness creates in $TMPDIR (default /tmp) and removes at the end, with
 * a 30 s alarm. The first failed check ends the case. Output, one line per case on stdout,
 * written with a single write(2) so parallel runs do not interleave within a line:
 *
 *	PASS openat.creat_excl_exists
 *	FAIL openat.creat_excl_exists: line 12: openat(...) expected -1/EEXIST, got 3
 *	SKIP openat.o_tmpfile: O_TMPFILE not supported by this filesystem
 *	CRASH openat.foo: killed by signal 11 (Segmentation fault)
 *	TIMEOUT openat.bar: no result after 30 s
 *	# summary: 10 passed, 1 failed, 1 skipped, 0 crashed, 0 timed out
 *
 * The program exits 0 when nothing failed, crashed or timed out, else 1. Arguments: none runs
 * every case; "--list" prints the case names; NAME... runs only the named cases.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

typedef void (*ct_fn)(void);

/* Register a case (done by CT_TEST through a constructor). */
void ct_register(const char *syscall, const char *what, ct_fn fn);

/* End the current case as failed / skipped, with a printf-style message. Never return. */
__attribute__((noreturn, format(printf, 2, 3))) void ct_fail_at(int line, const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void ct_skip(const char *fmt, ...);

/* The scratch directory of this run (absolute path); the case's cwd is a fresh subdirectory. */
const char *ct_scratch(void);

/* Whether this process has capability cap in its effective set (0 when capget fails). */
int ct_has_cap(int cap);
/* Take capability cap out of this process's effective set: 0 or -errno. */
int ct_drop_cap(int cap);

/* Create or truncate path with mode and write text to it; a failure fails the case. */
void ct_put_file(const char *path, const char *text, int mode);

#define CT_TEST(sys, what)                                                                         \
	static void ct_case_##sys##_##what(void);                                                  \
	__attribute__((constructor)) static void ct_reg_##sys##_##what(void)                       \
	{                                                                                          \
		ct_register(#sys, #what, ct_case_##sys##_##what);                                  \
	}                                                                                          \
	static void ct_case_##sys##_##what(void)

#define CT_FAIL(...) ct_fail_at(__LINE__, __VA_ARGS__)

/* Check that expr (a syscall-style result) is >= 0; yields its value. */
#define CT_OK(expr)                                                                                \
	({                                                                                         \
		errno = 0;                                                                         \
		long ct_r_ = (long)(expr);                                                         \
		if (ct_r_ < 0)                                                                     \
			ct_fail_at(__LINE__, "%s: expected success, got %ld/%s", #expr, ct_r_,     \
			           ct_errname(errno));                                             \
		ct_r_;                                                                             \
	})

/* Check that expr returns -1 (or a null/MAP_FAILED-like -1 value) with errno == e. */
#define CT_ERR(expr, e)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		long ct_r_ = (long)(expr);                                                         \
		int ct_e_ = errno;                                                                 \
		if (ct_r_ != -1 || ct_e_ != (e))                                                   \
			ct_fail_at(__LINE__, "%s: expected -1/%s, got %ld/%s", #expr,              \
			           ct_errname(e), ct_r_, ct_errname(ct_e_));                       \
	} while (0)

/* Check that a == b (as long). */
#define CT_EQ(a, b)                                                                                \
	do {                                                                                       \
		long ct_a_ = (long)(a), ct_b_ = (long)(b);                                         \
		if (ct_a_ != ct_b_)                                                                \
			ct_fail_at(__LINE__, "%s == %s: got %ld, expected %ld", #a, #b, ct_a_,     \
			           ct_b_);                                                         \
	} while (0)

/* Check a condition. */
#define CT_TRUE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ct_fail_at(__LINE__, "expected %s", #cond);                                \
	} while (0)

/* Check that two C strings are equal. */
#define CT_STREQ(a, b)                                                                             \
	do {                                                                                       \
		const char *ct_a_ = (a), *ct_b_ = (b);                                             \
		if (!ct_a_ || !ct_b_ || strcmp(ct_a_, ct_b_) != 0)                                 \
			ct_fail_at(__LINE__, "%s == %s: got \"%s\", expected \"%s\"", #a, #b,      \
			           ct_a_ ? ct_a_ : "(null)", ct_b_ ? ct_b_ : "(null)");            \
	} while (0)

/* The symbolic name of an errno value ("EEXIST"), or its number as text. */
const char *ct_errname(int e);

/* Wait for child pid and return its wait status; fails the case on a waitpid error. */
int ct_wait(int pid);

/* A child that waits for signals forever (pause); the case kills it, or the harness does. A
 * failed fork fails the case. */
pid_t ct_spawn_idle(void);

/* Wait for child pid and return its exit code; fails the case when it did not exit. */
int ct_exit_code(pid_t pid);

/* Another user's process is closed to call: a fresh idle child of the case (root's), reached
 * from a second child that dropped to nobody, must get EPERM from call(target); the case fails
 * otherwise, and is skipped without CAP_SETUID and CAP_SETGID. */
void ct_as_nobody_eperm(long (*call)(int target));

/* Seconds a case may take before it counts as hung (each case runs under alarm() of it). The
 * heaviest (newfstatat.many_files_any_order: 5000 files made, 10000 stats) takes ~3.5 s alone in
 * a sandbox on a slow 2-CPU VM, and `make test` runs two suites at a time beside ctest's other
 * test: 10 s timed it out once there. Only a hang pays for the margin. */
#define CT_CASE_ALARM 30
