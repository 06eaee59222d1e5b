/*
 * The harness of the syscall compatibility suite; see compat_test.h for the contract.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CT_MAX_CASES 1024

struct ct_case {
	char name[128];
	ct_fn fn;
};

static struct ct_case cases[CT_MAX_CASES];
static int ncases;
static char scratch[PATH_MAX];

void ct_register(const char *syscall, const char *what, ct_fn fn)
{
	if (ncases == CT_MAX_CASES) {
		dprintf(2, "compat_test: more than %d cases\n", CT_MAX_CASES);
		_exit(2);
	}
	snprintf(cases[ncases].name, sizeof(cases[ncases].name), "%s.%s", syscall, what);
	cases[ncases].fn = fn;
	ncases++;
}

const char *ct_scratch(void)
{
	return scratch;
}

int ct_has_cap(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int ct_drop_cap(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

void ct_put_file(const char *path, const char *text, int mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0)
		ct_fail_at(0, "put_file: open(\"%s\"): %s", path, strerror(errno));
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	close(fd);
	if (w != (ssize_t)n)
		ct_fail_at(0, "put_file: write(\"%s\"): %zd of %zu bytes", path, w, n);
}

/* The current case's name, set in the child before it runs. */
static const char *current;

__attribute__((format(printf, 3, 0))) static void line_out(const char *kind, const char *name,
                                                           const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s %s", kind, name);
	if (fmt && n < (int)sizeof(buf)) {
		n += snprintf(buf + n, sizeof(buf) - n, ": ");
		if (n < (int)sizeof(buf))
			n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	}
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(3);
}

__attribute__((format(printf, 3, 4))) static void line(const char *kind, const char *name,
                                                       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_out(kind, name, fmt, ap);
	va_end(ap);
}

void ct_fail_at(int lineno, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line("FAIL", current, "line %d: %s", lineno, msg);
	_exit(1);
}

void ct_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line_out("SKIP", current, fmt, ap);
	va_end(ap);
	_exit(2);
}

const char *ct_errname(int e)
{
	static char num[16];
	const char *n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(num, sizeof(num), "%d", e);
	return num;
}

int ct_wait(int pid)
{
	int st;
	while (waitpid(pid, &st, __WALL) < 0)
		if (errno != EINTR)
			ct_fail_at(__LINE__, "waitpid(%d): %s", pid, ct_errname(errno));
	return st;
}

pid_t ct_spawn_idle(void)
{
	pid_t pid = fork();
	if (pid < 0)
		ct_fail_at(__LINE__, "fork: %s", ct_errname(errno));
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

int ct_exit_code(pid_t pid)
{
	int st = ct_wait(pid);
	if (!WIFEXITED(st))
		ct_fail_at(__LINE__, "child did not exit: 0x%x", st);
	return WEXITSTATUS(st);
}

void ct_as_nobody_eperm(long (*call)(int target))
{
	if (!ct_has_cap(CAP_SETUID) || !ct_has_cap(CAP_SETGID))
		ct_skip("needs CAP_SETUID and CAP_SETGID to become nobody");
	pid_t target = ct_spawn_idle();
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
		    syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
			_exit(3);
		errno = 0;
		long r = call(target);
		_exit(r < 0 && errno == EPERM ? 0 : r < 0 ? 1 : 2);
	}
	int st = pid > 0 ? ct_wait(pid) : 0;
	kill(target, SIGKILL);
	ct_wait(target);
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		ct_fail_at(__LINE__, "as nobody: %s",
		           pid < 0                ? "fork failed"
		           : !WIFEXITED(st)       ? "the child died"
		           : WEXITSTATUS(st) == 2 ? "the call succeeded"
		           : WEXITSTATUS(st) == 1 ? "another error than EPERM"
		                                  : "could not become nobody");
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? 0 : 0;
	/* Cases may leave read-only dirs behind; make them writable so the tree can go. */
	return unlink(path) < 0 ? 0 : 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

enum { R_PASS, R_FAIL, R_SKIP, R_CRASH, R_TIMEOUT };

static int run_case(const struct ct_case *c)
{
	char dir[PATH_MAX + 160];
	snprintf(dir, sizeof(dir), "%s/%s", scratch, c->name);
	if (mkdir(dir, 0700) < 0) {
		line("FAIL", c->name, "harness: mkdir %s: %s", dir, strerror(errno));
		return R_FAIL;
	}
	pid_t pid = fork();
	if (pid < 0) {
		line("FAIL", c->name, "harness: fork: %s", strerror(errno));
		return R_FAIL;
	}
	if (pid == 0) {
		current = c->name;
		setpgid(0, 0);
		if (chdir(dir) < 0)
			CT_FAIL("harness: chdir %s: %s", dir, strerror(errno));
		alarm(CT_CASE_ALARM);
		c->fn();
		_exit(0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return R_FAIL;
	/* Reap anything the case left in its process group. */
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	chmod(dir, 0700);
	rm_tree(dir);
	if (WIFEXITED(st)) {
		switch (WEXITSTATUS(st)) {
		case 0:
			line("PASS", c->name, NULL);
			return R_PASS;
		case 1:
			return R_FAIL;
		case 2:
			return R_SKIP;
		default:
			line("FAIL", c->name, "case exited with status %d", WEXITSTATUS(st));
			return R_FAIL;
		}
	}
	if (WTERMSIG(st) == SIGALRM) {
		line("TIMEOUT", c->name, "no result after %d s", CT_CASE_ALARM);
		return R_TIMEOUT;
	}
	line("CRASH", c->name, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	return R_CRASH;
}

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (int i = 0; i < ncases; i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof(scratch), "%s/cbox-compat-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "compat_test: mkdtemp %s: %s\n", scratch, strerror(errno));
		return 2;
	}
	int count[5] = {0};
	for (int i = 0; i < ncases; i++)
		if (wanted(cases[i].name, argc, argv))
			count[run_case(&cases[i])]++;
	rm_tree(scratch);
	printf("# summary: %d passed, %d failed, %d skipped, %d crashed, %d timed out\n",
	       count[R_PASS], count[R_FAIL], count[R_SKIP], count[R_CRASH], count[R_TIMEOUT]);
	return count[R_FAIL] || count[R_CRASH] || count[R_TIMEOUT] ? 1 : 0;
}
