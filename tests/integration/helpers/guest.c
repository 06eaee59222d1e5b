/*
 * cbox-test-guest: the guest side of the integration tests (like crun's tests/init.c).
 *
 * A static multi-call program: `cbox-test-guest SUBCOMMAND [ARGS]`. Each subcommand exercises one
 * area of the sentry and prints one line per check, "ok NAME" or "not ok NAME: got X", so that a
 * test can compare the output under the sandbox with the output of the same program run natively
 * (a check is only meaningful once it passes natively). Syscalls are made with syscall(2) where
 * libc could hide the kernel's answer (vDSO, wrappers that check arguments first).
 *
 * Exit status: 0 when every check passed, 1 when one failed, 2 on a usage error. The commands
 * that reach into other processes (ptrace-guard, cross-user, prio-user) are in guest_procs.c,
 * the attacks on the sentry's ptrace-stop work (inject-race, install-theft) in guest_escape.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static int failures;

const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* Prints "ok NAME" or "not ok NAME: got ..." for a syscall expected to fail with `want`. */
static void expect_errno(const char *name, long ret, int err, int want)
{
	if (ret == -1 && err == want) {
		printf("ok %s %s\n", name, errname(want));
	} else if (ret == -1) {
		printf("not ok %s %s: got %s\n", name, errname(want), errname(err));
		failures++;
	} else {
		printf("not ok %s %s: got %ld\n", name, errname(want), ret);
		failures++;
	}
}

/* Prints "ok NAME" when cond holds, else "not ok NAME: got " and the printf-formatted rest. */
__attribute__((format(printf, 3, 4))) static void expect_true(const char *name, int cond,
                                                              const char *fmt, ...)
{
	va_list ap;

	if (cond) {
		printf("ok %s\n", name);
		return;
	}
	printf("not ok %s: got ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

/* Evaluates expr (a libc call returning -1 on error), then checks errno: the order matters, as
 * function arguments are evaluated in no fixed order. */
#define EXPECT_ERRNO(name, want, expr)                                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (expr);                                                                  \
		expect_errno(name, r_, errno, want);                                               \
	} while (0)

#define CALL(name, want, ...)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = syscall(__VA_ARGS__);                                                    \
		expect_errno(name, r_, errno, want);                                               \
	} while (0)

/* A page-aligned address that is certainly not mapped: map a page, then unmap it. */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	munmap(p, 4096);
	return p;
}

static int cmd_efault(void)
{
	char *bad = unmapped_page();
	int p[2];
	struct stat st;
	char lbuf[64];

	if (pipe(p) < 0 || write(p[1], "x", 1) != 1) {
		perror("pipe");
		return 2;
	}
	CALL("openat", EFAULT, SYS_openat, AT_FDCWD, bad, O_RDONLY);
	CALL("stat-path", EFAULT, SYS_stat, bad, &st);
	CALL("newfstatat-buf", EFAULT, SYS_newfstatat, AT_FDCWD, "/", bad, 0);
	CALL("fstat-buf", EFAULT, SYS_fstat, 0, bad);
	CALL("uname", EFAULT, SYS_uname, bad);
	CALL("getcwd", EFAULT, SYS_getcwd, bad, 4096);
	CALL("readlink-path", EFAULT, SYS_readlink, bad, lbuf, sizeof(lbuf));
	CALL("readlink-buf", EFAULT, SYS_readlink, "/proc/self/exe", bad, 100);
	CALL("clock_gettime", EFAULT, SYS_clock_gettime, CLOCK_MONOTONIC, bad);
	CALL("rt_sigaction", EFAULT, SYS_rt_sigaction, SIGUSR1, bad, NULL, 8);
	CALL("read-buf", EFAULT, SYS_read, p[0], bad, 1);
	CALL("write-buf", EFAULT, SYS_write, p[1], bad, 1);
	CALL("pipe2", EFAULT, SYS_pipe2, bad, 0);
	CALL("nanosleep", EFAULT, SYS_nanosleep, bad, NULL);
	CALL("execve", EFAULT, SYS_execve, bad, NULL, NULL);
	CALL("chdir", EFAULT, SYS_chdir, bad);
	int d = open("/", O_RDONLY | O_DIRECTORY);
	CALL("getdents64", EFAULT, SYS_getdents64, d, bad, 4096);
	close(d);
	close(p[0]);
	close(p[1]);
	/* The sandbox must still answer normally after all those faults. */
	d = open("/", O_RDONLY | O_DIRECTORY);
	if (d >= 0 && getpid() > 0 && close(d) == 0)
		printf("alive\n");
	return failures ? 1 : 0;
}

/* `refused NR`: calls syscall NR twice with zero arguments and prints both results. */
static int cmd_refused(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	long nr = strtol(argv[0], NULL, 0);
	for (int i = 0; i < 2; i++) {
		errno = 0;
		long r = syscall(nr, 0, 0, 0, 0, 0, 0);
		if (r == -1)
			printf("%s%s", i ? " " : "", errname(errno));
		else
			printf("%sret=%ld", i ? " " : "", r);
	}
	printf("\n");
	return 0;
}

static int cmd_ids(void)
{
	printf("pid %ld\n", syscall(SYS_getpid));
	printf("ppid %ld\n", syscall(SYS_getppid));
	printf("tid %ld\n", syscall(SYS_gettid));
	printf("uid %ld\n", syscall(SYS_getuid));
	printf("euid %ld\n", syscall(SYS_geteuid));
	printf("gid %ld\n", syscall(SYS_getgid));
	printf("egid %ld\n", syscall(SYS_getegid));
	printf("pgid %ld\n", syscall(SYS_getpgid, 0));
	printf("sid %ld\n", syscall(SYS_getsid, 0));
	return 0;
}

/* `fork-tree N`: N children exit with 10+i after checking their parent; the parent reaps each. */
static int cmd_fork_tree(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 3;
	pid_t parent = getpid(), kids[64];

	if (n < 1 || n > 64)
		return 2;
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			printf("not ok fork %d: got %s\n", i, errname(errno));
			return 1;
		}
		if (kids[i] == 0)
			_exit(getppid() == parent && getpid() != parent ? 10 + i : 1);
	}
	for (int i = 0; i < n; i++) {
		int st = 0;
		char name[64];
		pid_t w = waitpid(kids[i], &st, 0);
		snprintf(name, sizeof(name), "fork-tree child %d exit %d", i, 10 + i);
		expect_true(name, w == kids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 10 + i,
		            "status 0x%x", w == kids[i] ? st : -1);
	}
	EXPECT_ERRNO("fork-tree wait-none", ECHILD, waitpid(-1, NULL, WNOHANG));
	return failures ? 1 : 0;
}

struct thread_ids {
	long pid, tid;
};

static void *thread_main(void *arg)
{
	struct thread_ids *ids = arg;
	ids->pid = syscall(SYS_getpid);
	ids->tid = syscall(SYS_gettid);
	return NULL;
}

static int cmd_threads(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 4, same_pid = 1, distinct = 1;
	struct thread_ids ids[64];
	pthread_t th[64];
	long me = syscall(SYS_getpid);

	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, thread_main, &ids[i]) != 0) {
			printf("not ok threads create %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		same_pid &= ids[i].pid == me;
		distinct &= ids[i].tid != me;
		for (int j = 0; j < i; j++)
			distinct &= ids[i].tid != ids[j].tid;
	}
	expect_true("threads share-pid", same_pid, "%ld", ids[0].pid);
	expect_true("threads distinct-tids", distinct, "%ld", ids[0].tid);
	printf("threads %d\n", n);
	return failures ? 1 : 0;
}

/* `kill-self SIG`: sends SIG to itself. Pid 1 of a pid namespace survives signals it has no
 * handler for (as on Linux); then it says so. */
static int cmd_kill_self(int argc, char **argv)
{
	int sig = argc > 0 ? atoi(argv[0]) : SIGKILL;
	fflush(stdout);
	kill(getpid(), sig);
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	printf("survived %d\n", sig);
	return 0;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* Child pauses; parent kills it with SIGTERM and checks the wait status. Then a child with a
 * SIGUSR1 handler: the handler runs, and the child exits 42. */
static int cmd_signal_child(void)
{
	int ready[2], st = 0;
	char c;

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	expect_true("signal-child SIGTERM", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	            "status 0x%x", st);

	if (pipe(ready) < 0)
		return 2;
	pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr1);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		while (!got_usr1)
			pause();
		_exit(42);
	}
	if (read(ready[0], &c, 1) != 1)
		return 2;
	kill(pid, SIGUSR1);
	waitpid(pid, &st, 0);
	expect_true("signal-child handler", WIFEXITED(st) && WEXITSTATUS(st) == 42, "status 0x%x",
	            st);
	return failures ? 1 : 0;
}

/* `open PATH`: prints "open ok" or "open ERRNAME". */
static int cmd_open(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int fd = open(argv[0], O_RDONLY);
	if (fd >= 0)
		printf("open ok\n");
	else
		printf("open %s\n", errname(errno));
	return 0;
}

static int cmd_enametoolong(void)
{
	static char path[PATH_MAX + 16], comp[NAME_MAX + 8];

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	CALL("enametoolong path", ENAMETOOLONG, SYS_openat, AT_FDCWD, path, O_RDONLY);
	memset(comp, 'b', sizeof(comp) - 1);
	comp[0] = '/';
	CALL("enametoolong component", ENAMETOOLONG, SYS_openat, AT_FDCWD, comp, O_RDONLY);
	CALL("enametoolong stat", ENAMETOOLONG, SYS_newfstatat, AT_FDCWD, comp, &(struct stat){},
	     0);
	return failures ? 1 : 0;
}

/* Prints the numbers listed in /proc/self/fd, excluding the directory's own fd. */
static void list_proc_fds(char *out, size_t len)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[256], n = 0;

	out[0] = '\0';
	if (!d) {
		snprintf(out, len, "opendir %s", errname(errno));
		return;
	}
	while ((e = readdir(d)) && n < 256) {
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	for (int i = 0; i < n; i++) /* sort: listing order is not part of the contract */
		for (int j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];
				fds[i] = fds[j];
				fds[j] = t;
			}
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%d", i ? " " : "", fds[i]);
}

static int cmd_fds(void)
{
	int p[2], fd;
	char buf[512], c = 0;

	for (int i = 3; i < 1024; i++) /* start from a known table: 0 1 2 only */
		close(i);
	expect_true("fds pipe2", pipe2(p, O_CLOEXEC) == 0 && p[0] == 3 && p[1] == 4, "%d", p[0]);
	expect_true("fds pipe2 cloexec", fcntl(p[0], F_GETFD) == FD_CLOEXEC, "%d",
	            fcntl(p[0], F_GETFD));
	fd = dup(p[1]);
	expect_true("fds dup lowest", fd == 5, "%d", fd);
	expect_true("fds dup no-cloexec", fcntl(fd, F_GETFD) == 0, "%d", fcntl(fd, F_GETFD));
	expect_true("fds dup2", dup2(fd, 9) == 9, "%s", errname(errno));
	expect_true("fds dup2 same", dup2(9, 9) == 9, "%s", errname(errno));
	EXPECT_ERRNO("fds dup3 same", EINVAL, dup3(9, 9, 0));
	expect_true("fds dup3 cloexec", dup3(9, 10, O_CLOEXEC) == 10 && fcntl(10, F_GETFD) == 1,
	            "%d", fcntl(10, F_GETFD));
	expect_true("fds F_DUPFD", fcntl(fd, F_DUPFD, 20) == 20, "%s", errname(errno));
	expect_true("fds F_DUPFD_CLOEXEC", fcntl(fd, F_DUPFD_CLOEXEC, 20) == 21, "%s",
	            errname(errno));
	expect_true("fds F_SETFD", fcntl(20, F_SETFD, FD_CLOEXEC) == 0 && fcntl(20, F_GETFD) == 1,
	            "%d", fcntl(20, F_GETFD));
	expect_true("fds write via dup",
	            write(21, "z", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'z', "%d", c);
	list_proc_fds(buf, sizeof(buf));
	expect_true("fds proc-list", strcmp(buf, "0 1 2 3 4 5 9 10 20 21") == 0, "%s", buf);
	close(5);
	EXPECT_ERRNO("fds close-bad", EBADF, close(5));
	EXPECT_ERRNO("fds fcntl-bad", EBADF, fcntl(5, F_GETFD));
	expect_true("fds reuse", dup(0) == 5, "%s", errname(errno));
	return failures ? 1 : 0;
}

static int cmd_segv(void)
{
	fflush(stdout);
	/* A real fault on an unmapped page; the asm hides the constant address from the
	 * optimiser, which would otherwise refuse it at -O2 (-Warray-bounds). */
	volatile int *p = (volatile int *)(uintptr_t)8;
	__asm__ volatile("" : "+r"(p));
	*p = 1;
	return 0;
}

/* Try to become one's own supervisor: a seccomp filter with a listener fd. Prints the errno
 * name (the sentry must refuse: EPERM) or "listener N" if it was granted. */
static int cmd_seccomp_listener(void)
{
	struct sock_filter insns[] = {
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = {.len = 1, .filter = insns};
	long fd =
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		printf("%s\n", errname(errno));
	else
		printf("listener %ld\n", fd);
	return 0;
}

/* Try to push a byte into the input of the terminal on fd 0 (TIOCSTI). Prints the errno name
 * or "injected". */
/* TIOCSTI on stdin, plainly and with bits above the request's 32 (the kernel truncates the
 * request to an unsigned int, so a filter that compared all 64 bits could be passed by). Prints
 * both results. */
static int cmd_tiocsti(void)
{
	char ch = 'x';
	long high = (long)((1UL << 32) | TIOCSTI);
	const char *r1 = ioctl(0, TIOCSTI, &ch) < 0 ? errname(errno) : "injected";
	const char *r2 = syscall(SYS_ioctl, 0, high, &ch) < 0 ? errname(errno) : "injected";
	printf("%s %s\n", r1, r2);
	return 0;
}

static volatile sig_atomic_t notified_fd = -1;

static void on_notify(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	notified_fd = si->si_fd;
}

/* The fcntl commands the sentry checks. F_NOTIFY on a directory of the tree runs: a file made
 * in it raises the signal F_SETSIG chose, naming the directory's fd; on a directory of /proc it
 * is set (no event comes), on a file it is ENOTDIR. F_SETLEASE on a file the caller owns is
 * refused; both plainly and with bits above the command's 32. Then F_GETFL, which runs.
 * Prints "notify event high allowed proc allowed file ENOTDIR lease EINVAL EINVAL getfl ok". */
static int cmd_fcntl_checked(void)
{
	mkdir("/tmp/dnotify", 0700);
	int dir = open("/tmp/dnotify", O_RDONLY | O_DIRECTORY);
	int proc = open("/proc/self", O_RDONLY | O_DIRECTORY);
	int file = open("/tmp/fcntl-checked", O_RDWR | O_CREAT, 0600);
	long high = (long)(1UL << 32);
	struct sigaction sa = {.sa_sigaction = on_notify, .sa_flags = SA_SIGINFO};
	sigaction(SIGRTMIN + 1, &sa, NULL);
	const char *note = "no-event";
	if (fcntl(dir, F_SETSIG, SIGRTMIN + 1) < 0 || fcntl(dir, F_NOTIFY, DN_CREATE) < 0) {
		note = errname(errno);
	} else {
		close(open("/tmp/dnotify/made", O_WRONLY | O_CREAT, 0600));
		for (int i = 0; i < 200 && notified_fd < 0; i++)
			usleep(10000);
		if (notified_fd >= 0)
			note = notified_fd == dir ? "event" : "wrong-fd";
	}
	const char *r[5];
	r[0] = syscall(SYS_fcntl, dir, high | F_NOTIFY, DN_CREATE) < 0 ? errname(errno) : "allowed";
	r[1] = fcntl(proc, F_NOTIFY, DN_CREATE) < 0 ? errname(errno) : "allowed";
	r[2] = fcntl(file, F_NOTIFY, DN_CREATE) < 0 ? errname(errno) : "allowed";
	r[3] = fcntl(file, F_SETLEASE, F_RDLCK) < 0 ? errname(errno) : "allowed";
	r[4] =
	    syscall(SYS_fcntl, file, high | F_SETLEASE, F_RDLCK) < 0 ? errname(errno) : "allowed";
	printf("notify %s high %s proc %s file %s lease %s %s getfl %s\n", note, r[0], r[1], r[2],
	       r[3], r[4], (fcntl(file, F_GETFL) & O_ACCMODE) == O_RDWR ? "ok" : "wrong");
	return 0;
}

static void on_chld(int sig)
{
	(void)sig;
}

/* Calls that never give EINTR on Linux (pipe, close, open of a regular file), made while
 * children exit and a SIGCHLD handler without SA_RESTART runs. Prints "calls N EINTR K". */
static int cmd_eintr(void)
{
	struct sigaction sa = {.sa_handler = on_chld};
	sigaction(SIGCHLD, &sa, NULL);
	int calls = 0, eintr = 0;
	for (int i = 0; i < 200; i++) {
		int p[2];
		calls++;
		if (pipe(p) < 0) {
			eintr += errno == EINTR;
			continue;
		}
		if (fork() == 0)
			_exit(0);
		for (int k = 0; k < 2; k++, calls++)
			if (close(p[k]) < 0 && errno == EINTR)
				eintr++;
		calls++;
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			eintr += errno == EINTR;
		else
			close(fd);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	printf("calls %d EINTR %d\n", calls, eintr);
	return 0;
}

/*
 * clone3 with a struct that another thread keeps flipping between plain-fork flags and
 * CLONE_NEWUSER. The kernel reads the struct once per call; a sandbox that checked it and then
 * let the kernel read it again could be raced into a user namespace. Each child reports
 * whether it landed in one (its uid is then the overflow uid). Prints
 * "calls N ok K eperm E newuser U"; natively U > 0 (the race is real), in cbox U must be 0.
 */
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif
struct clone3_race_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};
static volatile struct clone3_race_args race_args = {.exit_signal = SIGCHLD};
static volatile int race_stop;

static void *clone3_flipper(void *arg)
{
	(void)arg;
	while (!race_stop) {
		race_args.flags = CLONE_NEWUSER;
		race_args.flags = 0;
	}
	return NULL;
}

static int cmd_clone3_race(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, clone3_flipper, NULL) != 0)
		return 2;
	int calls = 0, ok = 0, eperm = 0, newuser = 0;
	for (; calls < 2000; calls++) {
		long pid = syscall(SYS_clone3, &race_args, sizeof(race_args));
		if (pid == 0)
			_exit(syscall(SYS_getuid) == 65534 ? 3 : 0);
		if (pid < 0) {
			eperm += errno == EPERM;
			continue;
		}
		ok++;
		int st;
		if (waitpid((pid_t)pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3)
			newuser++;
	}
	race_stop = 1;
	pthread_join(th, NULL);
	printf("calls %d ok %d eperm %d newuser %d\n", calls, ok, eperm, newuser);
	return 0;
}

/*
 * A valid eBPF array map and a valid self-counting software perf event: natively (as root) both
 * open; in the sandbox both must be EPERM, after Linux's argument checks. Prints one line each:
 * "bpf_map_create OK|ERRNAME", "perf_event_open OK|ERRNAME".
 */
static int cmd_bpf_perf(void)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = 4;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	printf("bpf_map_create %s\n", fd >= 0 ? "OK" : errname(errno));
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof(pe));
	pe.size = sizeof(pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	long pfd = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
	printf("perf_event_open %s\n", pfd >= 0 ? "OK" : errname(errno));
	return 0;
}

/*
 * `become UID GID[,GROUP...] PROG [ARGS]`: drop to another user as gosu and setpriv do
 * (setgroups, setresgid, setresuid, then exec), with raw syscalls so that the kernel's (or the
 * sentry's) answer is what is printed: "become: CALL ERRNAME" and status 1 when one fails.
 */
static int cmd_become(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	unsigned long uid = strtoul(argv[0], NULL, 10);
	gid_t groups[64];
	int n = 0;
	char *save = NULL;
	for (char *g = strtok_r(argv[1], ",", &save); g && n < 64; g = strtok_r(NULL, ",", &save))
		groups[n++] = (gid_t)strtoul(g, NULL, 10);
	if (n == 0)
		return 2;
	if (syscall(SYS_setgroups, n - 1, groups + 1) < 0) {
		printf("become: setgroups %s\n", errname(errno));
		return 1;
	}
	if (syscall(SYS_setresgid, groups[0], groups[0], groups[0]) < 0) {
		printf("become: setresgid %s\n", errname(errno));
		return 1;
	}
	if (syscall(SYS_setresuid, uid, uid, uid) < 0) {
		printf("become: setresuid %s\n", errname(errno));
		return 1;
	}
	execv(argv[2], argv + 2);
	printf("become: execv %s\n", errname(errno));
	return 1;
}

/*
 * `access RUID EUID PATH`: setresuid(RUID, EUID, -1), then how PATH answers: access(R_OK) (the
 * real ids), faccessat(AT_EACCESS) (the effective ones), open(O_RDONLY) and open(O_NOATIME)
 * (owner or CAP_FOWNER). One line: "access X eaccess X open X noatime X", X being OK or the
 * errno's name.
 */
static int cmd_access(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (syscall(SYS_setresuid, strtoul(argv[0], NULL, 10), strtoul(argv[1], NULL, 10), -1L) <
	    0) {
		printf("access: setresuid %s\n", errname(errno));
		return 1;
	}
	const char *p = argv[2];
	const char *r[4];
	r[0] = syscall(SYS_faccessat, AT_FDCWD, p, R_OK) == 0 ? "OK" : errname(errno);
	r[1] = syscall(SYS_faccessat2, AT_FDCWD, p, R_OK, AT_EACCESS) == 0 ? "OK" : errname(errno);
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
	r[2] = fd >= 0 ? "OK" : errname(errno);
	long fd2 = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_NOATIME);
	r[3] = fd2 >= 0 ? "OK" : errname(errno);
	printf("access %s eaccess %s open %s noatime %s\n", r[0], r[1], r[2], r[3]);
	return 0;
}

/* `shmmax`: the IPC namespace's shared memory segment limit, as shmctl(IPC_INFO) gives it. */
static int cmd_shmmax(void)
{
	struct shminfo info;
	if (syscall(SYS_shmctl, 0, IPC_INFO, &info) < 0) {
		printf("shmmax %s\n", errname(errno));
		return 1;
	}
	printf("shmmax %lu\n", (unsigned long)info.shmmax);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: cbox-test-guest efault|refused NR|ids|fork-tree N|threads N|"
	        "kill-self SIG|signal-child|open "
	        "PATH|enametoolong|fds|segv|seccomp-listener|tiocsti|fcntl-checked|eintr|"
	        "clone3-race|bpf-perf|become UID GID[,GROUP...] PROG [ARGS]|access RUID "
	        "EUID PATH|shmmax|ptrace-guard|cross-user|prio-user|inject-race|"
	        "install-theft FILE [LIMIT]|reserved-fd|exec-theft FILE [unshare]|signal-storm N "
	        "[LIMIT]|kill-eintr N|stop-hold N [LIMIT]|cont-term "
	        "N|ignored-wake|short-write|short-write-end|"
	        "open-loop [THREADS]|exec-threads N\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	const char *c = argv[1];
	int n = argc - 2;
	char **a = argv + 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "efault"))
		return cmd_efault();
	if (!strcmp(c, "refused"))
		return cmd_refused(n, a);
	if (!strcmp(c, "ids"))
		return cmd_ids();
	if (!strcmp(c, "become"))
		return cmd_become(n, a);
	if (!strcmp(c, "access"))
		return cmd_access(n, a);
	if (!strcmp(c, "shmmax"))
		return cmd_shmmax();
	if (!strcmp(c, "ptrace-guard"))
		return cmd_ptrace_guard();
	if (!strcmp(c, "cross-user"))
		return cmd_cross_user();
	if (!strcmp(c, "prio-user"))
		return cmd_prio_user();
	if (!strcmp(c, "fork-tree"))
		return cmd_fork_tree(n, a);
	if (!strcmp(c, "threads"))
		return cmd_threads(n, a);
	if (!strcmp(c, "kill-self"))
		return cmd_kill_self(n, a);
	if (!strcmp(c, "signal-child"))
		return cmd_signal_child();
	if (!strcmp(c, "open"))
		return cmd_open(n, a);
	if (!strcmp(c, "enametoolong"))
		return cmd_enametoolong();
	if (!strcmp(c, "fds"))
		return cmd_fds();
	if (!strcmp(c, "segv"))
		return cmd_segv();
	if (!strcmp(c, "seccomp-listener"))
		return cmd_seccomp_listener();
	if (!strcmp(c, "tiocsti"))
		return cmd_tiocsti();
	if (!strcmp(c, "fcntl-checked"))
		return cmd_fcntl_checked();
	if (!strcmp(c, "eintr"))
		return cmd_eintr();
	if (!strcmp(c, "clone3-race"))
		return cmd_clone3_race();
	if (!strcmp(c, "bpf-perf"))
		return cmd_bpf_perf();
	if (!strcmp(c, "kill-eintr"))
		return cmd_kill_eintr(n, a);
	if (!strcmp(c, "exec-threads"))
		return cmd_exec_threads(n, a);
	if (!strcmp(c, "open-loop"))
		return cmd_open_loop(n, a);
	if (!strcmp(c, "stop-hold"))
		return cmd_stop_hold(n, a);
	if (!strcmp(c, "cont-term"))
		return cmd_cont_term(n, a);
	if (!strcmp(c, "ignored-wake"))
		return cmd_ignored_wake();
	if (!strcmp(c, "short-write"))
		return cmd_short_write();
	if (!strcmp(c, "short-write-end"))
		return cmd_short_write_end();
	if (!strcmp(c, "signal-storm"))
		return cmd_signal_storm(n, a);
	if (!strcmp(c, "inject-race"))
		return cmd_inject_race();
	if (!strcmp(c, "reserved-fd"))
		return cmd_reserved_fd();
	if (!strcmp(c, "install-theft"))
		return cmd_install_theft(n, a);
	if (!strcmp(c, "exec-theft"))
		return cmd_exec_theft(n, a, "/proc/self/exe");
	if (!strcmp(c, "exec-theft-victim"))
		return cmd_exec_theft_victim(n, a);
	usage();
	return 2;
}
