/*
 * eventfd/eventfd2, timerfd_create/settime/gettime, signalfd/signalfd4.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- eventfd ---- */

CT_TEST(eventfd, counter_read_resets)
{
	int fd = CT_OK(syscall(SYS_eventfd, 3));
	uint64_t v = 4;
	CT_EQ(write(fd, &v, 8), 8);
	CT_EQ(read(fd, &v, 8), 8);
	CT_EQ(v, 7);
	CT_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
	CT_ERR(read(fd, &v, 8), EAGAIN);
}

CT_TEST(eventfd, short_read_einval)
{
	int fd = CT_OK(syscall(SYS_eventfd, 1));
	uint32_t small;
	CT_ERR(read(fd, &small, 4), EINVAL);
}

CT_TEST(eventfd, write_max_einval)
{
	int fd = CT_OK(syscall(SYS_eventfd, 0));
	uint64_t v = UINT64_MAX;
	CT_ERR(write(fd, &v, 8), EINVAL);
}

CT_TEST(eventfd2, nonblock_cloexec)
{
	int fd = CT_OK(syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	uint64_t v;
	CT_ERR(read(fd, &v, 8), EAGAIN);
}

CT_TEST(eventfd2, semaphore)
{
	int fd = CT_OK(syscall(SYS_eventfd2, 2, EFD_SEMAPHORE | EFD_NONBLOCK));
	uint64_t v = 0;
	CT_EQ(read(fd, &v, 8), 8);
	CT_EQ(v, 1);
	CT_EQ(read(fd, &v, 8), 8);
	CT_EQ(v, 1);
	CT_ERR(read(fd, &v, 8), EAGAIN);
}

CT_TEST(eventfd2, bad_flags_einval)
{
	CT_ERR(syscall(SYS_eventfd2, 0, 0x4), EINVAL);
}

CT_TEST(eventfd2, overflow_nonblock_eagain)
{
	int fd = CT_OK(syscall(SYS_eventfd2, 0, EFD_NONBLOCK));
	uint64_t v = UINT64_MAX - 1;
	CT_EQ(write(fd, &v, 8), 8);
	v = 1;
	CT_ERR(write(fd, &v, 8), EAGAIN);
	struct pollfd p = {fd, POLLIN | POLLOUT, 0};
	CT_EQ(poll(&p, 1, 0), 1);
	CT_EQ(p.revents, POLLIN);
}

CT_TEST(eventfd2, wakes_blocked_reader_child)
{
	int fd = CT_OK(syscall(SYS_eventfd2, 0, 0));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		uint64_t v;
		_exit(read(fd, &v, 8) == 8 && v == 5 ? 0 : 1);
	}
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t v = 5;
	CT_EQ(write(fd, &v, 8), 8);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- timerfd ---- */

CT_TEST(timerfd_create, monotonic_and_flags)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	uint64_t n;
	CT_ERR(read(fd, &n, 8), EAGAIN);
	CT_OK(timerfd_create(CLOCK_REALTIME, 0));
	CT_OK(timerfd_create(CLOCK_BOOTTIME, 0));
}

CT_TEST(timerfd_create, bad_clock_einval)
{
	CT_ERR(timerfd_create(12345, 0), EINVAL);
}

CT_TEST(timerfd_create, bad_flags_einval)
{
	CT_ERR(timerfd_create(CLOCK_MONOTONIC, 0x1), EINVAL);
}

CT_TEST(timerfd_settime, fires_once)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = {{0, 0}, {0, 5 * 1000 * 1000}};
	CT_OK(timerfd_settime(fd, 0, &its, NULL));
	uint64_t n = 0;
	CT_EQ(read(fd, &n, 8), 8);
	CT_EQ(n, 1);
}

CT_TEST(timerfd_settime, periodic_counts)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = {{0, 2 * 1000 * 1000}, {0, 2 * 1000 * 1000}};
	CT_OK(timerfd_settime(fd, 0, &its, NULL));
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t n = 0;
	CT_EQ(read(fd, &n, 8), 8);
	CT_TRUE(n >= 5);
}

CT_TEST(timerfd_settime, abstime_past_fires)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	struct itimerspec its = {{0, 0}, {0, 1}};
	CT_OK(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
	struct pollfd p = {fd, POLLIN, 0};
	CT_EQ(poll(&p, 1, 1000), 1);
	uint64_t n;
	CT_EQ(read(fd, &n, 8), 8);
}

CT_TEST(timerfd_settime, disarm_returns_old)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	struct itimerspec its = {{1, 0}, {10, 0}}, old, zero = {{0, 0}, {0, 0}};
	CT_OK(timerfd_settime(fd, 0, &its, NULL));
	CT_OK(timerfd_settime(fd, 0, &zero, &old));
	CT_EQ(old.it_interval.tv_sec, 1);
	CT_TRUE(old.it_value.tv_sec >= 9 && old.it_value.tv_sec <= 10);
	uint64_t n;
	CT_ERR(read(fd, &n, 8), EAGAIN);
}

CT_TEST(timerfd_settime, bad_nsec_einval)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = {{0, 0}, {0, 1000000000L}};
	CT_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
}

CT_TEST(timerfd_settime, not_timerfd_einval)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	struct itimerspec its = {{0, 0}, {1, 0}};
	CT_ERR(timerfd_settime(p[0], 0, &its, NULL), EINVAL);
	CT_ERR(timerfd_settime(999, 0, &its, NULL), EBADF);
}

CT_TEST(timerfd_gettime, disarmed_zero)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec cur = {{1, 1}, {1, 1}};
	CT_OK(timerfd_gettime(fd, &cur));
	CT_TRUE(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);
	CT_TRUE(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_nsec == 0);
}

CT_TEST(timerfd_gettime, remaining)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec its = {{0, 0}, {5, 0}}, cur;
	CT_OK(timerfd_settime(fd, 0, &its, NULL));
	CT_OK(timerfd_gettime(fd, &cur));
	CT_TRUE(cur.it_value.tv_sec == 4 || cur.it_value.tv_sec == 5);
}

CT_TEST(timerfd_gettime, efault_ebadf)
{
	int fd = CT_OK(timerfd_create(CLOCK_MONOTONIC, 0));
	CT_ERR(timerfd_gettime(fd, (struct itimerspec *)8), EFAULT);
	struct itimerspec cur;
	CT_ERR(timerfd_gettime(999, &cur), EBADF);
}

/* ---- signalfd ---- */

static void block(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

CT_TEST(signalfd, reads_pending_signal)
{
	block(SIGUSR1);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int fd = CT_OK(syscall(SYS_signalfd, -1, &s, 8));
	CT_OK(kill(getpid(), SIGUSR1));
	struct signalfd_siginfo si;
	CT_EQ(read(fd, &si, sizeof(si)), sizeof(si));
	CT_EQ(si.ssi_signo, SIGUSR1);
	CT_EQ(si.ssi_pid, getpid());
	CT_EQ(si.ssi_uid, getuid());
}

CT_TEST(signalfd, bad_sizemask_einval)
{
	sigset_t s;
	sigemptyset(&s);
	CT_ERR(syscall(SYS_signalfd, -1, &s, 4), EINVAL);
}

CT_TEST(signalfd, update_mask)
{
	block(SIGUSR1);
	block(SIGUSR2);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int fd = CT_OK(syscall(SYS_signalfd, -1, &s, 8));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CT_EQ(syscall(SYS_signalfd, fd, &s, 8), fd);
	CT_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
	kill(getpid(), SIGUSR1);
	struct signalfd_siginfo si;
	CT_ERR(read(fd, &si, sizeof(si)), EAGAIN);
	kill(getpid(), SIGUSR2);
	CT_EQ(read(fd, &si, sizeof(si)), sizeof(si));
	CT_EQ(si.ssi_signo, SIGUSR2);
}

CT_TEST(signalfd4, nonblock_empty_eagain)
{
	block(SIGUSR1);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int fd = CT_OK(syscall(SYS_signalfd4, -1, &s, 8, SFD_NONBLOCK | SFD_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	struct signalfd_siginfo si;
	CT_ERR(read(fd, &si, sizeof(si)), EAGAIN);
}

CT_TEST(signalfd4, bad_flags_einval)
{
	sigset_t s;
	sigemptyset(&s);
	CT_ERR(syscall(SYS_signalfd4, -1, &s, 8, 0x1), EINVAL);
}

CT_TEST(signalfd4, not_signalfd_einval)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	sigset_t s;
	sigemptyset(&s);
	CT_ERR(syscall(SYS_signalfd4, p[0], &s, 8, 0), EINVAL);
}

CT_TEST(signalfd4, poll_readable_and_sigqueue_value)
{
	block(SIGRTMIN);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	int fd = CT_OK(syscall(SYS_signalfd4, -1, &s, 8, SFD_NONBLOCK));
	struct pollfd p = {fd, POLLIN, 0};
	CT_EQ(poll(&p, 1, 0), 0);
	union sigval val = {.sival_int = 77};
	CT_OK(sigqueue(getpid(), SIGRTMIN, val));
	CT_EQ(poll(&p, 1, 1000), 1);
	struct signalfd_siginfo si;
	CT_EQ(read(fd, &si, sizeof(si)), sizeof(si));
	CT_EQ(si.ssi_signo, SIGRTMIN);
	CT_EQ(si.ssi_int, 77);
	CT_EQ(si.ssi_code, SI_QUEUE);
}

CT_TEST(signalfd4, small_buffer_einval)
{
	block(SIGUSR1);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int fd = CT_OK(syscall(SYS_signalfd4, -1, &s, 8, SFD_NONBLOCK));
	kill(getpid(), SIGUSR1);
	char small[16];
	CT_ERR(read(fd, small, sizeof(small)), EINVAL);
}
