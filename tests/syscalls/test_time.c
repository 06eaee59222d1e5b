/*
 * Time and timers: alarm, setitimer, getitimer, timer_create, timer_settime, timer_gettime,
 * timer_getoverrun, timer_delete, nanosleep, clock_gettime, clock_getres, clock_nanosleep,
 * clock_settime, gettimeofday, settimeofday, time, times, getrusage. glibc answers
 * clock_gettime, gettimeofday and time from the vDSO and nanosleep through clock_nanosleep, so
 * every case calls the syscall it names through syscall(2).
 */
#include "compat_test.h"

#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits;

static void on_sig(int sig)
{
	(void)sig;
	hits++;
}

static long ns_of(const struct timespec *t)
{
	return t->tv_sec * 1000000000L + t->tv_nsec;
}

static long mono_ns(void)
{
	struct timespec t;
	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t) < 0)
		CT_FAIL("clock_gettime: %s", ct_errname(errno));
	return ns_of(&t);
}

/* Whether this process has capability cap in its effective set. */
static int have_cap(int cap)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		CT_FAIL("capget: %s", ct_errname(errno));
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

CT_TEST(alarm, returns_remaining)
{
	/* The harness armed an alarm of CT_CASE_ALARM seconds for this case. */
	long left = syscall(SYS_alarm, 100);
	CT_TRUE(left >= CT_CASE_ALARM - 1 && left <= CT_CASE_ALARM);
	left = syscall(SYS_alarm, 0);
	CT_TRUE(left >= 99 && left <= 100);
	CT_EQ(syscall(SYS_alarm, CT_CASE_ALARM), 0);
}

CT_TEST(alarm, shares_itimer_real)
{
	CT_TRUE(syscall(SYS_alarm, 30) > 0);
	struct itimerval it;
	CT_OK(syscall(SYS_getitimer, ITIMER_REAL, &it));
	CT_TRUE(it.it_value.tv_sec >= 29 && it.it_value.tv_sec <= 30);
	/* Rounded up to whole seconds. */
	CT_EQ(syscall(SYS_alarm, 10), 30);
}

CT_TEST(setitimer, real_fires_sigalrm)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	CT_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	struct itimerval it = {.it_value = {0, 5000}};
	CT_OK(syscall(SYS_setitimer, ITIMER_REAL, &it, NULL));
	int sig = 0;
	CT_EQ(sigwait(&s, &sig), 0);
	CT_EQ(sig, SIGALRM);
}

CT_TEST(setitimer, old_value_and_disarm)
{
	struct itimerval it = {.it_value = {20, 0}, .it_interval = {1, 0}}, old;
	CT_OK(syscall(SYS_setitimer, ITIMER_REAL, &it, NULL));
	struct itimerval zero = {0};
	CT_OK(syscall(SYS_setitimer, ITIMER_REAL, &zero, &old));
	CT_TRUE(old.it_value.tv_sec >= 19 && old.it_value.tv_sec <= 20);
	CT_EQ(old.it_interval.tv_sec, 1);
	CT_OK(syscall(SYS_getitimer, ITIMER_REAL, &old));
	CT_TRUE(old.it_value.tv_sec == 0 && old.it_value.tv_usec == 0);
}

CT_TEST(setitimer, virtual_counts_cpu)
{
	signal(SIGVTALRM, on_sig);
	struct itimerval it = {.it_value = {0, 10000}};
	CT_OK(syscall(SYS_setitimer, ITIMER_VIRTUAL, &it, NULL));
	/* Burn user time without system calls (ITIMER_VIRTUAL counts only user time; a loop of
	 * clock_gettime calls spends it in the kernel, or in a tracer under a sandbox). About
	 * 10 ms of CPU is needed; the bound is seconds of it. */
	for (volatile unsigned long i = 0; !hits && i < 4000000000UL; i++)
		;
	CT_EQ(hits, 1);
}

CT_TEST(setitimer, errors)
{
	struct itimerval it = {.it_value = {0, 2000000}};
	CT_ERR(syscall(SYS_setitimer, ITIMER_REAL, &it, NULL), EINVAL);
	it.it_value.tv_usec = 0;
	CT_ERR(syscall(SYS_setitimer, 7, &it, NULL), EINVAL);
	CT_ERR(syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL), EFAULT);
}

CT_TEST(getitimer, unarmed_and_errors)
{
	struct itimerval it;
	memset(&it, 0x55, sizeof(it));
	CT_OK(syscall(SYS_getitimer, ITIMER_PROF, &it));
	CT_TRUE(it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0);
	CT_ERR(syscall(SYS_getitimer, 7, &it), EINVAL);
	CT_ERR(syscall(SYS_getitimer, ITIMER_REAL, (void *)8), EFAULT);
}

static int timer_new(clockid_t clk, int signo, int value)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = signo};
	ev.sigev_value.sival_int = value;
	int id = -1;
	if (syscall(SYS_timer_create, clk, &ev, &id) < 0)
		CT_FAIL("timer_create: %s", ct_errname(errno));
	return id;
}

CT_TEST(timer_create, signal_on_expiry)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	int id = timer_new(CLOCK_MONOTONIC, SIGUSR1, 99);
	struct itimerspec its = {.it_value = {0, 5000000}};
	CT_OK(syscall(SYS_timer_settime, id, 0, &its, NULL));
	siginfo_t si;
	CT_EQ(sigwaitinfo(&s, &si), SIGUSR1);
	CT_EQ(si.si_code, SI_TIMER);
	CT_EQ(si.si_value.sival_int, 99);
}

CT_TEST(timer_create, errors)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	int id;
	CT_ERR(syscall(SYS_timer_create, 1234, &ev, &id), EINVAL);
	ev.sigev_signo = 200;
	CT_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id), EINVAL);
	ev.sigev_signo = SIGUSR1;
	ev.sigev_notify = 77;
	CT_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id), EINVAL);
	CT_ERR(syscall(SYS_timer_create, CLOCK_MONOTONIC, (void *)8, &id), EFAULT);
}

CT_TEST(timer_settime, old_value_and_abstime)
{
	int id = timer_new(CLOCK_MONOTONIC, SIGUSR1, 0);
	struct itimerspec its = {.it_value = {30, 0}}, old;
	CT_OK(syscall(SYS_timer_settime, id, 0, &its, NULL));
	struct itimerspec zero = {0};
	CT_OK(syscall(SYS_timer_settime, id, 0, &zero, &old));
	CT_TRUE(old.it_value.tv_sec >= 29 && old.it_value.tv_sec <= 30);
	/* An absolute time already in the past expires at once. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	its.it_value.tv_sec = 1;
	CT_OK(syscall(SYS_timer_settime, id, TIMER_ABSTIME, &its, NULL));
	int sig;
	CT_EQ(sigwait(&s, &sig), 0);
}

CT_TEST(timer_settime, errors)
{
	int id = timer_new(CLOCK_MONOTONIC, SIGUSR1, 0);
	struct itimerspec bad = {.it_value = {0, 1000000000}};
	CT_ERR(syscall(SYS_timer_settime, id, 0, &bad, NULL), EINVAL);
	struct itimerspec ok = {0};
	CT_ERR(syscall(SYS_timer_settime, id + 1000, 0, &ok, NULL), EINVAL);
	CT_ERR(syscall(SYS_timer_settime, id, 0, (void *)8, NULL), EFAULT);
}

CT_TEST(timer_gettime, counts_down)
{
	int id = timer_new(CLOCK_REALTIME, SIGUSR1, 0);
	struct itimerspec its = {.it_value = {10, 0}, .it_interval = {0, 500000000}}, cur;
	CT_OK(syscall(SYS_timer_settime, id, 0, &its, NULL));
	CT_OK(syscall(SYS_timer_gettime, id, &cur));
	CT_TRUE(cur.it_value.tv_sec <= 10 && ns_of(&cur.it_value) > 9000000000L);
	CT_EQ(cur.it_interval.tv_nsec, 500000000);
	CT_ERR(syscall(SYS_timer_gettime, id + 1000, &cur), EINVAL);
}

CT_TEST(timer_getoverrun, counts_missed_expiries)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	CT_OK(sigprocmask(SIG_BLOCK, &s, NULL));
	int id = timer_new(CLOCK_MONOTONIC, SIGUSR1, 0);
	CT_EQ(syscall(SYS_timer_getoverrun, id), 0);
	struct itimerspec its = {.it_value = {0, 1000000}, .it_interval = {0, 1000000}};
	CT_OK(syscall(SYS_timer_settime, id, 0, &its, NULL));
	/* 1 ms period, signal blocked for ~30 ms: the queued signal absorbs the overruns. */
	struct timespec d = {0, 30000000};
	syscall(SYS_nanosleep, &d, NULL);
	siginfo_t si;
	CT_EQ(sigwaitinfo(&s, &si), SIGUSR1);
	CT_TRUE(si.si_overrun > 5);
	CT_EQ(syscall(SYS_timer_getoverrun, id), si.si_overrun);
	CT_ERR(syscall(SYS_timer_getoverrun, id + 1000), EINVAL);
}

CT_TEST(timer_delete, then_gone)
{
	int id = timer_new(CLOCK_MONOTONIC, SIGUSR1, 0);
	CT_OK(syscall(SYS_timer_delete, id));
	CT_ERR(syscall(SYS_timer_delete, id), EINVAL);
	struct itimerspec cur;
	CT_ERR(syscall(SYS_timer_gettime, id, &cur), EINVAL);
}

CT_TEST(nanosleep, sleeps_at_least)
{
	long start = mono_ns();
	struct timespec d = {0, 5000000};
	CT_OK(syscall(SYS_nanosleep, &d, NULL));
	CT_TRUE(mono_ns() - start >= 5000000);
}

CT_TEST(nanosleep, errors)
{
	struct timespec bad = {0, 1000000000};
	CT_ERR(syscall(SYS_nanosleep, &bad, NULL), EINVAL);
	bad.tv_sec = -1;
	bad.tv_nsec = 0;
	CT_ERR(syscall(SYS_nanosleep, &bad, NULL), EINVAL);
	CT_ERR(syscall(SYS_nanosleep, (void *)8, NULL), EFAULT);
}

CT_TEST(nanosleep, interrupted_fills_remaining)
{
	struct sigaction sa = {.sa_handler = on_sig};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {.it_value = {0, 10000}};
	CT_OK(syscall(SYS_setitimer, ITIMER_REAL, &it, NULL));
	struct timespec d = {5, 0}, rem = {0};
	CT_ERR(syscall(SYS_nanosleep, &d, &rem), EINTR);
	CT_TRUE(rem.tv_sec >= 4 && rem.tv_sec <= 5);
}

CT_TEST(clock_gettime, clocks)
{
	clockid_t ids[] = {CLOCK_REALTIME,           CLOCK_MONOTONIC,        CLOCK_BOOTTIME,
	                   CLOCK_MONOTONIC_RAW,      CLOCK_REALTIME_COARSE,  CLOCK_MONOTONIC_COARSE,
	                   CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct timespec t = {-1, -1};
		CT_OK(syscall(SYS_clock_gettime, ids[i], &t));
		CT_TRUE(t.tv_sec >= 0 && t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
	}
	struct timespec t;
	CT_OK(syscall(SYS_clock_gettime, CLOCK_REALTIME, &t));
	/* After 2020-01-01. */
	CT_TRUE(t.tv_sec > 1577836800);
}

CT_TEST(clock_gettime, monotonic_never_goes_back)
{
	long prev = mono_ns();
	for (int i = 0; i < 1000; i++) {
		long now = mono_ns();
		CT_TRUE(now >= prev);
		prev = now;
	}
}

CT_TEST(clock_gettime, errors)
{
	struct timespec t;
	CT_ERR(syscall(SYS_clock_gettime, 1234, &t), EINVAL);
	CT_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)8), EFAULT);
}

CT_TEST(clock_gettime, process_cpu_clock_of_child)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	/* The clock id of another process: ~pid << 3 | CPUCLOCK_SCHED (2). */
	clockid_t cid = (clockid_t)((~(unsigned)pid << 3) | 2);
	struct timespec t;
	CT_OK(syscall(SYS_clock_gettime, cid, &t));
	kill(pid, SIGKILL);
}

CT_TEST(clock_getres, resolutions)
{
	struct timespec r = {-1, -1};
	CT_OK(syscall(SYS_clock_getres, CLOCK_MONOTONIC, &r));
	CT_TRUE(r.tv_sec == 0 && r.tv_nsec > 0 && r.tv_nsec <= 1000000);
	CT_OK(syscall(SYS_clock_getres, CLOCK_REALTIME, NULL));
	CT_OK(syscall(SYS_clock_getres, CLOCK_MONOTONIC_COARSE, &r));
	CT_TRUE(r.tv_sec == 0 && r.tv_nsec > 0);
	CT_ERR(syscall(SYS_clock_getres, 1234, &r), EINVAL);
}

CT_TEST(clock_nanosleep, relative_and_absolute)
{
	long start = mono_ns();
	struct timespec d = {0, 3000000};
	CT_OK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL));
	CT_TRUE(mono_ns() - start >= 3000000);
	struct timespec until;
	CT_OK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &until));
	until.tv_nsec += 3000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	CT_OK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL));
	CT_TRUE(mono_ns() >= ns_of(&until));
	/* An absolute time in the past returns at once. */
	struct timespec past = {1, 0};
	CT_OK(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &past, NULL));
}

CT_TEST(clock_nanosleep, errors)
{
	struct timespec d = {0, 1000};
	CT_ERR(syscall(SYS_clock_nanosleep, 1234, 0, &d, NULL), EINVAL);
	CT_ERR(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &d, NULL), EOPNOTSUPP);
	struct timespec bad = {0, 1000000000};
	CT_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
	CT_ERR(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (void *)8, NULL), EFAULT);
}

CT_TEST(clock_settime, unsettable_or_invalid)
{
	struct timespec t = {1, 0};
	/* These are refused for any caller, privileged or not. */
	CT_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &t), EINVAL);
	CT_ERR(syscall(SYS_clock_settime, 1234, &t), EINVAL);
	struct timespec bad = {1, 1000000000};
	CT_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
}

CT_TEST(gettimeofday, agrees_with_clock_gettime)
{
	struct timeval tv;
	struct timespec ts;
	CT_OK(syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts));
	CT_OK(syscall(SYS_gettimeofday, &tv, NULL));
	CT_TRUE(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	long diff = tv.tv_sec - ts.tv_sec;
	CT_TRUE(diff >= 0 && diff <= 1);
	struct timezone tz;
	CT_OK(syscall(SYS_gettimeofday, NULL, &tz));
	CT_ERR(syscall(SYS_gettimeofday, (void *)8, NULL), EFAULT);
}

CT_TEST(settimeofday, invalid_usec)
{
	struct timeval tv = {1, 2000000};
	CT_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_usec = -1;
	CT_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
}

CT_TEST(settimeofday, null_needs_cap_sys_time)
{
	/* Setting nothing still checks CAP_SYS_TIME; which answer is right depends on it. */
	if (have_cap(CAP_SYS_TIME))
		CT_OK(syscall(SYS_settimeofday, NULL, NULL));
	else
		CT_ERR(syscall(SYS_settimeofday, NULL, NULL), EPERM);
}

CT_TEST(time, agrees_and_stores)
{
	time_t t = 0;
	long r = CT_OK(syscall(SYS_time, &t));
	CT_EQ(r, t);
	struct timespec ts;
	CT_OK(syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts));
	CT_TRUE(ts.tv_sec - r >= 0 && ts.tv_sec - r <= 1);
	CT_TRUE(CT_OK(syscall(SYS_time, NULL)) >= r);
	CT_ERR(syscall(SYS_time, (void *)8), EFAULT);
}

CT_TEST(times, counts_children)
{
	struct tms a, b;
	long t0 = syscall(SYS_times, &a);
	CT_TRUE(t0 != -1);
	pid_t pid = fork();
	if (pid == 0) {
		/* CPU time in user space, without system calls (a loop of clock_gettime calls
		 * would spend it in the kernel, or waiting for a tracer under a sandbox). */
		for (volatile unsigned long i = 0; i < 150000000UL; i++)
			;
		_exit(0);
	}
	ct_wait(pid);
	long t1 = syscall(SYS_times, &b);
	CT_TRUE(t1 >= t0);
	/* Well over 20 ms of CPU in the reaped child: at least two ticks of 10 ms. */
	CT_TRUE(b.tms_cutime + b.tms_cstime >= 2);
	CT_TRUE(b.tms_utime >= a.tms_utime);
	CT_OK(syscall(SYS_times, NULL));
}

CT_TEST(getrusage, self_children_thread)
{
	struct rusage ru;
	CT_OK(syscall(SYS_getrusage, RUSAGE_SELF, &ru));
	CT_TRUE(ru.ru_maxrss > 0);
	CT_OK(syscall(SYS_getrusage, RUSAGE_THREAD, &ru));
	CT_OK(syscall(SYS_getrusage, RUSAGE_CHILDREN, &ru));
	CT_EQ(ru.ru_maxrss, 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ct_wait(pid);
	CT_OK(syscall(SYS_getrusage, RUSAGE_CHILDREN, &ru));
	CT_TRUE(ru.ru_maxrss > 0);
}

CT_TEST(getrusage, errors)
{
	struct rusage ru;
	CT_ERR(syscall(SYS_getrusage, 42, &ru), EINVAL);
	CT_ERR(syscall(SYS_getrusage, RUSAGE_SELF, (void *)8), EFAULT);
}
