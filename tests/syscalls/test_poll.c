/*
 * poll, ppoll, select, pselect6: readiness of pipes, timeouts, signal masks, errors.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void mkpipe(int p[2])
{
	CT_OK(pipe2(p, 0));
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static volatile sig_atomic_t got;

static void on_sig(int sig)
{
	(void)sig;
	got = 1;
}

/* ---- poll ---- */

CT_TEST(poll, empty_pipe_timeout)
{
	int p[2];
	mkpipe(p);
	struct pollfd fds[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}};
	CT_EQ(poll(fds, 1, 10), 0);
	CT_EQ(fds[0].revents, 0);
	CT_EQ(poll(fds, 2, 0), 1);
	CT_EQ(fds[1].revents, POLLOUT);
}

CT_TEST(poll, readable_after_write)
{
	int p[2];
	mkpipe(p);
	CT_EQ(write(p[1], "x", 1), 1);
	struct pollfd fd = {p[0], POLLIN, 0};
	CT_EQ(poll(&fd, 1, 1000), 1);
	CT_EQ(fd.revents, POLLIN);
}

CT_TEST(poll, hup_when_writer_closed)
{
	int p[2];
	mkpipe(p);
	close(p[1]);
	struct pollfd fd = {p[0], POLLIN, 0};
	CT_EQ(poll(&fd, 1, 1000), 1);
	CT_TRUE(fd.revents & POLLHUP);
}

CT_TEST(poll, err_when_reader_closed)
{
	int p[2];
	mkpipe(p);
	close(p[0]);
	struct pollfd fd = {p[1], POLLOUT, 0};
	CT_EQ(poll(&fd, 1, 1000), 1);
	CT_TRUE(fd.revents & POLLERR);
}

CT_TEST(poll, bad_fd_nval)
{
	struct pollfd fds[2] = {{999, POLLIN, 0}, {-1, POLLIN, 0}};
	CT_EQ(poll(fds, 2, 0), 1);
	CT_EQ(fds[0].revents, POLLNVAL);
	CT_EQ(fds[1].revents, 0); /* negative fds are ignored */
}

CT_TEST(poll, efault)
{
	CT_ERR(syscall(SYS_poll, (struct pollfd *)8, 1, 0), EFAULT);
}

CT_TEST(poll, too_many_einval)
{
	/* More fds than RLIMIT_NOFILE allows. */
	struct pollfd fd = {0, POLLIN, 0};
	CT_ERR(syscall(SYS_poll, &fd, 0x7fffffff, 0), EINVAL);
}

CT_TEST(poll, woken_by_child_write)
{
	int p[2];
	mkpipe(p);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
		_exit(write(p[1], "y", 1) == 1 ? 0 : 1);
	}
	struct pollfd fd = {p[0], POLLIN, 0};
	CT_EQ(poll(&fd, 1, 5000), 1);
	ct_wait(pid);
}

CT_TEST(poll, eintr_by_signal)
{
	int p[2];
	mkpipe(p);
	struct sigaction sa = {.sa_handler = on_sig};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	struct pollfd fd = {p[0], POLLIN, 0};
	CT_ERR(poll(&fd, 1, 3000), EINTR);
	CT_TRUE(got);
}

/* ---- ppoll ---- */

CT_TEST(ppoll, timeout_zero_and_short)
{
	int p[2];
	mkpipe(p);
	struct pollfd fd = {p[0], POLLIN, 0};
	struct timespec zero = {0, 0}, ten = {0, 10 * 1000 * 1000};
	CT_EQ(syscall(SYS_ppoll, &fd, 1, &zero, NULL, 8), 0);
	long t0 = now_ms();
	CT_EQ(syscall(SYS_ppoll, &fd, 1, &ten, NULL, 8), 0);
	CT_TRUE(now_ms() - t0 >= 9);
}

CT_TEST(ppoll, ready)
{
	int p[2];
	mkpipe(p);
	CT_EQ(write(p[1], "x", 1), 1);
	struct pollfd fd = {p[0], POLLIN, 0};
	CT_EQ(syscall(SYS_ppoll, &fd, 1, NULL, NULL, 8), 1);
	CT_EQ(fd.revents, POLLIN);
}

CT_TEST(ppoll, bad_timeout_einval)
{
	struct pollfd fd = {0, POLLIN, 0};
	struct timespec bad = {0, 1000000000L};
	CT_ERR(syscall(SYS_ppoll, &fd, 1, &bad, NULL, 8), EINVAL);
}

CT_TEST(ppoll, bad_sigsetsize_einval)
{
	struct pollfd fd = {0, POLLIN, 0};
	struct timespec zero = {0, 0};
	sigset_t m;
	sigemptyset(&m);
	CT_ERR(syscall(SYS_ppoll, &fd, 1, &zero, &m, 4), EINVAL);
}

CT_TEST(ppoll, mask_unblocks_signal)
{
	sigset_t block, wait_mask;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	struct sigaction sa = {.sa_handler = on_sig};
	sigaction(SIGUSR1, &sa, NULL);
	kill(getpid(), SIGUSR1); /* pending while blocked */
	CT_TRUE(!got);
	sigemptyset(&wait_mask);
	int p[2];
	mkpipe(p);
	struct pollfd fd = {p[0], POLLIN, 0};
	struct timespec ts = {2, 0};
	CT_ERR(syscall(SYS_ppoll, &fd, 1, &ts, &wait_mask, 8), EINTR);
	CT_TRUE(got);
	/* The original mask is back. */
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	CT_TRUE(sigismember(&cur, SIGUSR1));
}

/* ---- select ---- */

CT_TEST(select, readable_and_writable)
{
	int p[2];
	mkpipe(p);
	CT_EQ(write(p[1], "x", 1), 1);
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &w);
	struct timeval tv = {1, 0};
	CT_EQ(syscall(SYS_select, p[1] + 1, &r, &w, NULL, &tv), 2);
	CT_TRUE(FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w));
}

CT_TEST(select, timeout_updates_tv)
{
	int p[2];
	mkpipe(p);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {0, 20000};
	CT_EQ(syscall(SYS_select, p[0] + 1, &r, NULL, NULL, &tv), 0);
	CT_TRUE(!FD_ISSET(p[0], &r));
	/* Linux writes back the time left. */
	CT_EQ(tv.tv_sec, 0);
	CT_TRUE(tv.tv_usec < 20000);
}

CT_TEST(select, closed_fd_ebadf)
{
	int p[2];
	mkpipe(p);
	close(p[1]);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[1], &r);
	struct timeval tv = {0, 0};
	CT_ERR(syscall(SYS_select, p[1] + 1, &r, NULL, NULL, &tv), EBADF);
}

CT_TEST(select, negative_nfds_einval)
{
	struct timeval tv = {0, 0};
	CT_ERR(syscall(SYS_select, -1, NULL, NULL, NULL, &tv), EINVAL);
}

CT_TEST(select, bad_timeout_einval)
{
	struct timeval tv = {0, -1};
	CT_ERR(syscall(SYS_select, 0, NULL, NULL, NULL, &tv), EINVAL);
}

CT_TEST(select, nfds_zero_sleeps)
{
	struct timeval tv = {0, 10000};
	long t0 = now_ms();
	CT_EQ(syscall(SYS_select, 0, NULL, NULL, NULL, &tv), 0);
	CT_TRUE(now_ms() - t0 >= 9);
}

/* ---- pselect6 ---- */

struct sigset_arg {
	const sigset_t *ss;
	size_t len;
};

CT_TEST(pselect6, ready)
{
	int p[2];
	mkpipe(p);
	CT_EQ(write(p[1], "x", 1), 1);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {1, 0};
	CT_EQ(syscall(SYS_pselect6, p[0] + 1, &r, NULL, NULL, &ts, NULL), 1);
	CT_TRUE(FD_ISSET(p[0], &r));
}

CT_TEST(pselect6, timeout)
{
	int p[2];
	mkpipe(p);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {0, 10 * 1000 * 1000};
	CT_EQ(syscall(SYS_pselect6, p[0] + 1, &r, NULL, NULL, &ts, NULL), 0);
	CT_TRUE(!FD_ISSET(p[0], &r));
}

CT_TEST(pselect6, bad_timeout_einval)
{
	struct timespec ts = {0, 1000000000L};
	CT_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, NULL), EINVAL);
}

CT_TEST(pselect6, mask_unblocks_signal)
{
	sigset_t block, empty;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, NULL);
	struct sigaction sa = {.sa_handler = on_sig};
	sigaction(SIGUSR2, &sa, NULL);
	kill(getpid(), SIGUSR2);
	sigemptyset(&empty);
	struct sigset_arg arg = {&empty, 8};
	struct timespec ts = {2, 0};
	CT_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, &arg), EINTR);
	CT_TRUE(got);
}

CT_TEST(pselect6, bad_sigsetsize_einval)
{
	sigset_t empty;
	sigemptyset(&empty);
	struct sigset_arg arg = {&empty, 3};
	struct timespec ts = {0, 0};
	CT_ERR(syscall(SYS_pselect6, 0, NULL, NULL, NULL, &ts, &arg), EINVAL);
}
