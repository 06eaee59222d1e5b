/*
 * Process attributes and synchronisation: getrlimit, setrlimit, prlimit64, prctl, arch_prctl,
 * futex, futex_waitv, set_robust_list, get_robust_list, membarrier, rseq, seccomp, unshare,
 * setns, syslog. Limits are only lowered (or raised back up to the hard limit); answers that
 * depend on a capability are checked against the capabilities this process has.
 */
#include "compat_test.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int have_cap(int cap)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		CT_FAIL("capget: %s", ct_errname(errno));
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

static long futex(void *uaddr, int op, uint32_t val, const struct timespec *ts, void *uaddr2,
                  uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

CT_TEST(getrlimit, matches_prlimit64)
{
	struct rlimit a, b;
	CT_OK(syscall(SYS_getrlimit, RLIMIT_NOFILE, &a));
	CT_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &b));
	CT_EQ(a.rlim_cur, b.rlim_cur);
	CT_EQ(a.rlim_max, b.rlim_max);
	CT_TRUE(a.rlim_cur <= a.rlim_max);
}

CT_TEST(getrlimit, errors)
{
	struct rlimit a;
	CT_ERR(syscall(SYS_getrlimit, 1000, &a), EINVAL);
	CT_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, (void *)8), EFAULT);
}

CT_TEST(setrlimit, lower_nofile_then_emfile)
{
	struct rlimit r;
	CT_OK(syscall(SYS_getrlimit, RLIMIT_NOFILE, &r));
	struct rlimit low = {8, r.rlim_max};
	CT_OK(syscall(SYS_setrlimit, RLIMIT_NOFILE, &low));
	int n = 0;
	while (open("/dev/null", O_RDONLY) >= 0 && n < 100)
		n++;
	CT_EQ(errno, EMFILE);
	CT_TRUE(n <= 8);
	/* The soft limit may go back up to the hard limit without privilege. */
	CT_OK(syscall(SYS_setrlimit, RLIMIT_NOFILE, &r));
	CT_OK(open("/dev/null", O_RDONLY));
}

CT_TEST(setrlimit, errors)
{
	struct rlimit r;
	CT_OK(syscall(SYS_getrlimit, RLIMIT_CORE, &r));
	struct rlimit bad = {r.rlim_max, r.rlim_max == RLIM_INFINITY ? 0 : r.rlim_max - 1};
	if (r.rlim_max == 0)
		bad = (struct rlimit){1, 0};
	/* Soft above hard. */
	CT_ERR(syscall(SYS_setrlimit, RLIMIT_CORE, &bad), EINVAL);
	CT_ERR(syscall(SYS_setrlimit, 1000, &r), EINVAL);
	CT_ERR(syscall(SYS_setrlimit, RLIMIT_CORE, (void *)8), EFAULT);
}

CT_TEST(prlimit64, set_and_old)
{
	struct rlimit r, old, cur;
	CT_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &r));
	struct rlimit low = {16, r.rlim_max};
	CT_OK(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &low, &old));
	CT_EQ(old.rlim_cur, r.rlim_cur);
	CT_OK(syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, NULL, &cur));
	CT_EQ(cur.rlim_cur, 16);
}

CT_TEST(prlimit64, on_child)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	struct rlimit r, low = {0, 0}, got;
	CT_OK(syscall(SYS_prlimit64, pid, RLIMIT_CORE, NULL, &r));
	low.rlim_max = r.rlim_max;
	CT_OK(syscall(SYS_prlimit64, pid, RLIMIT_CORE, &low, NULL));
	CT_OK(syscall(SYS_prlimit64, pid, RLIMIT_CORE, NULL, &got));
	CT_EQ(got.rlim_cur, 0);
	kill(pid, SIGKILL);
	ct_wait(pid);
	CT_ERR(syscall(SYS_prlimit64, pid, RLIMIT_CORE, NULL, &got), ESRCH);
	CT_ERR(syscall(SYS_prlimit64, 0, 1000, NULL, &got), EINVAL);
}

/* Another user's limits are closed, to reading too (check_prlimit_permission). */
static long prlimit_of(int target)
{
	struct rlimit r;
	return syscall(SYS_prlimit64, target, RLIMIT_CORE, NULL, &r);
}

CT_TEST(prlimit64, other_user_eperm)
{
	ct_as_nobody_eperm(prlimit_of);
}

CT_TEST(prctl, name)
{
	char name[32] = {0};
	CT_OK(prctl(PR_SET_NAME, "a-very-long-thread-name", 0, 0, 0));
	CT_OK(prctl(PR_GET_NAME, name, 0, 0, 0));
	/* Truncated to 15 characters. */
	CT_STREQ(name, "a-very-long-thr");
	CT_ERR(prctl(PR_SET_NAME, (void *)8, 0, 0, 0), EFAULT);
}

CT_TEST(prctl, pdeathsig_get_set)
{
	int sig = -1;
	CT_OK(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
	CT_EQ(sig, 0);
	CT_OK(prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0));
	CT_OK(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
	CT_EQ(sig, SIGUSR1);
	CT_ERR(prctl(PR_SET_PDEATHSIG, 1000, 0, 0, 0), EINVAL);
}

CT_TEST(prctl, pdeathsig_delivered)
{
	CT_OK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	int fds[2];
	CT_OK(pipe(fds));
	pid_t mid = fork();
	if (mid == 0) {
		pid_t parent = getpid();
		pid_t g = fork();
		if (g == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() != parent)
				_exit(3);
			(void)!write(fds[1], "r", 1);
			for (;;)
				pause();
		}
		char c;
		_exit(read(fds[0], &c, 1) == 1 ? 0 : 1);
	}
	CT_EQ(ct_exit_code(mid), 0);
	/* The grandchild, now ours, was killed when its parent died. */
	int st;
	CT_TRUE(wait(&st) > 0);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

CT_TEST(prctl, no_new_privs)
{
	CT_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	CT_ERR(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), EINVAL);
	CT_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	CT_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1);
	pid_t pid = fork();
	if (pid == 0)
		_exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	CT_EQ(ct_exit_code(pid), 1);
}

/* no_new_privs is kept across execve, and /proc/PID/status shows it. */
CT_TEST(prctl, no_new_privs_kept_by_exec)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		execl("/bin/grep", "grep", "-qx", "NoNewPrivs:\t1", "/proc/self/status",
		      (char *)NULL);
		_exit(3);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(prctl, dumpable)
{
	CT_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	CT_OK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
	CT_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	CT_ERR(prctl(PR_SET_DUMPABLE, 2, 0, 0, 0), EINVAL);
	CT_OK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
}

CT_TEST(prctl, child_subreaper_and_bad_option)
{
	int v = -1;
	CT_OK(prctl(PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0));
	CT_EQ(v, 0);
	CT_OK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	CT_OK(prctl(PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0));
	CT_EQ(v, 1);
	CT_ERR(prctl(0x7fff1234, 0, 0, 0, 0), EINVAL);
}

CT_TEST(arch_prctl, get_fs_is_thread_pointer)
{
	unsigned long fs = 0, gs = 1;
	CT_OK(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs));
	/* On x86_64 glibc, pthread_self() is the TCB address that %fs points to. */
	CT_EQ(fs, (unsigned long)pthread_self());
	CT_OK(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs));
	CT_OK(syscall(SYS_arch_prctl, ARCH_SET_FS, fs));
	CT_ERR(syscall(SYS_arch_prctl, 0x9999, &fs), EINVAL);
	CT_ERR(syscall(SYS_arch_prctl, ARCH_GET_FS, (void *)8), EFAULT);
}

CT_TEST(futex, wait_errors_and_timeout)
{
	uint32_t w = 1;
	CT_ERR(futex(&w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0), EAGAIN);
	struct timespec ts = {0, 5000000};
	CT_ERR(futex(&w, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0), ETIMEDOUT);
	CT_EQ(futex(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
	CT_ERR(futex((char *)&w + 1, FUTEX_WAIT, 1, &ts, NULL, 0), EINVAL);
	CT_ERR(futex((void *)8, FUTEX_WAIT, 1, &ts, NULL, 0), EFAULT);
	CT_ERR(futex(&w, 99, 0, NULL, NULL, 0), ENOSYS);
	struct timespec bad = {0, 1000000000};
	CT_ERR(futex(&w, FUTEX_WAIT, 1, &bad, NULL, 0), EINVAL);
}

static uint32_t fw1, fw2;
static volatile int waiters_ready;

static void *futex_waiter(void *arg)
{
	uint32_t *w = arg;
	__atomic_fetch_add(&waiters_ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == 0)
		futex(w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

/* Wake until the count of woken waiters reaches n (a waiter may not be asleep yet). */
static void wake_all(uint32_t *w, int n)
{
	__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
	(void)n;
	futex(w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

CT_TEST(futex, wait_wake_threads)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		CT_EQ(pthread_create(&t[i], NULL, futex_waiter, &fw1), 0);
	while (waiters_ready < 3)
		sched_yield();
	wake_all(&fw1, 3);
	for (int i = 0; i < 3; i++)
		CT_EQ(pthread_join(t[i], NULL), 0);
}

CT_TEST(futex, shared_across_fork)
{
	uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CT_TRUE(w != MAP_FAILED);
	pid_t pid = fork();
	if (pid == 0) {
		__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
		futex(w, FUTEX_WAKE, 1, NULL, NULL, 0);
		_exit(0);
	}
	while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == 0) {
		long r = futex(w, FUTEX_WAIT, 0, NULL, NULL, 0);
		CT_TRUE(r == 0 || errno == EAGAIN || errno == EINTR);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(futex, bitset)
{
	uint32_t w = 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_nsec += 5000000;
	if (now.tv_nsec >= 1000000000) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000;
	}
	/* FUTEX_WAIT_BITSET takes an absolute timeout. */
	CT_ERR(futex(&w, FUTEX_WAIT_BITSET_PRIVATE, 0, &now, NULL, 0x1), ETIMEDOUT);
	CT_ERR(futex(&w, FUTEX_WAIT_BITSET_PRIVATE, 0, &now, NULL, 0), EINVAL);
	CT_EQ(futex(&w, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0x2), 0);
}

CT_TEST(futex, cmp_requeue)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		CT_EQ(pthread_create(&t[i], NULL, futex_waiter, &fw2), 0);
	while (waiters_ready < 2)
		sched_yield();
	uint32_t other = 0;
	CT_ERR(futex(&fw2, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)1L, &other, 5), EAGAIN);
	/* Wake none, move up to 10 waiters to `other`; at most the 2 that sleep. */
	long moved = CT_OK(futex(&fw2, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)10L, &other, 0));
	CT_TRUE(moved >= 0 && moved <= 2);
	long woken = futex(&other, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0);
	CT_EQ(woken, moved);
	wake_all(&fw2, 2);
	for (int i = 0; i < 2; i++)
		CT_EQ(pthread_join(t[i], NULL), 0);
}

static uint32_t pi_word;

static void *pi_unlocker(void *arg)
{
	(void)arg;
	long r = futex(&pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	return (void *)(long)(r == -1 ? errno : 0);
}

CT_TEST(futex, pi_lock_unlock)
{
	CT_OK(futex(&pi_word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	CT_EQ(pi_word & FUTEX_TID_MASK, syscall(SYS_gettid));
	CT_ERR(futex(&pi_word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0), EDEADLK);
	pthread_t t;
	void *err;
	CT_EQ(pthread_create(&t, NULL, pi_unlocker, NULL), 0);
	CT_EQ(pthread_join(t, &err), 0);
	/* Only the owner may unlock. */
	CT_EQ((long)err, EPERM);
	CT_OK(futex(&pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	CT_EQ(pi_word, 0);
	CT_OK(futex(&pi_word, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
}

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

static void waitv_fill(struct futex_waitv *v, uint32_t *a, uint32_t *b)
{
	memset(v, 0, 2 * sizeof(*v));
	v[0] = (struct futex_waitv){.val = 0, .uaddr = (uintptr_t)a, .flags = FUTEX_32};
	v[1] = (struct futex_waitv){.val = 0, .uaddr = (uintptr_t)b, .flags = FUTEX_32};
}

static struct timespec mono_in(long ns)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ns;
	while (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

CT_TEST(futex_waitv, timeout_and_mismatch)
{
	uint32_t a = 0, b = 0;
	struct futex_waitv v[2];
	waitv_fill(v, &a, &b);
	struct timespec t = mono_in(5000000);
	CT_ERR(syscall(SYS_futex_waitv, v, 2, 0, &t, CLOCK_MONOTONIC), ETIMEDOUT);
	b = 7;
	CT_ERR(syscall(SYS_futex_waitv, v, 2, 0, &t, CLOCK_MONOTONIC), EAGAIN);
	CT_ERR(syscall(SYS_futex_waitv, v, 0, 0, &t, CLOCK_MONOTONIC), EINVAL);
	CT_ERR(syscall(SYS_futex_waitv, v, 2, 1, &t, CLOCK_MONOTONIC), EINVAL);
	v[0].flags = 0x7;
	CT_ERR(syscall(SYS_futex_waitv, v, 2, 0, &t, CLOCK_MONOTONIC), EINVAL);
}

static uint32_t wv_a, wv_b;

static void *waitv_waker(void *arg)
{
	(void)arg;
	while (futex(&wv_b, FUTEX_WAKE, 1, NULL, NULL, 0) == 0) {
		struct timespec d = {0, 1000000};
		nanosleep(&d, NULL);
	}
	return NULL;
}

CT_TEST(futex_waitv, woken_index)
{
	struct futex_waitv v[2];
	waitv_fill(v, &wv_a, &wv_b);
	/* The waitv futexes are shared (no FUTEX_PRIVATE_FLAG), so wake with FUTEX_WAKE. */
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, waitv_waker, NULL), 0);
	struct timespec to = mono_in(5000000000L);
	CT_EQ(syscall(SYS_futex_waitv, v, 2, 0, &to, CLOCK_MONOTONIC), 1);
	CT_EQ(pthread_join(t, NULL), 0);
}

CT_TEST(get_robust_list, glibc_registered)
{
	void *head = NULL;
	size_t len = 0;
	CT_OK(syscall(SYS_get_robust_list, 0, &head, &len));
	/* glibc registers each thread's list at start: a 24-byte struct robust_list_head. */
	CT_TRUE(head != NULL);
	CT_EQ(len, 24);
	CT_OK(syscall(SYS_get_robust_list, getpid(), &head, &len));
}

CT_TEST(get_robust_list, errors)
{
	void *head;
	size_t len;
	CT_ERR(syscall(SYS_get_robust_list, 0, (void *)8, &len), EFAULT);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ct_wait(pid);
	CT_ERR(syscall(SYS_get_robust_list, pid, &head, &len), ESRCH);
}

CT_TEST(set_robust_list, same_head_and_bad_len)
{
	void *head = NULL;
	size_t len = 0;
	CT_OK(syscall(SYS_get_robust_list, 0, &head, &len));
	CT_ERR(syscall(SYS_set_robust_list, head, len + 1), EINVAL);
	CT_OK(syscall(SYS_set_robust_list, head, len));
	void *again;
	CT_OK(syscall(SYS_get_robust_list, 0, &again, &len));
	CT_TRUE(again == head);
}

CT_TEST(set_robust_list, owner_death_via_kernel)
{
	pthread_mutex_t *m =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CT_TRUE(m != MAP_FAILED);
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	CT_EQ(pthread_mutex_init(m, &at), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* Dies holding the lock: the kernel walks the robust list glibc registered. */
		_exit(pthread_mutex_lock(m) == 0 ? 0 : 1);
	}
	CT_EQ(ct_exit_code(pid), 0);
	CT_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CT_EQ(pthread_mutex_consistent(m), 0);
	CT_EQ(pthread_mutex_unlock(m), 0);
}

CT_TEST(membarrier, query_and_global)
{
	long mask = CT_OK(syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0));
	CT_TRUE(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	if (mask & MEMBARRIER_CMD_GLOBAL)
		CT_OK(syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0));
	CT_ERR(syscall(SYS_membarrier, 0x40000000, 0, 0), EINVAL);
	CT_ERR(syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 1, 0), EINVAL);
}

CT_TEST(membarrier, private_expedited_needs_registration)
{
	CT_ERR(syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0), EPERM);
	CT_OK(syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0));
	CT_OK(syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0));
}

static struct rseq *glibc_rseq(void)
{
	if (__rseq_size == 0)
		ct_skip("glibc did not register rseq (disabled by tunable or refused)");
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* glibc registers sizeof(struct rseq) = 32 bytes on glibc 2.36. */
#define RSEQ_LEN 32

CT_TEST(rseq, already_registered)
{
	struct rseq *r = glibc_rseq();
	CT_ERR(syscall(SYS_rseq, r, RSEQ_LEN, 0, RSEQ_SIG), EBUSY);
	static __thread struct rseq other __attribute__((aligned(32)));
	CT_ERR(syscall(SYS_rseq, &other, RSEQ_LEN, 0, RSEQ_SIG), EINVAL);
	CT_TRUE((int)r->cpu_id >= 0);
}

CT_TEST(rseq, unregister_and_register)
{
	struct rseq *r = glibc_rseq();
	CT_ERR(syscall(SYS_rseq, r, RSEQ_LEN, RSEQ_FLAG_UNREGISTER, RSEQ_SIG + 1), EPERM);
	CT_OK(syscall(SYS_rseq, r, RSEQ_LEN, RSEQ_FLAG_UNREGISTER, RSEQ_SIG));
	CT_ERR(syscall(SYS_rseq, r, RSEQ_LEN, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), EINVAL);
	CT_OK(syscall(SYS_rseq, r, RSEQ_LEN, 0, RSEQ_SIG));
	CT_TRUE((int)r->cpu_id >= 0);
}

CT_TEST(seccomp, get_action_avail)
{
	uint32_t act = SECCOMP_RET_KILL_PROCESS;
	CT_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act));
	act = SECCOMP_RET_ERRNO;
	CT_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act));
	act = 0x12340000;
	CT_ERR(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act), EOPNOTSUPP);
	CT_ERR(syscall(SYS_seccomp, 99, 0, NULL), EINVAL);
}

CT_TEST(seccomp, filter_errno_in_child)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_filter f[] = {
		    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
		/* Without CAP_SYS_ADMIN a filter needs no_new_privs. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(3);
		_exit(syscall(SYS_getppid) == -1 && errno == EACCES ? 0 : 1);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

/* A filter needs no_new_privs or CAP_SYS_ADMIN. Must fail: without either it is EACCES (after
 * the program's header is checked: EFAULT, EINVAL), through seccomp and prctl alike; the child
 * drops CAP_SYS_ADMIN from its effective set first (a sandbox's root has none to drop). */
CT_TEST(seccomp, filter_needs_no_new_privs)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
		struct sock_fprog prog = {1, f}, empty = {0, f};
		if (ct_drop_cap(CAP_SYS_ADMIN) < 0)
			_exit(3);
		errno = 0;
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)8) != -1 ||
		    errno != EFAULT)
			_exit(4);
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &empty) != -1 ||
		    errno != EINVAL)
			_exit(5);
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != -1 ||
		    errno != EACCES)
			_exit(6);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != -1 ||
		    errno != EACCES)
			_exit(7);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(8);
		_exit(0);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(seccomp, strict_mode_kills)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) < 0)
			_exit(2);
		syscall(SYS_getpid);
		_exit(1);
	}
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

CT_TEST(unshare, flags)
{
	CT_OK(syscall(SYS_unshare, 0));
	CT_ERR(syscall(SYS_unshare, CLONE_PTRACE), EINVAL);
	CT_OK(syscall(SYS_unshare, CLONE_FILES | CLONE_FS));
}

CT_TEST(unshare, newuser_maps_to_overflow)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_unshare, CLONE_NEWUSER) < 0)
			_exit(errno == EPERM || errno == ENOSPC ? 3 : 2);
		/* No mapping written yet: every id reads as the overflow id. */
		_exit(getuid() == 65534 && getgid() == 65534 ? 0 : 1);
	}
	int code = ct_exit_code(pid);
	if (code == 3)
		ct_skip("user namespaces are disabled on this host");
	CT_EQ(code, 0);
}

CT_TEST(setns, errors)
{
	CT_ERR(syscall(SYS_setns, 0x3fff, 0), EBADF);
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(syscall(SYS_setns, fd, 0), EINVAL);
}

CT_TEST(setns, own_net_namespace)
{
	int fd = CT_OK(open("/proc/self/ns/net", O_RDONLY));
	/* Joining even our own network namespace needs CAP_SYS_ADMIN. */
	if (have_cap(CAP_SYS_ADMIN))
		CT_OK(syscall(SYS_setns, fd, CLONE_NEWNET));
	else
		CT_ERR(syscall(SYS_setns, fd, CLONE_NEWNET), EPERM);
	CT_ERR(syscall(SYS_setns, fd, CLONE_NEWUTS), EINVAL);
}

/* Whether syslog(2) actions other than READ_ALL and SIZE_BUFFER-like ones are allowed. */
static int syslog_allowed(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/dmesg_restrict", O_RDONLY);
	if (fd >= 0) {
		(void)!read(fd, &c, 1);
		close(fd);
	}
	return c == '0' || have_cap(CAP_SYSLOG) || have_cap(CAP_SYS_ADMIN);
}

CT_TEST(syslog, size_buffer)
{
	if (syslog_allowed()) {
		long n = CT_OK(syscall(SYS_syslog, 10, NULL, 0));
		CT_TRUE(n > 0);
	} else {
		CT_ERR(syscall(SYS_syslog, 10, NULL, 0), EPERM);
	}
}

CT_TEST(syslog, bad_arguments)
{
	char buf[16];
	if (!syslog_allowed())
		ct_skip("dmesg_restrict=1 and no CAP_SYSLOG: every action is EPERM");
	CT_ERR(syscall(SYS_syslog, 99, buf, sizeof(buf)), EINVAL);
	CT_ERR(syscall(SYS_syslog, 3, buf, -1), EINVAL);
}
