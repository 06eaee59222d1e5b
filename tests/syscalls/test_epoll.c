/*
 * epoll: creation, registration, waiting (level/edge-triggered, oneshot), errors.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int ep_with_pipe(int p[2], unsigned events)
{
	int ep = CT_OK(epoll_create1(0));
	CT_OK(pipe2(p, 0));
	struct epoll_event ev = {.events = events, .data.u64 = 0xabcdef};
	CT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	return ep;
}

static int wait0(int ep, struct epoll_event *evs, int n)
{
	return (int)syscall(SYS_epoll_wait, ep, evs, n, 0);
}

CT_TEST(epoll_create, positive_size)
{
	int ep = CT_OK(syscall(SYS_epoll_create, 1));
	CT_EQ(fcntl(ep, F_GETFD) & FD_CLOEXEC, 0);
}

CT_TEST(epoll_create, zero_size_einval)
{
	CT_ERR(syscall(SYS_epoll_create, 0), EINVAL);
}

CT_TEST(epoll_create1, cloexec)
{
	int ep = CT_OK(epoll_create1(EPOLL_CLOEXEC));
	CT_EQ(fcntl(ep, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

CT_TEST(epoll_create1, bad_flags_einval)
{
	CT_ERR(epoll_create1(1), EINVAL);
}

CT_TEST(epoll_ctl, add_twice_eexist)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), EEXIST);
}

CT_TEST(epoll_ctl, mod_del_missing_enoent)
{
	int ep = CT_OK(epoll_create1(0));
	int p[2];
	CT_OK(pipe2(p, 0));
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), ENOENT);
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], &ev), ENOENT);
}

CT_TEST(epoll_ctl, bad_fd_ebadf)
{
	int ep = CT_OK(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev), EBADF);
	CT_ERR(epoll_ctl(999, EPOLL_CTL_ADD, 0, &ev), EBADF);
}

CT_TEST(epoll_ctl, regular_file_eperm)
{
	int ep = CT_OK(epoll_create1(0));
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), EPERM);
}

CT_TEST(epoll_ctl, self_einval)
{
	int ep = CT_OK(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev), EINVAL);
}

CT_TEST(epoll_ctl, not_epoll_einval)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &ev), EINVAL);
}

CT_TEST(epoll_ctl, bad_op_einval)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event ev = {.events = EPOLLIN};
	CT_ERR(epoll_ctl(ep, 99, p[1], &ev), EINVAL);
}

CT_TEST(epoll_ctl, mod_changes_events_del_removes)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event ev = {.events = EPOLLOUT}, out;
	CT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev));
	CT_EQ(wait0(ep, &out, 1), 1);
	CT_EQ(out.events, EPOLLOUT);
	ev.events = EPOLLIN;
	CT_OK(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev));
	CT_EQ(wait0(ep, &out, 1), 0);
	CT_OK(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));
}

CT_TEST(epoll_wait, level_triggered_data)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event out[4];
	CT_EQ(wait0(ep, out, 4), 0);
	CT_EQ(write(p[1], "x", 1), 1);
	CT_EQ(wait0(ep, out, 4), 1);
	CT_EQ(out[0].events, EPOLLIN);
	CT_EQ(out[0].data.u64, 0xabcdef);
	/* Level-triggered: still reported while data is there. */
	CT_EQ(wait0(ep, out, 4), 1);
}

CT_TEST(epoll_wait, edge_triggered_once)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN | EPOLLET);
	struct epoll_event out;
	CT_EQ(write(p[1], "x", 1), 1);
	CT_EQ(wait0(ep, &out, 1), 1);
	CT_EQ(wait0(ep, &out, 1), 0);
	CT_EQ(write(p[1], "y", 1), 1);
	CT_EQ(wait0(ep, &out, 1), 1);
}

CT_TEST(epoll_wait, oneshot_disarms)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN | EPOLLONESHOT);
	struct epoll_event out, ev = {.events = EPOLLIN | EPOLLONESHOT};
	CT_EQ(write(p[1], "x", 1), 1);
	CT_EQ(wait0(ep, &out, 1), 1);
	CT_EQ(wait0(ep, &out, 1), 0);
	CT_OK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev));
	CT_EQ(wait0(ep, &out, 1), 1);
}

CT_TEST(epoll_wait, hup_on_close)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	close(p[1]);
	struct epoll_event out;
	CT_EQ(wait0(ep, &out, 1), 1);
	CT_TRUE(out.events & EPOLLHUP);
}

CT_TEST(epoll_wait, timeout)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event out;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	CT_EQ(syscall(SYS_epoll_wait, ep, &out, 1, 20), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CT_TRUE((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 >= 19);
}

CT_TEST(epoll_wait, maxevents_zero_einval)
{
	int ep = CT_OK(epoll_create1(0));
	struct epoll_event out;
	CT_ERR(syscall(SYS_epoll_wait, ep, &out, 0, 0), EINVAL);
}

CT_TEST(epoll_wait, bad_buffer_efault)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	CT_EQ(write(p[1], "x", 1), 1);
	CT_ERR(syscall(SYS_epoll_wait, ep, (void *)8, 1, 0), EFAULT);
}

CT_TEST(epoll_wait, woken_by_child)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
		_exit(write(p[1], "c", 1) == 1 ? 0 : 1);
	}
	struct epoll_event out;
	CT_EQ(syscall(SYS_epoll_wait, ep, &out, 1, 5000), 1);
	ct_wait(pid);
}

CT_TEST(epoll_wait, nested_epoll)
{
	int p[2];
	int inner = ep_with_pipe(p, EPOLLIN);
	int outer = CT_OK(epoll_create1(0));
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = inner}, out;
	CT_OK(epoll_ctl(outer, EPOLL_CTL_ADD, inner, &ev));
	CT_EQ(wait0(outer, &out, 1), 0);
	CT_EQ(write(p[1], "x", 1), 1);
	CT_EQ(wait0(outer, &out, 1), 1);
	CT_EQ(out.data.fd, inner);
}

static volatile sig_atomic_t got;

static void on_sig(int sig)
{
	(void)sig;
	got = 1;
}

CT_TEST(epoll_pwait, mask_unblocks_signal)
{
	sigset_t block, empty;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	struct sigaction sa = {.sa_handler = on_sig};
	sigaction(SIGUSR1, &sa, NULL);
	kill(getpid(), SIGUSR1);
	sigemptyset(&empty);
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event out;
	CT_ERR(syscall(SYS_epoll_pwait, ep, &out, 1, 2000, &empty, 8), EINTR);
	CT_TRUE(got);
}

CT_TEST(epoll_pwait, ready_null_mask)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	CT_EQ(write(p[1], "x", 1), 1);
	struct epoll_event out;
	CT_EQ(syscall(SYS_epoll_pwait, ep, &out, 1, 0, NULL, 8), 1);
}

CT_TEST(epoll_pwait, bad_sigsetsize_einval)
{
	int ep = CT_OK(epoll_create1(0));
	sigset_t m;
	sigemptyset(&m);
	struct epoll_event out;
	CT_ERR(syscall(SYS_epoll_pwait, ep, &out, 1, 0, &m, 3), EINVAL);
}

CT_TEST(epoll_pwait2, timespec_timeout)
{
	int p[2];
	int ep = ep_with_pipe(p, EPOLLIN);
	struct epoll_event out;
	struct timespec ts = {0, 10 * 1000 * 1000};
	CT_EQ(syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8), 0);
	CT_EQ(write(p[1], "x", 1), 1);
	CT_EQ(syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8), 1);
}

CT_TEST(epoll_pwait2, bad_timespec_einval)
{
	int ep = CT_OK(epoll_create1(0));
	struct epoll_event out;
	struct timespec ts = {0, 1000000000L};
	CT_ERR(syscall(SYS_epoll_pwait2, ep, &out, 1, &ts, NULL, 8), EINVAL);
}

CT_TEST(epoll_pwait2, not_epoll_einval)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	struct epoll_event out;
	struct timespec ts = {0, 0};
	CT_ERR(syscall(SYS_epoll_pwait2, p[0], &out, 1, &ts, NULL, 8), EINVAL);
}
