/*
 * Signals: kill, tkill, tgkill, rt_sigaction, rt_sigprocmask, rt_sigreturn (a handler returns),
 * rt_sigpending, rt_sigtimedwait, rt_sigqueueinfo, rt_tgsigqueueinfo, rt_sigsuspend,
 * sigaltstack, pause, restart_syscall. The raw syscalls take the kernel's sigset size, 8.
 */
#include "compat_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KSIGSET 8

static volatile sig_atomic_t hits;
static volatile sig_atomic_t last_sig;
static volatile int last_code;
static volatile int last_value;
static volatile pid_t last_pid;
static volatile uintptr_t handler_sp;

static void on_sig(int sig)
{
	hits++;
	last_sig = sig;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits++;
	last_sig = sig;
	last_code = si->si_code;
	last_pid = si->si_pid;
	last_value = si->si_value.sival_int;
	int local;
	handler_sp = (uintptr_t)&local;
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = {.sa_handler = fn, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		CT_FAIL("sigaction(%d): %s", sig, ct_errname(errno));
}

static void handle_info(int sig, int flags)
{
	struct sigaction sa = {.sa_sigaction = on_info, .sa_flags = SA_SIGINFO | flags};
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		CT_FAIL("sigaction(%d): %s", sig, ct_errname(errno));
}

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	CT_OK(sigprocmask(SIG_BLOCK, &s, NULL));
}

CT_TEST(kill, self_runs_handler)
{
	handle_info(SIGUSR1, 0);
	CT_OK(kill(getpid(), SIGUSR1));
	CT_EQ(hits, 1);
	CT_EQ(last_code, SI_USER);
	CT_EQ(last_pid, getpid());
}

CT_TEST(kill, probe_and_errors)
{
	CT_OK(kill(getpid(), 0));
	CT_ERR(kill(getpid(), 65), EINVAL);
	CT_ERR(kill(getpid(), -1), EINVAL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ct_wait(pid);
	CT_ERR(kill(pid, 0), ESRCH);
}

CT_TEST(kill, default_action_terminates_child)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CT_OK(kill(pid, SIGTERM));
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

CT_TEST(kill, process_group)
{
	block(SIGUSR2);
	/* The harness made this case a process group leader. */
	CT_OK(kill(0, SIGUSR2));
	CT_OK(kill(-getpgrp(), SIGUSR2));
	sigset_t p;
	CT_OK(sigpending(&p));
	CT_TRUE(sigismember(&p, SIGUSR2));
}

CT_TEST(kill, ignored_signal_blocked_then_discarded)
{
	signal(SIGUSR1, SIG_IGN);
	block(SIGUSR1);
	CT_OK(kill(getpid(), SIGUSR1));
	sigset_t p;
	CT_OK(sigpending(&p));
	/* A blocked signal stays pending even when ignored: the action may change meanwhile. */
	CT_TRUE(sigismember(&p, SIGUSR1));
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CT_OK(sigpending(&p));
	CT_TRUE(!sigismember(&p, SIGUSR1));
	/* Unblocked and ignored: discarded at once. */
	CT_OK(kill(getpid(), SIGUSR1));
	CT_OK(sigpending(&p));
	CT_TRUE(!sigismember(&p, SIGUSR1));
}

CT_TEST(tkill, self)
{
	handle(SIGUSR1, on_sig, 0);
	CT_OK(syscall(SYS_tkill, syscall(SYS_gettid), SIGUSR1));
	CT_EQ(hits, 1);
	CT_ERR(syscall(SYS_tkill, -1, SIGUSR1), EINVAL);
	CT_ERR(syscall(SYS_tkill, syscall(SYS_gettid), 99), EINVAL);
}

static void *tid_waiter(void *arg)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int sig = 0;
	*(long *)arg = syscall(SYS_gettid);
	sigwait(&s, &sig);
	return (void *)(long)sig;
}

CT_TEST(tgkill, to_thread)
{
	block(SIGUSR1);
	volatile long tid = 0;
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, tid_waiter, (void *)&tid), 0);
	while (tid == 0)
		sched_yield();
	CT_OK(syscall(SYS_tgkill, getpid(), tid, SIGUSR1));
	void *ret;
	CT_EQ(pthread_join(t, &ret), 0);
	CT_EQ((long)ret, SIGUSR1);
	sigset_t p;
	CT_OK(sigpending(&p));
	/* It went to that thread only. */
	CT_TRUE(!sigismember(&p, SIGUSR1));
}

CT_TEST(tgkill, errors)
{
	long tid = syscall(SYS_gettid);
	CT_OK(syscall(SYS_tgkill, getpid(), tid, 0));
	CT_ERR(syscall(SYS_tgkill, -1, tid, 0), EINVAL);
	CT_ERR(syscall(SYS_tgkill, getpid(), 0, 0), EINVAL);
	CT_ERR(syscall(SYS_tgkill, getpid(), tid, 100), EINVAL);
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	/* Our tid is not a thread of the child's group. */
	CT_ERR(syscall(SYS_tgkill, pid, tid, 0), ESRCH);
	kill(pid, SIGKILL);
}

CT_TEST(rt_sigaction, old_action_returned)
{
	handle(SIGUSR1, on_sig, SA_RESTART);
	struct sigaction old;
	CT_OK(sigaction(SIGUSR1, NULL, &old));
	CT_TRUE(old.sa_handler == on_sig);
	CT_TRUE(old.sa_flags & SA_RESTART);
	CT_OK(sigaction(SIGUSR2, NULL, &old));
	CT_TRUE(old.sa_handler == SIG_DFL);
}

CT_TEST(rt_sigaction, errors)
{
	struct sigaction sa = {.sa_handler = on_sig};
	CT_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);
	CT_ERR(sigaction(SIGSTOP, &sa, NULL), EINVAL);
	CT_ERR(sigaction(0, &sa, NULL), EINVAL);
	CT_ERR(sigaction(65, &sa, NULL), EINVAL);
	/* Querying SIGKILL is allowed. */
	CT_OK(sigaction(SIGKILL, NULL, &sa));
	CT_ERR(syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 4), EINVAL);
	CT_ERR(syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, KSIGSET), EFAULT);
}

CT_TEST(rt_sigaction, resethand)
{
	handle(SIGUSR1, on_sig, SA_RESETHAND);
	raise(SIGUSR1);
	CT_EQ(hits, 1);
	struct sigaction old;
	CT_OK(sigaction(SIGUSR1, NULL, &old));
	CT_TRUE(old.sa_handler == SIG_DFL);
}

static volatile int mask_had_usr2, mask_had_self;

static void on_check_mask(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	mask_had_usr2 = sigismember(&cur, SIGUSR2);
	mask_had_self = sigismember(&cur, sig);
}

CT_TEST(rt_sigaction, mask_during_handler)
{
	struct sigaction sa = {.sa_handler = on_check_mask};
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CT_OK(sigaction(SIGUSR1, &sa, NULL));
	raise(SIGUSR1);
	CT_EQ(mask_had_usr2, 1);
	CT_EQ(mask_had_self, 1);
	sa.sa_flags = SA_NODEFER;
	CT_OK(sigaction(SIGUSR1, &sa, NULL));
	raise(SIGUSR1);
	CT_EQ(mask_had_self, 0);
	/* The mask is restored on return. */
	sigset_t cur;
	CT_OK(sigprocmask(SIG_BLOCK, NULL, &cur));
	CT_TRUE(!sigismember(&cur, SIGUSR2));
}

CT_TEST(rt_sigaction, sigchld_ignored_autoreaps)
{
	signal(SIGCHLD, SIG_IGN);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	int st;
	/* With SIGCHLD ignored, children are not left as zombies: wait finds none. */
	CT_ERR(waitpid(pid, &st, 0), ECHILD);
}

CT_TEST(rt_sigprocmask, block_unblock_setmask)
{
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_BLOCK, &s, &old));
	CT_TRUE(!sigismember(&old, SIGUSR1));
	CT_OK(sigprocmask(SIG_BLOCK, NULL, &old));
	CT_TRUE(sigismember(&old, SIGUSR1));
	CT_OK(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CT_OK(sigprocmask(SIG_BLOCK, NULL, &old));
	CT_TRUE(!sigismember(&old, SIGUSR1));
	sigaddset(&s, SIGUSR2);
	CT_OK(sigprocmask(SIG_SETMASK, &s, NULL));
	CT_OK(sigprocmask(SIG_SETMASK, NULL, &old));
	CT_TRUE(sigismember(&old, SIGUSR1) && sigismember(&old, SIGUSR2));
}

CT_TEST(rt_sigprocmask, kill_and_stop_unblockable)
{
	uint64_t all = ~0ull, cur = 0;
	CT_OK(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, KSIGSET));
	CT_OK(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, KSIGSET));
	CT_EQ(cur & (1ull << (SIGKILL - 1)), 0);
	CT_EQ(cur & (1ull << (SIGSTOP - 1)), 0);
	CT_TRUE(cur & (1ull << (SIGUSR1 - 1)));
}

CT_TEST(rt_sigprocmask, errors)
{
	uint64_t s = 0;
	CT_ERR(syscall(SYS_rt_sigprocmask, 99, &s, NULL, KSIGSET), EINVAL);
	CT_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, 4), EINVAL);
	CT_ERR(syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, KSIGSET), EFAULT);
}

CT_TEST(rt_sigprocmask, unblock_delivers_pending)
{
	handle(SIGUSR1, on_sig, 0);
	block(SIGUSR1);
	raise(SIGUSR1);
	CT_EQ(hits, 0);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_UNBLOCK, &s, NULL));
	CT_EQ(hits, 1);
}

CT_TEST(rt_sigreturn, handler_returns_to_interrupted_code)
{
	handle(SIGUSR1, on_sig, 0);
	volatile long a = 0x1234567890, b = 42;
	for (int i = 0; i < 5; i++)
		raise(SIGUSR1);
	CT_EQ(hits, 5);
	CT_EQ(a, 0x1234567890);
	CT_EQ(b, 42);
}

CT_TEST(rt_sigreturn, restores_mask)
{
	handle(SIGUSR1, on_check_mask, 0);
	raise(SIGUSR1);
	CT_EQ(mask_had_self, 1);
	sigset_t cur;
	CT_OK(sigprocmask(SIG_BLOCK, NULL, &cur));
	CT_TRUE(!sigismember(&cur, SIGUSR1));
}

CT_TEST(rt_sigpending, blocked_signal_pending)
{
	block(SIGUSR1);
	uint64_t p = ~0ull;
	CT_OK(syscall(SYS_rt_sigpending, &p, KSIGSET));
	CT_EQ(p, 0);
	raise(SIGUSR1);
	CT_OK(syscall(SYS_rt_sigpending, &p, KSIGSET));
	CT_EQ(p, 1ull << (SIGUSR1 - 1));
	CT_ERR(syscall(SYS_rt_sigpending, &p, 16), EINVAL);
	CT_ERR(syscall(SYS_rt_sigpending, (void *)8, KSIGSET), EFAULT);
}

CT_TEST(rt_sigtimedwait, timeout_and_pending)
{
	block(SIGUSR1);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	struct timespec ts = {0, 10 * 1000 * 1000};
	CT_ERR(sigtimedwait(&s, NULL, &ts), EAGAIN);
	union sigval v = {.sival_int = 77};
	CT_OK(sigqueue(getpid(), SIGUSR1, v));
	siginfo_t si;
	CT_EQ(sigtimedwait(&s, &si, &ts), SIGUSR1);
	CT_EQ(si.si_code, SI_QUEUE);
	CT_EQ(si.si_value.sival_int, 77);
	CT_EQ(si.si_pid, getpid());
}

CT_TEST(rt_sigtimedwait, errors)
{
	uint64_t s = 1ull << (SIGUSR1 - 1);
	struct timespec bad = {0, 1000 * 1000 * 1000};
	CT_ERR(syscall(SYS_rt_sigtimedwait, &s, NULL, &bad, KSIGSET), EINVAL);
	struct timespec zero = {0, 0};
	CT_ERR(syscall(SYS_rt_sigtimedwait, &s, NULL, &zero, 4), EINVAL);
	CT_ERR(syscall(SYS_rt_sigtimedwait, &s, NULL, &zero, KSIGSET), EAGAIN);
}

CT_TEST(rt_sigtimedwait, realtime_signals_queue_in_order)
{
	int lo = SIGRTMIN + 1, hi = SIGRTMIN + 2;
	block(lo);
	block(hi);
	union sigval v;
	for (int i = 0; i < 3; i++) {
		v.sival_int = i;
		CT_OK(sigqueue(getpid(), hi, v));
		CT_OK(sigqueue(getpid(), lo, v));
	}
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, lo);
	sigaddset(&s, hi);
	siginfo_t si;
	/* Lower-numbered real-time signals first, each queued instance in order. */
	for (int i = 0; i < 6; i++) {
		CT_EQ(sigwaitinfo(&s, &si), i < 3 ? lo : hi);
		CT_EQ(si.si_value.sival_int, i % 3);
	}
}

CT_TEST(rt_sigqueueinfo, to_self_with_value)
{
	handle_info(SIGUSR1, 0);
	siginfo_t si = {.si_signo = SIGUSR1, .si_code = SI_QUEUE};
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 1234;
	CT_OK(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	CT_EQ(hits, 1);
	CT_EQ(last_code, SI_QUEUE);
	CT_EQ(last_value, 1234);
}

CT_TEST(rt_sigqueueinfo, kernel_codes_only_to_self)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	siginfo_t si = {.si_signo = SIGUSR1, .si_code = SI_USER};
	/* A non-negative si_code would impersonate the kernel or kill(2). */
	CT_ERR(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si), EPERM);
	si.si_code = SI_QUEUE;
	CT_OK(syscall(SYS_rt_sigqueueinfo, pid, 0, &si));
	CT_ERR(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (void *)8), EFAULT);
	kill(pid, SIGKILL);
}

CT_TEST(rt_tgsigqueueinfo, to_thread)
{
	block(SIGUSR1);
	volatile long tid = 0;
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, tid_waiter, (void *)&tid), 0);
	while (tid == 0)
		sched_yield();
	siginfo_t si = {.si_signo = SIGUSR1, .si_code = SI_QUEUE};
	si.si_pid = getpid();
	CT_OK(syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGUSR1, &si));
	void *ret;
	CT_EQ(pthread_join(t, &ret), 0);
	CT_EQ((long)ret, SIGUSR1);
	CT_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), 0, SIGUSR1, &si), EINVAL);
	CT_ERR(syscall(SYS_rt_tgsigqueueinfo, getpid(), tid + 0x3fffffff, SIGUSR1, &si), ESRCH);
}

CT_TEST(rt_sigsuspend, pending_signal_interrupts)
{
	handle(SIGUSR1, on_sig, 0);
	block(SIGUSR1);
	raise(SIGUSR1);
	sigset_t none;
	sigemptyset(&none);
	CT_ERR(sigsuspend(&none), EINTR);
	CT_EQ(hits, 1);
	/* The old mask comes back. */
	sigset_t cur;
	CT_OK(sigprocmask(SIG_BLOCK, NULL, &cur));
	CT_TRUE(sigismember(&cur, SIGUSR1));
	CT_ERR(syscall(SYS_rt_sigsuspend, &none, 4), EINVAL);
}

CT_TEST(rt_sigsuspend, woken_by_child)
{
	handle(SIGUSR1, on_sig, 0);
	block(SIGUSR1);
	pid_t me = getpid();
	pid_t pid = fork();
	if (pid == 0)
		_exit(kill(me, SIGUSR1) == 0 ? 0 : 1);
	sigset_t none;
	sigemptyset(&none);
	CT_ERR(syscall(SYS_rt_sigsuspend, &none, KSIGSET), EINTR);
	CT_EQ(last_sig, SIGUSR1);
	ct_wait(pid);
}

CT_TEST(sigaltstack, query_default_and_set)
{
	stack_t ss;
	CT_OK(sigaltstack(NULL, &ss));
	CT_TRUE(ss.ss_flags & SS_DISABLE);
	static char mem[64 * 1024];
	stack_t n = {.ss_sp = mem, .ss_size = sizeof(mem)};
	CT_OK(sigaltstack(&n, NULL));
	CT_OK(sigaltstack(NULL, &ss));
	CT_TRUE(ss.ss_sp == mem && ss.ss_size == sizeof(mem) && ss.ss_flags == 0);
}

CT_TEST(sigaltstack, handler_runs_on_it)
{
	static char mem[64 * 1024];
	stack_t n = {.ss_sp = mem, .ss_size = sizeof(mem)};
	CT_OK(sigaltstack(&n, NULL));
	handle_info(SIGUSR1, SA_ONSTACK);
	raise(SIGUSR1);
	CT_EQ(hits, 1);
	CT_TRUE(handler_sp >= (uintptr_t)mem && handler_sp < (uintptr_t)mem + sizeof(mem));
	handler_sp = 0;
	handle_info(SIGUSR2, 0);
	raise(SIGUSR2);
	CT_TRUE(handler_sp < (uintptr_t)mem || handler_sp >= (uintptr_t)mem + sizeof(mem));
}

CT_TEST(sigaltstack, errors)
{
	static char mem[64 * 1024];
	stack_t n = {.ss_sp = mem, .ss_size = 512};
	CT_ERR(sigaltstack(&n, NULL), ENOMEM);
	n.ss_size = sizeof(mem);
	n.ss_flags = 0x1234;
	CT_ERR(sigaltstack(&n, NULL), EINVAL);
	CT_ERR(sigaltstack((stack_t *)8, NULL), EFAULT);
}

CT_TEST(pause, interrupted_by_timer)
{
	handle(SIGALRM, on_sig, 0);
	struct itimerval it = {.it_value = {0, 10000}};
	CT_OK(setitimer(ITIMER_REAL, &it, NULL));
	CT_ERR(syscall(SYS_pause), EINTR);
	CT_EQ(last_sig, SIGALRM);
}

CT_TEST(pause, interrupted_by_parent)
{
	handle(SIGUSR1, on_sig, 0);
	pid_t pid = fork();
	if (pid == 0) {
		long r = syscall(SYS_pause);
		_exit(r == -1 && errno == EINTR && hits > 0 ? 0 : 1);
	}
	int st;
	/* Keep signalling until the child returns from pause (it may not be in it yet). */
	for (int i = 0; i < 500; i++) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGUSR1);
		if (waitpid(pid, &st, WNOHANG) == pid) {
			CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			return;
		}
	}
	CT_FAIL("child never left pause");
}

/* SA_RESTART does not restart pause: it fails with EINTR after the handler (under the sentry's
 * seccomp platform a trap would have made it restart; see platform/filter.c). */
CT_TEST(pause, sa_restart_handler_still_eintr)
{
	handle(SIGUSR2, on_sig, SA_RESTART);
	pid_t pid = fork();
	if (pid == 0) {
		long r = syscall(SYS_pause);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	int st;
	for (int i = 0; i < 500; i++) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGUSR2);
		if (waitpid(pid, &st, WNOHANG) == pid) {
			CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			return;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CT_FAIL("child never left pause");
}

CT_TEST(restart_syscall, without_restart_block)
{
	/* Nothing to restart: Linux answers EINTR. */
	CT_ERR(syscall(SYS_restart_syscall), EINTR);
}

CT_TEST(restart_syscall, sleep_resumes_after_stop)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		/* A stop and continue restarts the sleep through restart_syscall. */
		long r = syscall(SYS_nanosleep, &ts, NULL);
		_exit(r == 0 ? 0 : 1);
	}
	struct timespec d = {0, 20 * 1000 * 1000};
	nanosleep(&d, NULL);
	CT_OK(kill(pid, SIGSTOP));
	int st;
	CT_EQ(waitpid(pid, &st, WUNTRACED), pid);
	CT_TRUE(WIFSTOPPED(st));
	CT_OK(kill(pid, SIGCONT));
	st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
