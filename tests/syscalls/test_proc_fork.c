/*
 * Process creation and ending: fork, vfork, clone, clone3, exit, exit_group, getpid, getppid,
 * gettid, set_tid_address. glibc's fork() uses clone, so the fork cases call SYS_fork directly;
 * the children of raw forks only make raw syscalls and _exit, since glibc's per-thread state is
 * not updated by them.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long raw_fork(void)
{
	return syscall(SYS_fork);
}

/* Exit status of a child that exited normally, or fail the case. */
static int exit_code(int pid)
{
	int st = ct_wait(pid);
	if (!WIFEXITED(st))
		CT_FAIL("child %d did not exit normally: status 0x%x", pid, st);
	return WEXITSTATUS(st);
}

CT_TEST(fork, child_returns_zero)
{
	long parent = getpid();
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		_exit(syscall(SYS_getppid) == parent ? 7 : 1);
	CT_TRUE(pid > 0 && pid != parent);
	CT_EQ(exit_code(pid), 7);
}

CT_TEST(fork, memory_is_copied)
{
	static volatile int x = 1;
	long pid = CT_OK(raw_fork());
	if (pid == 0) {
		x = 2;
		_exit(x);
	}
	CT_EQ(exit_code(pid), 2);
	CT_EQ(x, 1);
}

CT_TEST(fork, file_offset_shared)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		_exit(write(fd, "abc", 3) == 3 ? 0 : 1);
	CT_EQ(exit_code(pid), 0);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 3);
}

CT_TEST(fork, pending_signals_not_inherited)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CT_OK(sigprocmask(SIG_BLOCK, &set, NULL));
	CT_OK(kill(getpid(), SIGUSR1));
	long pid = CT_OK(raw_fork());
	if (pid == 0) {
		sigset_t pend, mask;
		sigemptyset(&pend);
		syscall(SYS_rt_sigpending, &pend, 8);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, 8);
		/* The mask is inherited, the pending set is not. */
		_exit(!sigismember(&pend, SIGUSR1) && sigismember(&mask, SIGUSR1) ? 0 : 1);
	}
	CT_EQ(exit_code(pid), 0);
	sigset_t pend;
	CT_OK(sigpending(&pend));
	CT_TRUE(sigismember(&pend, SIGUSR1));
}

CT_TEST(vfork, child_shares_memory)
{
	static volatile int shared;
	pid_t pid = vfork();
	if (pid == 0) {
		shared = 42;
		_exit(0);
	}
	CT_TRUE(pid > 0);
	CT_EQ(exit_code(pid), 0);
	/* The parent resumes only after the child exited, and sees its write. */
	CT_EQ(shared, 42);
}

CT_TEST(vfork, exec_in_child)
{
	char *argv[] = {"false", NULL};
	pid_t pid = vfork();
	if (pid == 0) {
		execve("/bin/false", argv, environ);
		_exit(99);
	}
	CT_TRUE(pid > 0);
	CT_EQ(exit_code(pid), 1);
}

CT_TEST(clone, like_fork)
{
	long pid = CT_OK(syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0));
	if (pid == 0)
		_exit(11);
	CT_EQ(exit_code(pid), 11);
}

static volatile int clone_var;

static int clone_fn(void *arg)
{
	clone_var = (int)(long)arg;
	return 5;
}

CT_TEST(clone, vm_shares_memory)
{
	size_t sz = 64 * 1024;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CT_TRUE(stack != MAP_FAILED);
	int pid = CT_OK(clone(clone_fn, stack + sz, CLONE_VM | SIGCHLD, (void *)33L));
	CT_EQ(exit_code(pid), 5);
	CT_EQ(clone_var, 33);
}

CT_TEST(clone, settid_cleartid)
{
	size_t sz = 64 * 1024;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CT_TRUE(stack != MAP_FAILED);
	pid_t ptid = 0, ctid = -1;
	int flags = CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
	int pid =
	    CT_OK(clone(clone_fn, stack + sz, flags | SIGCHLD, (void *)1L, &ptid, NULL, &ctid));
	CT_EQ(exit_code(pid), 5);
	CT_EQ(ptid, pid);
	/* The child shared our memory, so its exit cleared the tid word. */
	CT_EQ(ctid, 0);
}

CT_TEST(clone, exit_signal_zero_needs_wclone)
{
	long pid = CT_OK(syscall(SYS_clone, 0, 0, NULL, NULL, 0));
	if (pid == 0)
		_exit(3);
	int st;
	/* A child that does not signal SIGCHLD is only seen with __WCLONE or __WALL. */
	CT_ERR(waitpid(pid, &st, 0), ECHILD);
	CT_EQ(waitpid(pid, &st, __WCLONE), pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

CT_TEST(clone, invalid_flag_combinations)
{
	/* CLONE_SIGHAND needs CLONE_VM; CLONE_THREAD needs CLONE_SIGHAND. */
	CT_ERR(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, 0, NULL, NULL, 0), EINVAL);
	CT_ERR(syscall(SYS_clone, CLONE_THREAD | CLONE_VM | SIGCHLD, 0, NULL, NULL, 0), EINVAL);
	CT_ERR(syscall(SYS_clone, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0, NULL, NULL, 0), EINVAL);
}

CT_TEST(clone, pidfd)
{
	int pidfd = -1;
	long pid = CT_OK(syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, NULL, 0));
	if (pid == 0)
		_exit(0);
	CT_TRUE(pidfd >= 0);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	CT_EQ(poll(&p, 1, 5000), 1);
	CT_EQ(exit_code(pid), 0);
}

static void *blocker(void *arg)
{
	int *fds = arg;
	char c;
	(void)!read(fds[0], &c, 1);
	return NULL;
}

CT_TEST(clone, fork_in_threaded_process)
{
	int fds[2];
	CT_OK(pipe(fds));
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, blocker, fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* Only the forking thread exists in the child. */
		char buf[4096];
		int fd = open("/proc/self/status", O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			_exit(2);
		buf[n] = 0;
		_exit(strstr(buf, "\nThreads:\t1\n") ? 0 : 1);
	}
	CT_TRUE(pid > 0);
	CT_EQ(exit_code(pid), 0);
	CT_EQ(write(fds[1], "x", 1), 1);
	CT_EQ(pthread_join(t, NULL), 0);
}

static long raw_clone3(struct clone_args *a, size_t size)
{
	return syscall(SYS_clone3, a, size);
}

CT_TEST(clone3, raw_fork)
{
	struct clone_args a = {.exit_signal = SIGCHLD};
	long pid = CT_OK(raw_clone3(&a, sizeof(a)));
	if (pid == 0)
		_exit(syscall(SYS_getpid) == syscall(SYS_gettid) ? 4 : 1);
	CT_EQ(exit_code(pid), 4);
}

CT_TEST(clone3, pidfd_and_parent_tid)
{
	int pidfd = -1;
	pid_t ptid = 0;
	struct clone_args a = {.flags = CLONE_PIDFD | CLONE_PARENT_SETTID,
	                       .pidfd = (uintptr_t)&pidfd,
	                       .parent_tid = (uintptr_t)&ptid,
	                       .exit_signal = SIGCHLD};
	long pid = CT_OK(raw_clone3(&a, sizeof(a)));
	if (pid == 0)
		_exit(0);
	CT_TRUE(pidfd >= 0);
	CT_EQ(ptid, pid);
	CT_EQ(exit_code(pid), 0);
}

CT_TEST(clone3, bad_arguments)
{
	struct clone_args a = {.exit_signal = SIGCHLD};
	/* Smaller than CLONE_ARGS_SIZE_VER0 (64). */
	CT_ERR(raw_clone3(&a, 32), EINVAL);
	CT_ERR(raw_clone3((struct clone_args *)8, sizeof(a)), EFAULT);
	a.exit_signal = 1000;
	CT_ERR(raw_clone3(&a, sizeof(a)), EINVAL);
	a.exit_signal = SIGCHLD;
	a.flags = CLONE_SIGHAND;
	CT_ERR(raw_clone3(&a, sizeof(a)), EINVAL);
}

CT_TEST(clone3, oversized_struct_nonzero_tail)
{
	struct {
		struct clone_args a;
		uint64_t extra;
	} big = {.a = {.exit_signal = SIGCHLD}, .extra = 1};
	/* Unknown trailing fields must be zero. */
	CT_ERR(raw_clone3(&big.a, sizeof(big)), E2BIG);
}

static void on_signal(int sig)
{
	(void)sig;
}

/* CLONE_CLEAR_SIGHAND: the child's caught signals are back at SIG_DFL, its ignored ones stay
 * ignored, each with no flags and an empty mask; the parent's are untouched. */
CT_TEST(clone3, clear_sighand)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	struct sigaction ign = {.sa_handler = SIG_IGN, .sa_flags = SA_RESTART};
	sigemptyset(&ign.sa_mask);
	sigaddset(&ign.sa_mask, SIGTERM);
	CT_OK(sigaction(SIGUSR1, &sa, NULL));
	CT_OK(sigaction(SIGWINCH, &sa, NULL));
	CT_OK(sigaction(SIGRTMIN + 3, &sa, NULL));
	CT_OK(sigaction(SIGUSR2, &ign, NULL));
	struct clone_args a = {.flags = CLONE_CLEAR_SIGHAND, .exit_signal = SIGCHLD};
	long pid = CT_OK(raw_clone3(&a, sizeof(a)));
	if (pid == 0) {
		struct sigaction o;
		int bad = 0;
		int caught[] = {SIGUSR1, SIGWINCH, SIGRTMIN + 3};
		for (int i = 0; i < 3; i++) {
			sigaction(caught[i], NULL, &o);
			if (o.sa_handler != SIG_DFL || (o.sa_flags & SA_RESTART) ||
			    sigismember(&o.sa_mask, SIGTERM))
				bad |= 1 << i;
		}
		sigaction(SIGUSR2, NULL, &o);
		if (o.sa_handler != SIG_IGN || (o.sa_flags & SA_RESTART) ||
		    sigismember(&o.sa_mask, SIGTERM))
			bad |= 8;
		/* A signal with its default action now: SIGUSR1 ends the child. */
		if (!bad)
			raise(SIGUSR1);
		_exit(bad ? 16 + bad : 1);
	}
	int st;
	CT_EQ(waitpid((pid_t)pid, &st, 0), pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	struct sigaction now;
	CT_OK(sigaction(SIGUSR1, NULL, &now));
	CT_TRUE(now.sa_handler == on_signal && (now.sa_flags & SA_RESTART));
	/* With CLONE_SIGHAND it would clear the parent's too: refused. */
	a.flags = CLONE_CLEAR_SIGHAND | CLONE_SIGHAND | CLONE_VM;
	CT_ERR(raw_clone3(&a, sizeof(a)), EINVAL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGWINCH, SIG_DFL);
	signal(SIGRTMIN + 3, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static void *thread_ret(void *arg)
{
	return arg;
}

CT_TEST(clone3, pthread_create)
{
	pthread_t t;
	void *ret = NULL;
	CT_EQ(pthread_create(&t, NULL, thread_ret, (void *)77L), 0);
	CT_EQ(pthread_join(t, &ret), 0);
	CT_EQ((long)ret, 77);
}

CT_TEST(clone3, posix_spawn)
{
	pid_t pid;
	char *argv[] = {"false", NULL};
	CT_EQ(posix_spawn(&pid, "/bin/false", NULL, NULL, argv, environ), 0);
	CT_EQ(exit_code(pid), 1);
}

CT_TEST(exit, single_thread_ends_process)
{
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		syscall(SYS_exit, 3);
	CT_EQ(exit_code(pid), 3);
}

static void *exit_group_later(void *arg)
{
	(void)arg;
	/* Give the main thread time to exit first: the process must live on without it. */
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	syscall(SYS_exit_group, 9);
	return NULL;
}

CT_TEST(exit, main_thread_exit_keeps_process)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_group_later, NULL) != 0)
			_exit(1);
		syscall(SYS_exit, 0);
	}
	CT_TRUE(pid > 0);
	CT_EQ(exit_code(pid), 9);
}

CT_TEST(exit_group, status)
{
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		syscall(SYS_exit_group, 42);
	CT_EQ(exit_code(pid), 42);
}

CT_TEST(exit_group, status_truncated_to_8_bits)
{
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		syscall(SYS_exit_group, 0x1ff);
	CT_EQ(exit_code(pid), 0xff);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *group_exiter(void *arg)
{
	(void)arg;
	syscall(SYS_exit_group, 6);
	return NULL;
}

CT_TEST(exit_group, from_thread_kills_all)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t a, b;
		if (pthread_create(&a, NULL, sleeper, NULL) ||
		    pthread_create(&b, NULL, group_exiter, NULL))
			_exit(1);
		for (;;)
			pause();
	}
	CT_TRUE(pid > 0);
	CT_EQ(exit_code(pid), 6);
}

CT_TEST(getpid, matches_fork_return)
{
	int fds[2];
	CT_OK(pipe(fds));
	long pid = CT_OK(raw_fork());
	if (pid == 0) {
		long me = syscall(SYS_getpid);
		_exit(write(fds[1], &me, sizeof(me)) == sizeof(me) ? 0 : 1);
	}
	long seen = 0;
	CT_EQ(read(fds[0], &seen, sizeof(seen)), sizeof(seen));
	CT_EQ(seen, pid);
	CT_EQ(exit_code(pid), 0);
}

static void *getpid_thread(void *arg)
{
	long *out = arg;
	out[0] = syscall(SYS_getpid);
	out[1] = syscall(SYS_gettid);
	return NULL;
}

CT_TEST(getpid, same_in_thread)
{
	long ids[2];
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, getpid_thread, ids), 0);
	CT_EQ(pthread_join(t, NULL), 0);
	CT_EQ(ids[0], syscall(SYS_getpid));
}

CT_TEST(getppid, child_sees_parent)
{
	long me = getpid();
	long pid = CT_OK(raw_fork());
	if (pid == 0)
		_exit(syscall(SYS_getppid) == me ? 0 : 1);
	CT_EQ(exit_code(pid), 0);
	CT_TRUE(syscall(SYS_getppid) > 0);
}

CT_TEST(getppid, reparented_to_subreaper)
{
	CT_OK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	int fds[2];
	CT_OK(pipe(fds));
	long me = getpid();
	pid_t mid = fork();
	if (mid == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			/* Wait until the middle process is gone, then report our parent. */
			while (syscall(SYS_getppid) != me)
				sched_yield();
			long pp = syscall(SYS_getppid);
			_exit(write(fds[1], &pp, sizeof(pp)) == sizeof(pp) ? 0 : 1);
		}
		_exit(grandchild > 0 ? 0 : 1);
	}
	CT_EQ(exit_code(mid), 0);
	long pp = 0;
	CT_EQ(read(fds[0], &pp, sizeof(pp)), sizeof(pp));
	CT_EQ(pp, me);
	/* The orphan is now our child: we can reap it. */
	int st;
	CT_TRUE(wait(&st) > 0);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

CT_TEST(gettid, main_thread_equals_pid)
{
	CT_EQ(syscall(SYS_gettid), syscall(SYS_getpid));
}

CT_TEST(gettid, thread_differs)
{
	long ids[2];
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, getpid_thread, ids), 0);
	CT_EQ(pthread_join(t, NULL), 0);
	CT_TRUE(ids[1] > 0);
	CT_TRUE(ids[1] != syscall(SYS_gettid));
}

CT_TEST(set_tid_address, returns_tid)
{
	static pid_t word;
	CT_EQ(syscall(SYS_set_tid_address, &word), syscall(SYS_gettid));
}

static void *tid_clearing_thread(void *arg)
{
	syscall(SYS_set_tid_address, arg);
	/* A raw thread exit: the kernel clears *arg and wakes futex waiters on it. */
	syscall(SYS_exit, 0);
	return NULL;
}

CT_TEST(set_tid_address, cleared_and_woken_on_thread_exit)
{
	static volatile pid_t word = 12345;
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, tid_clearing_thread, (void *)&word), 0);
	struct timespec ts = {1, 0};
	while (word != 0) {
		long r = syscall(SYS_futex, &word, FUTEX_WAIT, 12345, &ts, NULL, 0);
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			CT_FAIL("futex wait: %s", ct_errname(errno));
	}
	CT_EQ(word, 0);
}
