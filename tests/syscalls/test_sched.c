/*
 * Scheduling: sched_yield, sched_{get,set}affinity, sched_{get,set}param,
 * sched_{get,set}scheduler, sched_get_priority_{max,min}, sched_rr_get_interval,
 * sched_{get,set}attr, getpriority, setpriority, getcpu, ioprio_get, ioprio_set. Only changes
 * any user may make: normal policies, raising the nice value, best-effort I/O priority.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* linux/sched/types.h clashes with glibc's struct sched_param: the v1 layout, 56 bytes. */
struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_BE    2
#define IOPRIO_PRIO(c, d)  (((c) << 13) | (d))

static pid_t reaped_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ct_wait(pid);
	return pid;
}

CT_TEST(sched_yield, returns_zero)
{
	for (int i = 0; i < 10; i++)
		CT_EQ(syscall(SYS_sched_yield), 0);
}

static void *yielder(void *arg)
{
	(void)arg;
	return (void *)syscall(SYS_sched_yield);
}

CT_TEST(sched_yield, from_thread)
{
	pthread_t t;
	void *r = (void *)1;
	CT_EQ(pthread_create(&t, NULL, yielder, NULL), 0);
	CT_EQ(pthread_join(t, &r), 0);
	CT_EQ((long)r, 0);
}

CT_TEST(sched_getaffinity, includes_current_cpu)
{
	cpu_set_t set;
	long n = CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(set), &set));
	CT_TRUE(n > 0 && n <= (long)sizeof(set) && n % 8 == 0);
	unsigned cpu;
	CT_OK(syscall(SYS_getcpu, &cpu, NULL, NULL));
	CT_TRUE(CPU_ISSET(cpu, &set));
	CT_TRUE(CPU_COUNT(&set) >= 1);
}

CT_TEST(sched_getaffinity, errors)
{
	cpu_set_t set;
	CT_ERR(syscall(SYS_sched_getaffinity, 0, 3, &set), EINVAL);
	CT_ERR(syscall(SYS_sched_getaffinity, 0, sizeof(set), (void *)8), EFAULT);
	CT_ERR(syscall(SYS_sched_getaffinity, reaped_pid(), sizeof(set), &set), ESRCH);
}

CT_TEST(sched_setaffinity, pin_to_current_cpu)
{
	cpu_set_t set, got;
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(set), &set));
	int first = -1;
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &set))
			first = i;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	CT_OK(syscall(SYS_sched_setaffinity, 0, sizeof(one), &one));
	/* The raw call writes only the kernel's mask size (glibc's wrapper zeroes the rest). */
	CPU_ZERO(&got);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(got), &got));
	CT_TRUE(CPU_EQUAL(&one, &got));
	unsigned cpu;
	CT_OK(syscall(SYS_getcpu, &cpu, NULL, NULL));
	CT_EQ(cpu, first);
	CT_OK(syscall(SYS_sched_setaffinity, 0, sizeof(set), &set));
}

CT_TEST(sched_setaffinity, errors)
{
	cpu_set_t none;
	CPU_ZERO(&none);
	CT_ERR(syscall(SYS_sched_setaffinity, 0, sizeof(none), &none), EINVAL);
	CT_ERR(syscall(SYS_sched_setaffinity, 0, sizeof(none), (void *)8), EFAULT);
}

/* Opening a file installs an fd, for which the sentry holds the task on one CPU (seccomp
 * platform, platform/seccomp.c): nothing of that may show in the task's mask. */
static void open_close_many(int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			CT_FAIL("open /etc/hostname: %s", ct_errname(errno));
		close(fd);
	}
}

static void *mask_of_new_thread(void *arg)
{
	cpu_set_t *got = arg;
	return (void *)syscall(SYS_sched_getaffinity, 0, sizeof(*got), got);
}

CT_TEST(sched_getaffinity, unchanged_by_opens)
{
	/* (The kernel writes only its own mask size: the rest must be zero to compare.) */
	cpu_set_t before, after, thread;
	CPU_ZERO(&before);
	CPU_ZERO(&after);
	CPU_ZERO(&thread);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(before), &before));
	open_close_many(200);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(after), &after));
	CT_TRUE(CPU_EQUAL(&before, &after));
	/* A thread started right after an open inherits the whole mask. */
	open_close_many(1);
	pthread_t t;
	void *r = (void *)-1;
	CT_EQ(pthread_create(&t, NULL, mask_of_new_thread, &thread), 0);
	CT_EQ(pthread_join(t, &r), 0);
	CT_TRUE((long)r > 0);
	CT_TRUE(CPU_EQUAL(&before, &thread));
}

CT_TEST(sched_setaffinity, own_mask_kept_by_opens)
{
	cpu_set_t all, one, got;
	CPU_ZERO(&all);
	CPU_ZERO(&got);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(all), &all));
	if (CPU_COUNT(&all) < 2)
		ct_skip("one CPU");
	int last = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all))
			last = i;
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	CT_OK(syscall(SYS_sched_setaffinity, 0, sizeof(one), &one));
	open_close_many(100);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(got), &got));
	unsigned cpu;
	CT_OK(syscall(SYS_getcpu, &cpu, NULL, NULL));
	CT_OK(syscall(SYS_sched_setaffinity, 0, sizeof(all), &all));
	CT_TRUE(CPU_EQUAL(&one, &got));
	CT_EQ(cpu, last);
}

struct opener {
	pid_t tid;
	volatile int stop;
};

static void *opener_main(void *arg)
{
	struct opener *o = arg;
	o->tid = (pid_t)syscall(SYS_gettid);
	while (!o->stop)
		open_close_many(1);
	return NULL;
}

/* Another thread's mask, read and set while that thread keeps opening files: every read gives
 * the mask last set, never one the sentry held it on. */
CT_TEST(sched_setaffinity, other_thread_while_it_opens)
{
	cpu_set_t all, one, got;
	CPU_ZERO(&all);
	CT_OK(syscall(SYS_sched_getaffinity, 0, sizeof(all), &all));
	if (CPU_COUNT(&all) < 2)
		ct_skip("one CPU");
	int first = -1;
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &all))
			first = i;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	struct opener o = {0};
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, opener_main, &o), 0);
	while (__atomic_load_n(&o.tid, __ATOMIC_SEQ_CST) == 0)
		sched_yield();
	int bad = 0;
	for (int i = 0; i < 300 && !bad; i++) {
		const cpu_set_t *want = i % 2 ? &all : &one;
		CPU_ZERO(&got);
		if (syscall(SYS_sched_setaffinity, o.tid, sizeof(*want), want) < 0 ||
		    syscall(SYS_sched_getaffinity, o.tid, sizeof(got), &got) < 0 ||
		    !CPU_EQUAL(&got, want))
			bad = i + 1;
	}
	o.stop = 1;
	CT_EQ(pthread_join(t, NULL), 0);
	CT_EQ(bad, 0);
}

CT_TEST(sched_getparam, normal_priority_zero)
{
	struct sched_param p = {.sched_priority = 5};
	CT_OK(syscall(SYS_sched_getparam, 0, &p));
	CT_EQ(p.sched_priority, 0);
	CT_ERR(syscall(SYS_sched_getparam, -1, &p), EINVAL);
	CT_ERR(syscall(SYS_sched_getparam, 0, NULL), EINVAL);
	CT_ERR(syscall(SYS_sched_getparam, reaped_pid(), &p), ESRCH);
}

CT_TEST(sched_setparam, normal_policy)
{
	struct sched_param p = {.sched_priority = 0};
	CT_OK(syscall(SYS_sched_setparam, 0, &p));
	/* SCHED_OTHER only has priority 0. */
	p.sched_priority = 1;
	CT_ERR(syscall(SYS_sched_setparam, 0, &p), EINVAL);
	CT_ERR(syscall(SYS_sched_setparam, -1, &p), EINVAL);
}

CT_TEST(sched_getscheduler, default_other)
{
	CT_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
	CT_ERR(syscall(SYS_sched_getscheduler, -1), EINVAL);
	CT_ERR(syscall(SYS_sched_getscheduler, reaped_pid()), ESRCH);
}

CT_TEST(sched_setscheduler, batch_and_back)
{
	struct sched_param p = {.sched_priority = 0};
	CT_OK(syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &p));
	CT_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_BATCH);
	CT_OK(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &p));
	CT_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
}

CT_TEST(sched_setscheduler, errors)
{
	struct sched_param p = {.sched_priority = 0};
	CT_ERR(syscall(SYS_sched_setscheduler, 0, 42, &p), EINVAL);
	p.sched_priority = 5;
	CT_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &p), EINVAL);
	p.sched_priority = 100;
	CT_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &p), EINVAL);
}

CT_TEST(sched_get_priority_max, policies)
{
	CT_EQ(syscall(SYS_sched_get_priority_max, SCHED_FIFO), 99);
	CT_EQ(syscall(SYS_sched_get_priority_max, SCHED_RR), 99);
	CT_EQ(syscall(SYS_sched_get_priority_max, SCHED_OTHER), 0);
	CT_ERR(syscall(SYS_sched_get_priority_max, 42), EINVAL);
}

CT_TEST(sched_get_priority_min, policies)
{
	CT_EQ(syscall(SYS_sched_get_priority_min, SCHED_FIFO), 1);
	CT_EQ(syscall(SYS_sched_get_priority_min, SCHED_BATCH), 0);
	CT_ERR(syscall(SYS_sched_get_priority_min, -1), EINVAL);
}

CT_TEST(sched_rr_get_interval, self_and_errors)
{
	struct timespec ts = {-1, -1};
	CT_OK(syscall(SYS_sched_rr_get_interval, 0, &ts));
	CT_TRUE(ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
	CT_ERR(syscall(SYS_sched_rr_get_interval, -1, &ts), EINVAL);
	CT_ERR(syscall(SYS_sched_rr_get_interval, reaped_pid(), &ts), ESRCH);
	CT_ERR(syscall(SYS_sched_rr_get_interval, 0, (void *)8), EFAULT);
}

CT_TEST(sched_getattr, normal_policy)
{
	struct sched_attr a;
	memset(&a, 0x55, sizeof(a));
	CT_OK(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0));
	CT_EQ(a.sched_policy, SCHED_OTHER);
	CT_EQ(a.sched_priority, 0);
	CT_TRUE(a.size >= 48);
	CT_EQ(a.sched_nice, getpriority(PRIO_PROCESS, 0));
}

CT_TEST(sched_getattr, errors)
{
	struct sched_attr a;
	CT_ERR(syscall(SYS_sched_getattr, 0, &a, 16, 0), EINVAL);
	CT_ERR(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 1), EINVAL);
	CT_ERR(syscall(SYS_sched_getattr, -1, &a, sizeof(a), 0), EINVAL);
	CT_ERR(syscall(SYS_sched_getattr, reaped_pid(), &a, sizeof(a), 0), ESRCH);
}

CT_TEST(sched_setattr, nicer_normal_policy)
{
	struct sched_attr a = {.size = sizeof(a), .sched_policy = SCHED_OTHER, .sched_nice = 3};
	/* Raising the nice value (lowering priority) is allowed to anyone. */
	CT_OK(syscall(SYS_sched_setattr, 0, &a, 0));
	CT_EQ(getpriority(PRIO_PROCESS, 0), 3);
}

CT_TEST(sched_setattr, errors)
{
	struct sched_attr a = {.size = sizeof(a), .sched_policy = 42};
	CT_ERR(syscall(SYS_sched_setattr, 0, &a, 0), EINVAL);
	a.sched_policy = SCHED_OTHER;
	CT_ERR(syscall(SYS_sched_setattr, 0, &a, 1), EINVAL);
	CT_ERR(syscall(SYS_sched_setattr, 0, NULL, 0), EINVAL);
}

CT_TEST(getpriority, raw_is_20_minus_nice)
{
	/* The raw syscall answers 20 - nice so that it is never negative. */
	long raw = CT_OK(syscall(SYS_getpriority, PRIO_PROCESS, 0));
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	CT_EQ(errno, 0);
	CT_EQ(raw, 20 - nice);
	CT_OK(syscall(SYS_getpriority, PRIO_PGRP, 0));
	CT_OK(syscall(SYS_getpriority, PRIO_USER, 0));
}

CT_TEST(getpriority, errors)
{
	CT_ERR(syscall(SYS_getpriority, 42, 0), EINVAL);
	CT_ERR(syscall(SYS_getpriority, PRIO_PROCESS, reaped_pid()), ESRCH);
}

CT_TEST(setpriority, raise_nice)
{
	CT_OK(syscall(SYS_setpriority, PRIO_PROCESS, 0, 5));
	CT_EQ(syscall(SYS_getpriority, PRIO_PROCESS, 0), 15);
	/* Out-of-range values are clamped to 19. */
	CT_OK(syscall(SYS_setpriority, PRIO_PROCESS, 0, 100));
	CT_EQ(syscall(SYS_getpriority, PRIO_PROCESS, 0), 1);
}

CT_TEST(setpriority, child_inherits_and_errors)
{
	CT_OK(syscall(SYS_setpriority, PRIO_PROCESS, 0, 7));
	pid_t pid = fork();
	if (pid == 0)
		_exit(syscall(SYS_getpriority, PRIO_PROCESS, 0));
	int st = ct_wait(pid);
	CT_EQ(WEXITSTATUS(st), 13);
	CT_ERR(syscall(SYS_setpriority, 42, 0, 1), EINVAL);
	CT_ERR(syscall(SYS_setpriority, PRIO_PROCESS, pid, 10), ESRCH);
}

CT_TEST(getcpu, in_range)
{
	unsigned cpu = ~0u, node = ~0u;
	CT_OK(syscall(SYS_getcpu, &cpu, &node, NULL));
	CT_TRUE(cpu < (unsigned)sysconf(_SC_NPROCESSORS_CONF));
	CT_TRUE(node < 1024);
	CT_OK(syscall(SYS_getcpu, NULL, NULL, NULL));
	CT_ERR(syscall(SYS_getcpu, (void *)8, NULL, NULL), EFAULT);
}

CT_TEST(ioprio_get, self)
{
	long p = CT_OK(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	CT_TRUE(p >= 0);
	CT_ERR(syscall(SYS_ioprio_get, 42, 0), EINVAL);
	CT_ERR(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, reaped_pid()), ESRCH);
}

CT_TEST(ioprio_set, best_effort)
{
	int prio = IOPRIO_PRIO(IOPRIO_CLASS_BE, 6);
	CT_OK(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio));
	CT_EQ(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0), prio);
	/* Class 7 does not exist. */
	CT_ERR(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO(7, 0)), EINVAL);
	CT_ERR(syscall(SYS_ioprio_set, 42, 0, prio), EINVAL);
}

/* Another user's nice value, I/O priority and scheduling are closed (set_one_prio_perm,
 * set_task_ioprio, check_same_owner): only changes any user may make to its own. */
static long setpriority_of(int target)
{
	return syscall(SYS_setpriority, PRIO_PROCESS, target, 10);
}

static long ioprio_set_of(int target)
{
	return syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, target, IOPRIO_PRIO(IOPRIO_CLASS_BE, 7));
}

static long setscheduler_of(int target)
{
	struct sched_param p = {.sched_priority = 0};
	return syscall(SYS_sched_setscheduler, target, SCHED_BATCH, &p);
}

static long setattr_of(int target)
{
	struct sched_attr a = {.size = sizeof(a), .sched_policy = SCHED_OTHER, .sched_nice = 5};
	return syscall(SYS_sched_setattr, target, &a, 0);
}

static long setaffinity_of(int target)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	return syscall(SYS_sched_setaffinity, target, sizeof(set), &set);
}

CT_TEST(setpriority, other_user_eperm)
{
	ct_as_nobody_eperm(setpriority_of);
}

CT_TEST(ioprio_set, other_user_eperm)
{
	ct_as_nobody_eperm(ioprio_set_of);
}

CT_TEST(sched_setscheduler, other_user_eperm)
{
	ct_as_nobody_eperm(setscheduler_of);
}

CT_TEST(sched_setattr, other_user_eperm)
{
	ct_as_nobody_eperm(setattr_of);
}

CT_TEST(sched_setaffinity, other_user_eperm)
{
	ct_as_nobody_eperm(setaffinity_of);
}

/* PRIO_USER names a user by id: a process of nobody's (the case's own child) is found. */
CT_TEST(getpriority, prio_user_other_id)
{
	if (!ct_has_cap(CAP_SETUID) || !ct_has_cap(CAP_SETGID))
		ct_skip("needs CAP_SETUID and CAP_SETGID to start a process as nobody");
	int p[2];
	CT_OK(pipe(p));
	pid_t pid = fork();
	if (pid == 0) {
		if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
		    syscall(SYS_setresuid, 65534, 65534, 65534) < 0 || write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	CT_EQ(read(p[0], &c, 1), 1);
	long prio = syscall(SYS_getpriority, PRIO_USER, 65534);
	int e = errno;
	kill(pid, SIGKILL);
	ct_wait(pid);
	errno = e;
	CT_OK(prio);
}
