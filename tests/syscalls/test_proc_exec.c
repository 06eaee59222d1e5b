/*
 * Program execution (execve, execveat) and the /proc/self files programs read about themselves
 * (those cases are named after the syscall that reads them: read, readlink, openat, write).
 * Exec targets are /bin/true, /bin/false, /bin/sh and /bin/cat, present on every system.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return syscall(SYS_execve, path, argv, envp);
}

static long sys_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                         int flags)
{
	return syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* Run argv in a child with stdout on a pipe; return the exit code and the output in out. */
static int run_capture(char *const argv[], char *out, size_t outsz)
{
	int fds[2];
	CT_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		sys_execve(argv[0], argv, environ);
		_exit(127);
	}
	CT_TRUE(pid > 0);
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (n < outsz - 1 && (r = read(fds[0], out + n, outsz - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(fds[0]);
	return ct_exit_code(pid);
}

CT_TEST(execve, true_and_false)
{
	char *t[] = {"/bin/true", NULL}, *f[] = {"/bin/false", NULL};
	char out[16];
	CT_EQ(run_capture(t, out, sizeof(out)), 0);
	CT_EQ(run_capture(f, out, sizeof(out)), 1);
}

CT_TEST(execve, argv_and_envp_passed)
{
	int fds[2];
	CT_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"/bin/sh", "-c", "echo \"$0 $1 $CT_VAR\"", "zero", "one", NULL};
		char *envp[] = {"CT_VAR=val", "PATH=/bin:/usr/bin", NULL};
		dup2(fds[1], 1);
		sys_execve(argv[0], argv, envp);
		_exit(127);
	}
	close(fds[1]);
	char buf[64] = {0};
	CT_TRUE(read(fds[0], buf, sizeof(buf) - 1) > 0);
	CT_STREQ(buf, "zero one val\n");
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(execve, keeps_pid)
{
	char out[32];
	int fds[2];
	CT_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"/bin/sh", "-c", "echo $$", NULL};
		dup2(fds[1], 1);
		sys_execve(argv[0], argv, environ);
		_exit(127);
	}
	close(fds[1]);
	ssize_t n = CT_OK(read(fds[0], out, sizeof(out) - 1));
	out[n] = 0;
	CT_EQ(atol(out), pid);
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(execve, errors)
{
	char *argv[] = {"x", NULL};
	CT_ERR(sys_execve("nonexistent", argv, environ), ENOENT);
	CT_ERR(sys_execve((char *)8, argv, environ), EFAULT);
	/* A directory is not executable. */
	CT_ERR(sys_execve(".", argv, environ), EACCES);
	int fd = CT_OK(open("f", O_CREAT | O_WRONLY, 0644));
	CT_EQ(write(fd, "\x01\x02\x03\x04garbage", 11), 11);
	close(fd);
	CT_ERR(sys_execve("f/x", argv, environ), ENOTDIR);
	/* No execute bit for anyone: EACCES, even for root. */
	CT_ERR(sys_execve("f", argv, environ), EACCES);
	CT_OK(chmod("f", 0755));
	/* Executable, but no binary format recognizes it. */
	CT_ERR(sys_execve("f", argv, environ), ENOEXEC);
}

CT_TEST(execve, eloop_symlink)
{
	CT_OK(symlink("a", "b"));
	CT_OK(symlink("b", "a"));
	char *argv[] = {"a", NULL};
	CT_ERR(sys_execve("a", argv, environ), ELOOP);
}

CT_TEST(execve, cloexec_fd_closed)
{
	int keep = CT_OK(open("/dev/null", O_RDONLY));
	int gone = CT_OK(open("/dev/null", O_RDONLY | O_CLOEXEC));
	CT_OK(dup2(keep, 7));
	CT_OK(dup3(gone, 8, O_CLOEXEC));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"/bin/sh", "-c",
		                "(true <&7) 2>/dev/null || exit 1; "
		                "(true <&8) 2>/dev/null && exit 2; exit 0",
		                NULL};
		sys_execve(argv[0], argv, environ);
		_exit(127);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

static void on_usr2(int sig)
{
	(void)sig;
}

/* The hexadecimal value of a "Name:\t<hex>" line of a /proc status text. */
static unsigned long long status_hex(const char *text, const char *name)
{
	const char *p = strstr(text, name);
	if (!p)
		CT_FAIL("no %s in status", name);
	return strtoull(p + strlen(name), NULL, 16);
}

CT_TEST(execve, resets_handlers_keeps_ignored_and_mask)
{
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, on_usr2);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	CT_OK(sigprocmask(SIG_BLOCK, &set, NULL));
	char out[4096];
	char *argv[] = {"/bin/cat", "/proc/self/status", NULL};
	CT_EQ(run_capture(argv, out, sizeof(out)), 0);
	unsigned long long bit = 1;
	CT_TRUE(status_hex(out, "\nSigIgn:") & (bit << (SIGUSR1 - 1)));
	CT_TRUE(!(status_hex(out, "\nSigCgt:") & (bit << (SIGUSR2 - 1))));
	CT_TRUE(!(status_hex(out, "\nSigIgn:") & (bit << (SIGUSR2 - 1))));
	CT_TRUE(status_hex(out, "\nSigBlk:") & (bit << (SIGTERM - 1)));
}

static void *exec_from_thread(void *arg)
{
	(void)arg;
	char *argv[] = {"/bin/true", NULL};
	sys_execve(argv[0], argv, environ);
	_exit(127);
	return NULL;
}

CT_TEST(execve, from_secondary_thread)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, exec_from_thread, NULL) != 0)
			_exit(126);
		for (;;)
			pause();
	}
	CT_TRUE(pid > 0);
	/* The other threads die and the exec'd program keeps the process's pid. */
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(execveat, empty_path_on_fd)
{
	int fd = CT_OK(open("/bin/true", O_RDONLY));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"true", NULL};
		sys_execveat(fd, "", argv, environ, AT_EMPTY_PATH);
		_exit(127);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(execveat, o_path_fd)
{
	int fd = CT_OK(open("/bin/false", O_PATH));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"false", NULL};
		sys_execveat(fd, "", argv, environ, AT_EMPTY_PATH);
		_exit(127);
	}
	CT_EQ(ct_exit_code(pid), 1);
}

CT_TEST(execveat, relative_to_dirfd)
{
	int dfd = CT_OK(open("/bin", O_RDONLY | O_DIRECTORY));
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"false", NULL};
		sys_execveat(dfd, "false", argv, environ, 0);
		_exit(127);
	}
	CT_EQ(ct_exit_code(pid), 1);
}

CT_TEST(execveat, errors)
{
	char *argv[] = {"x", NULL};
	int fd = CT_OK(open("/bin/true", O_RDONLY));
	CT_ERR(sys_execveat(fd, "", argv, environ, 0), ENOENT);
	CT_ERR(sys_execveat(AT_FDCWD, "/bin/true", argv, environ, 0x4), EINVAL);
	CT_ERR(sys_execveat(0x3fff, "true", argv, environ, 0), EBADF);
	CT_ERR(sys_execveat(fd, "true", argv, environ, 0), ENOTDIR);
	CT_OK(symlink("/bin/true", "l"));
	CT_ERR(sys_execveat(AT_FDCWD, "l", argv, environ, AT_SYMLINK_NOFOLLOW), ELOOP);
}

/* Read a whole small /proc file into buf (NUL-terminated); returns the length. */
static size_t slurp(const char *path, char *buf, size_t size)
{
	int fd = CT_OK(open(path, O_RDONLY));
	size_t n = 0;
	ssize_t r;
	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	return n;
}

/*
 * A copy of /bin/cat, started and known to run (it echoed a byte back), is busy text: opening
 * it for writing, with O_TRUNC, or truncating it is ETXTBSY until it exits. Returns the pid;
 * *in is cat's stdin (closing it ends cat).
 */
static pid_t start_busy_copy(const char *name, int *in)
{
	int src = CT_OK(open("/bin/cat", O_RDONLY | O_CLOEXEC));
	int dst = CT_OK(open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0755));
	char buf[65536];
	ssize_t n;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		CT_EQ(write(dst, buf, (size_t)n), n);
	close(src);
	close(dst);
	int to[2], from[2];
	CT_OK(pipe2(to, O_CLOEXEC));
	CT_OK(pipe2(from, O_CLOEXEC));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		char *argv[] = {(char *)name, NULL};
		execv(name, argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	char c = 'x';
	CT_EQ(write(to[1], &c, 1), 1);
	CT_EQ(read(from[0], &c, 1), 1); /* cat runs */
	close(from[0]);
	*in = to[1];
	return pid;
}

CT_TEST(execve, etxtbsy_open_for_writing)
{
	/* A program some process has open for writing does not run: ETXTBSY (the parent's fd is
	 * close-on-exec, and still counts: the check comes first). */
	int src = CT_OK(open("/bin/true", O_RDONLY | O_CLOEXEC));
	int dst = CT_OK(open("prog", O_CREAT | O_WRONLY | O_CLOEXEC, 0755));
	char buf[65536];
	ssize_t n;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		CT_EQ(write(dst, buf, (size_t)n), n);
	close(src);
	char *argv[] = {"prog", NULL};
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		sys_execve("./prog", argv, environ);
		_exit(errno == ETXTBSY ? 7 : 1);
	}
	CT_EQ(ct_exit_code(pid), 7);
	close(dst);
	pid = CT_OK(fork());
	if (pid == 0) {
		sys_execve("./prog", argv, environ);
		_exit(1);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(openat, etxtbsy_running_program)
{
	int in;
	pid_t pid = start_busy_copy("./prog", &in);
	CT_ERR(openat(AT_FDCWD, "prog", O_WRONLY), ETXTBSY);
	CT_ERR(openat(AT_FDCWD, "prog", O_RDWR), ETXTBSY);
	CT_ERR(openat(AT_FDCWD, "prog", O_RDONLY | O_TRUNC), ETXTBSY);
	int fd = CT_OK(openat(AT_FDCWD, "prog", O_RDONLY));
	close(fd);
	close(in);
	CT_EQ(ct_exit_code(pid), 0);
	fd = CT_OK(openat(AT_FDCWD, "prog", O_WRONLY));
	close(fd);
}

CT_TEST(truncate, etxtbsy_running_program)
{
	int in;
	pid_t pid = start_busy_copy("./prog", &in);
	CT_ERR(truncate("prog", 0), ETXTBSY);
	struct stat st;
	CT_OK(stat("prog", &st));
	CT_TRUE(st.st_size > 0);
	close(in);
	CT_EQ(ct_exit_code(pid), 0);
	CT_OK(truncate("prog", 0));
}

CT_TEST(read, proc_self_stat)
{
	char buf[1024];
	slurp("/proc/self/stat", buf, sizeof(buf));
	int pid, ppid, pgrp;
	char comm[32], state;
	CT_EQ(sscanf(buf, "%d (%31[^)]) %c %d %d", &pid, comm, &state, &ppid, &pgrp), 5);
	CT_EQ(pid, getpid());
	CT_STREQ(comm, "test_proc_exec");
	CT_EQ(state, 'R');
	CT_EQ(ppid, getppid());
	CT_EQ(pgrp, getpgrp());
}

CT_TEST(read, proc_self_status)
{
	char buf[4096], want[64];
	slurp("/proc/self/status", buf, sizeof(buf));
	CT_TRUE(strncmp(buf, "Name:\ttest_proc_exec\n", 21) == 0);
	snprintf(want, sizeof(want), "\nPid:\t%d\n", getpid());
	CT_TRUE(strstr(buf, want) != NULL);
	snprintf(want, sizeof(want), "\nPPid:\t%d\n", getppid());
	CT_TRUE(strstr(buf, want) != NULL);
	snprintf(want, sizeof(want), "\nUid:\t%d\t%d\t", getuid(), geteuid());
	CT_TRUE(strstr(buf, want) != NULL);
	CT_TRUE(strstr(buf, "\nThreads:\t1\n") != NULL);
}

CT_TEST(read, proc_self_cmdline)
{
	char buf[4096];
	size_t n = slurp("/proc/self/cmdline", buf, sizeof(buf));
	CT_TRUE(n > 0 && buf[n - 1] == 0);
	CT_STREQ(buf, program_invocation_name);
}

CT_TEST(read, proc_self_comm_after_prctl)
{
	char buf[64];
	slurp("/proc/self/comm", buf, sizeof(buf));
	CT_STREQ(buf, "test_proc_exec\n");
	CT_OK(prctl(PR_SET_NAME, "renamed", 0, 0, 0));
	slurp("/proc/self/comm", buf, sizeof(buf));
	CT_STREQ(buf, "renamed\n");
}

CT_TEST(write, proc_self_comm)
{
	int fd = CT_OK(open("/proc/self/comm", O_WRONLY));
	CT_EQ(write(fd, "viaproc", 7), 7);
	char name[17] = {0};
	CT_OK(prctl(PR_GET_NAME, name, 0, 0, 0));
	CT_STREQ(name, "viaproc");
}

CT_TEST(readlink, proc_self_exe)
{
	char buf[4096];
	ssize_t n = CT_OK(syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf) - 1));
	buf[n] = 0;
	CT_TRUE(buf[0] == '/');
	const char *base = strrchr(buf, '/');
	CT_STREQ(base, "/test_proc_exec");
	struct stat a, b;
	CT_OK(stat(buf, &a));
	CT_OK(stat("/proc/self/exe", &b));
	CT_EQ(a.st_ino, b.st_ino);
}

CT_TEST(openat, proc_self_fd_reopen)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	CT_EQ(write(fd, "hello", 5), 5);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int again = CT_OK(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY));
	char buf[8] = {0};
	/* A new open file description: its offset starts at 0. */
	CT_EQ(read(again, buf, sizeof(buf)), 5);
	CT_STREQ(buf, "hello");
}

/* A position-independent program with an interpreter is placed as Linux's exec places it: at
 * two thirds of the 47-bit address space (0x555555554000), moved up by a random number of pages
 * below 2^28 unless randomization is off. This program is one (Debian's gcc builds PIE). */
CT_TEST(execve, pie_load_address)
{
	extern char __executable_start[];
	unsigned long self = (unsigned long)__executable_start;
	FILE *f = fopen("/proc/self/exe", "r");
	CT_TRUE(f != NULL);
	unsigned char hdr[18];
	size_t n = fread(hdr, 1, sizeof(hdr), f);
	fclose(f);
	CT_EQ(n, sizeof(hdr));
	if (hdr[16] != 3 /* ET_DYN */)
		ct_skip("not a position-independent build");
	CT_TRUE(self >= 0x555555554000UL);
	CT_TRUE(self < 0x555555554000UL + (1UL << 28) * 4096);
	CT_EQ(self % 4096, 0);
}
