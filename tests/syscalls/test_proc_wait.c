/*
 * Waiting for and reaching into children: wait4, waitid, pidfd_open, pidfd_send_signal,
 * pidfd_getfd, kcmp, process_vm_readv, process_vm_writev (ptrace: test_proc_ptrace.c). Every
 * case only touches its own children, so no privilege is needed but for the other-user cases,
 * skipped without it.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static pid_t spawn_exit(int code)
{
	pid_t pid = fork();
	if (pid < 0)
		CT_FAIL("fork: %s", ct_errname(errno));
	if (pid == 0)
		_exit(code);
	return pid;
}

static long sys_wait4(pid_t pid, int *st, int options, struct rusage *ru)
{
	return syscall(SYS_wait4, pid, st, options, ru);
}

CT_TEST(wait4, exit_status)
{
	pid_t pid = spawn_exit(17);
	int st = 0;
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
	CT_TRUE(WIFEXITED(st));
	CT_EQ(WEXITSTATUS(st), 17);
}

CT_TEST(wait4, any_child)
{
	pid_t pid = spawn_exit(0);
	int st;
	CT_EQ(sys_wait4(-1, &st, 0, NULL), pid);
	CT_ERR(sys_wait4(-1, &st, 0, NULL), ECHILD);
}

CT_TEST(wait4, echild_without_children)
{
	int st;
	CT_ERR(sys_wait4(-1, &st, 0, NULL), ECHILD);
	CT_ERR(sys_wait4(getpid(), &st, 0, NULL), ECHILD);
}

CT_TEST(wait4, wnohang_running_child)
{
	pid_t pid = ct_spawn_idle();
	int st;
	CT_EQ(sys_wait4(pid, &st, WNOHANG, NULL), 0);
	CT_OK(kill(pid, SIGKILL));
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

CT_TEST(wait4, wuntraced_and_wcontinued)
{
	pid_t pid = ct_spawn_idle();
	int st;
	CT_OK(kill(pid, SIGSTOP));
	CT_EQ(sys_wait4(pid, &st, WUNTRACED, NULL), pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	/* A stopped child still receives (queues) signals; SIGCONT resumes it. */
	CT_OK(kill(pid, SIGCONT));
	CT_EQ(sys_wait4(pid, &st, WCONTINUED, NULL), pid);
	CT_TRUE(WIFCONTINUED(st));
	CT_OK(kill(pid, SIGKILL));
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
}

CT_TEST(wait4, sigkill_reaches_stopped_child)
{
	pid_t pid = ct_spawn_idle();
	int st;
	CT_OK(kill(pid, SIGSTOP));
	CT_EQ(sys_wait4(pid, &st, WUNTRACED, NULL), pid);
	CT_OK(kill(pid, SIGTERM));
	/* SIGTERM stays pending while stopped: no status change yet. */
	CT_EQ(sys_wait4(pid, &st, WNOHANG, NULL), 0);
	CT_OK(kill(pid, SIGKILL));
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

CT_TEST(wait4, rusage_filled)
{
	pid_t pid = spawn_exit(0);
	struct rusage ru;
	memset(&ru, 0xff, sizeof(ru));
	int st;
	CT_EQ(sys_wait4(pid, &st, 0, &ru), pid);
	CT_TRUE(ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0);
	CT_TRUE(ru.ru_utime.tv_usec < 1000000 && ru.ru_stime.tv_usec < 1000000);
	CT_TRUE(ru.ru_maxrss > 0);
}

CT_TEST(wait4, invalid_options)
{
	int st;
	CT_ERR(sys_wait4(-1, &st, 0x4000000, NULL), EINVAL);
}

CT_TEST(wait4, efault_status)
{
	pid_t pid = spawn_exit(0);
	CT_ERR(sys_wait4(pid, (int *)8, 0, NULL), EFAULT);
}

CT_TEST(wait4, process_group)
{
	pid_t pid = spawn_exit(2);
	int st;
	/* 0 means any child in our process group, which the child inherited. */
	CT_EQ(sys_wait4(0, &st, 0, NULL), pid);
	CT_EQ(WEXITSTATUS(st), 2);
}

static void on_chld(int sig)
{
	(void)sig;
}

CT_TEST(wait4, sigchld_on_exit)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	CT_OK(sigprocmask(SIG_BLOCK, &set, &old));
	signal(SIGCHLD, on_chld);
	pid_t pid = spawn_exit(0);
	siginfo_t si;
	struct timespec ts = {5, 0};
	CT_EQ(sigtimedwait(&set, &si, &ts), SIGCHLD);
	CT_EQ(si.si_pid, pid);
	CT_EQ(si.si_code, CLD_EXITED);
	int st;
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
}

CT_TEST(waitid, exited_siginfo)
{
	pid_t pid = spawn_exit(9);
	siginfo_t si = {0};
	CT_OK(waitid(P_PID, pid, &si, WEXITED));
	CT_EQ(si.si_signo, SIGCHLD);
	CT_EQ(si.si_code, CLD_EXITED);
	CT_EQ(si.si_pid, pid);
	CT_EQ(si.si_status, 9);
	CT_EQ(si.si_uid, getuid());
}

CT_TEST(waitid, killed_siginfo)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(kill(pid, SIGTERM));
	siginfo_t si = {0};
	CT_OK(waitid(P_PID, pid, &si, WEXITED));
	CT_EQ(si.si_code, CLD_KILLED);
	CT_EQ(si.si_status, SIGTERM);
}

CT_TEST(waitid, wnowait_leaves_zombie)
{
	pid_t pid = spawn_exit(4);
	siginfo_t si = {0};
	CT_OK(waitid(P_ALL, 0, &si, WEXITED | WNOWAIT));
	CT_EQ(si.si_pid, pid);
	int st;
	CT_EQ(sys_wait4(pid, &st, 0, NULL), pid);
	CT_EQ(WEXITSTATUS(st), 4);
}

CT_TEST(waitid, wnohang_nothing)
{
	pid_t pid = ct_spawn_idle();
	siginfo_t si;
	memset(&si, 0x55, sizeof(si));
	CT_OK(waitid(P_PID, pid, &si, WEXITED | WNOHANG));
	/* Linux zeroes si_pid when no child was ready. */
	CT_EQ(si.si_pid, 0);
	kill(pid, SIGKILL);
	CT_OK(waitid(P_PID, pid, &si, WEXITED));
}

CT_TEST(waitid, stopped)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(kill(pid, SIGSTOP));
	siginfo_t si = {0};
	CT_OK(waitid(P_PID, pid, &si, WSTOPPED));
	CT_EQ(si.si_code, CLD_STOPPED);
	CT_EQ(si.si_status, SIGSTOP);
	kill(pid, SIGKILL);
}

CT_TEST(waitid, bad_arguments)
{
	siginfo_t si;
	CT_ERR(waitid(P_ALL, 0, &si, 0), EINVAL);
	CT_ERR(waitid((idtype_t)42, 0, &si, WEXITED), EINVAL);
	CT_ERR(waitid(P_ALL, 0, &si, WEXITED), ECHILD);
}

CT_TEST(waitid, p_pidfd)
{
	pid_t pid = spawn_exit(12);
	int pidfd = CT_OK(syscall(SYS_pidfd_open, pid, 0));
	siginfo_t si = {0};
	CT_OK(waitid((idtype_t)P_PIDFD, pidfd, &si, WEXITED));
	CT_EQ(si.si_pid, pid);
	CT_EQ(si.si_status, 12);
}

CT_TEST(pidfd_open, poll_readable_on_exit)
{
	int fds[2];
	CT_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		_exit(read(fds[0], &c, 1) == 1 ? 0 : 1);
	}
	int pidfd = CT_OK(syscall(SYS_pidfd_open, pid, 0));
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	CT_EQ(poll(&p, 1, 0), 0);
	CT_EQ(write(fds[1], "x", 1), 1);
	CT_EQ(poll(&p, 1, 5000), 1);
	CT_TRUE(p.revents & POLLIN);
	CT_TRUE(fcntl(pidfd, F_GETFD) & FD_CLOEXEC);
}

CT_TEST(pidfd_open, bad_arguments)
{
	CT_ERR(syscall(SYS_pidfd_open, getpid(), 0x1), EINVAL);
	CT_ERR(syscall(SYS_pidfd_open, -1, 0), EINVAL);
	CT_ERR(syscall(SYS_pidfd_open, 0, 0), EINVAL);
}

CT_TEST(pidfd_open, reaped_child_esrch)
{
	pid_t pid = spawn_exit(0);
	int st;
	CT_EQ(waitpid(pid, &st, 0), pid);
	CT_ERR(syscall(SYS_pidfd_open, pid, 0), ESRCH);
}

CT_TEST(pidfd_send_signal, kills_child)
{
	pid_t pid = ct_spawn_idle();
	int pidfd = CT_OK(syscall(SYS_pidfd_open, pid, 0));
	CT_OK(syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0));
	CT_OK(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0));
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* The process is gone (reaped): signalling it now fails. */
	CT_ERR(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0), ESRCH);
}

CT_TEST(pidfd_send_signal, bad_arguments)
{
	int pidfd = CT_OK(syscall(SYS_pidfd_open, getpid(), 0));
	CT_ERR(syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0x80), EINVAL);
	CT_ERR(syscall(SYS_pidfd_send_signal, pidfd, 1000, NULL, 0), EINVAL);
	CT_ERR(syscall(SYS_pidfd_send_signal, 0x3fff, 0, NULL, 0), EBADF);
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0), EBADF);
}

CT_TEST(pidfd_getfd, dup_from_child)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	CT_OK(dup2(fd, 100));
	pid_t pid = ct_spawn_idle();
	close(100);
	int pidfd = CT_OK(syscall(SYS_pidfd_open, pid, 0));
	int got = CT_OK(syscall(SYS_pidfd_getfd, pidfd, 100, 0));
	struct stat a, b;
	CT_OK(fstat(fd, &a));
	CT_OK(fstat(got, &b));
	CT_EQ(a.st_ino, b.st_ino);
	CT_TRUE(fcntl(got, F_GETFD) & FD_CLOEXEC);
	CT_ERR(syscall(SYS_pidfd_getfd, pidfd, 101, 0), EBADF);
	CT_ERR(syscall(SYS_pidfd_getfd, pidfd, 100, 1), EINVAL);
	kill(pid, SIGKILL);
}

CT_TEST(pidfd_getfd, not_a_pidfd)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(syscall(SYS_pidfd_getfd, fd, 0, 0), EBADF);
	CT_ERR(syscall(SYS_pidfd_getfd, -1, 0, 0), EBADF);
}

CT_TEST(kcmp, files)
{
	pid_t me = getpid();
	int a = CT_OK(open("/dev/null", O_RDONLY));
	int b = CT_OK(dup(a));
	int c = CT_OK(open("/dev/null", O_RDONLY));
	CT_EQ(syscall(SYS_kcmp, me, me, KCMP_FILE, a, b), 0);
	long r = CT_OK(syscall(SYS_kcmp, me, me, KCMP_FILE, a, c));
	CT_TRUE(r == 1 || r == 2);
	CT_ERR(syscall(SYS_kcmp, me, me, KCMP_FILE, a, 0x3fff), EBADF);
}

CT_TEST(kcmp, vm_and_files_with_child)
{
	pid_t me = getpid();
	pid_t pid = ct_spawn_idle();
	CT_EQ(syscall(SYS_kcmp, me, me, KCMP_VM, 0, 0), 0);
	/* fork gives the child its own address space and fd table. */
	CT_TRUE(CT_OK(syscall(SYS_kcmp, me, pid, KCMP_VM, 0, 0)) != 0);
	CT_TRUE(CT_OK(syscall(SYS_kcmp, me, pid, KCMP_FILES, 0, 0)) != 0);
	/* ... but the same open file descriptions. */
	CT_EQ(syscall(SYS_kcmp, me, pid, KCMP_FILE, 1, 1), 0);
	kill(pid, SIGKILL);
}

CT_TEST(kcmp, bad_type)
{
	CT_ERR(syscall(SYS_kcmp, getpid(), getpid(), 1000, 0, 0), EINVAL);
}

static char vm_buf[64] = "child memory";

/* A child that waits for a byte on fds[0], then exits 0 if vm_buf was rewritten. */
static pid_t spawn_vm_child(int fds[2])
{
	if (pipe(fds) < 0)
		CT_FAIL("pipe: %s", ct_errname(errno));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (read(fds[0], &c, 1) != 1)
			_exit(2);
		_exit(strcmp(vm_buf, "written by parent") == 0 ? 0 : 1);
	}
	CT_TRUE(pid > 0);
	return pid;
}

CT_TEST(process_vm_readv, from_child)
{
	int fds[2];
	pid_t pid = spawn_vm_child(fds);
	strcpy(vm_buf, "changed in parent");
	char got[64] = {0};
	struct iovec l = {got, sizeof(got)}, r = {vm_buf, sizeof(vm_buf)};
	CT_EQ(process_vm_readv(pid, &l, 1, &r, 1, 0), sizeof(vm_buf));
	CT_STREQ(got, "child memory");
	kill(pid, SIGKILL);
}

CT_TEST(process_vm_readv, bad_arguments)
{
	char got[8];
	struct iovec l = {got, sizeof(got)}, r = {vm_buf, sizeof(got)};
	CT_ERR(process_vm_readv(getpid(), &l, 1, &r, 1, 1), EINVAL);
	struct iovec bad = {(void *)8, sizeof(got)};
	CT_ERR(process_vm_readv(getpid(), &l, 1, &bad, 1, 0), EFAULT);
	CT_EQ(process_vm_readv(getpid(), &l, 1, &r, 1, 0), sizeof(got));
}

CT_TEST(process_vm_writev, into_child)
{
	int fds[2];
	pid_t pid = spawn_vm_child(fds);
	char msg[] = "written by parent";
	struct iovec l = {msg, sizeof(msg)}, r = {vm_buf, sizeof(msg)};
	CT_EQ(process_vm_writev(pid, &l, 1, &r, 1, 0), sizeof(msg));
	CT_EQ(write(fds[1], "x", 1), 1);
	CT_EQ(ct_exit_code(pid), 0);
}

static long vm_readv_of(int target)
{
	char got[8];
	struct iovec l = {got, sizeof(got)}, r = {vm_buf, sizeof(got)};
	return process_vm_readv(target, &l, 1, &r, 1, 0);
}

static long vm_writev_of(int target)
{
	char msg[] = "x";
	struct iovec l = {msg, sizeof(msg)}, r = {vm_buf, sizeof(msg)};
	return process_vm_writev(target, &l, 1, &r, 1, 0);
}

static long getfd_of(int target)
{
	int pfd = (int)syscall(SYS_pidfd_open, target, 0);
	return pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, 0, 0);
}

static long kcmp_of(int target)
{
	return syscall(SYS_kcmp, getpid(), target, KCMP_FILE, 0, 0);
}

CT_TEST(process_vm_readv, other_user_eperm)
{
	ct_as_nobody_eperm(vm_readv_of);
}

CT_TEST(process_vm_writev, bad_arguments)
{
	char msg[] = "abc";
	struct iovec l = {msg, sizeof(msg)}, r = {vm_buf, sizeof(msg)};
	CT_ERR(process_vm_writev(getpid(), &l, 1, &r, 1, 2), EINVAL);
	struct iovec bad = {(void *)8, sizeof(msg)};
	CT_ERR(process_vm_writev(getpid(), &l, 1, &bad, 1, 0), EFAULT);
}

CT_TEST(process_vm_writev, other_user_eperm)
{
	ct_as_nobody_eperm(vm_writev_of);
}

CT_TEST(pidfd_getfd, other_user_eperm)
{
	ct_as_nobody_eperm(getfd_of);
}

CT_TEST(kcmp, other_user_eperm)
{
	ct_as_nobody_eperm(kcmp_of);
}
