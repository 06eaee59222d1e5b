/*
 * pipe and pipe2: data flow, flags, EOF/EPIPE semantics, capacity; FIFOs' opens under signals.
 */
#include "compat_test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

CT_TEST(pipe, write_read)
{
	int p[2];
	CT_OK(syscall(SYS_pipe, p));
	CT_EQ(write(p[1], "abc", 3), 3);
	char buf[8];
	CT_EQ(read(p[0], buf, sizeof(buf)), 3);
	CT_TRUE(memcmp(buf, "abc", 3) == 0);
}

CT_TEST(pipe, ends_are_directional)
{
	int p[2];
	CT_OK(syscall(SYS_pipe, p));
	char c = 0;
	CT_ERR(write(p[0], &c, 1), EBADF);
	CT_ERR(read(p[1], &c, 1), EBADF);
	CT_EQ(fcntl(p[0], F_GETFL) & O_ACCMODE, O_RDONLY);
	CT_EQ(fcntl(p[1], F_GETFL) & O_ACCMODE, O_WRONLY);
}

CT_TEST(pipe, eof_after_writer_closed)
{
	int p[2];
	CT_OK(syscall(SYS_pipe, p));
	CT_EQ(write(p[1], "x", 1), 1);
	close(p[1]);
	char buf[4];
	CT_EQ(read(p[0], buf, sizeof(buf)), 1);
	CT_EQ(read(p[0], buf, sizeof(buf)), 0);
}

CT_TEST(pipe, efault)
{
	CT_ERR(syscall(SYS_pipe, (int *)8), EFAULT);
}

CT_TEST(pipe, across_fork)
{
	int p[2];
	CT_OK(syscall(SYS_pipe, p));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], "child", 5) == 5 ? 0 : 1);
	}
	close(p[1]);
	char buf[8] = {0};
	CT_EQ(read(p[0], buf, sizeof(buf)), 5);
	CT_STREQ(buf, "child");
	CT_EQ(read(p[0], buf, sizeof(buf)), 0);
	ct_wait(pid);
}

CT_TEST(pipe, no_cloexec_by_default)
{
	int p[2];
	CT_OK(syscall(SYS_pipe, p));
	CT_EQ(fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
	CT_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
}

CT_TEST(pipe2, cloexec)
{
	int p[2];
	CT_OK(pipe2(p, O_CLOEXEC));
	CT_EQ(fcntl(p[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CT_EQ(fcntl(p[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

CT_TEST(pipe2, nonblock_empty_eagain)
{
	int p[2];
	CT_OK(pipe2(p, O_NONBLOCK));
	char c;
	CT_ERR(read(p[0], &c, 1), EAGAIN);
	CT_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
}

CT_TEST(pipe2, nonblock_full_eagain)
{
	int p[2];
	CT_OK(pipe2(p, O_NONBLOCK));
	int size = CT_OK(fcntl(p[1], F_GETPIPE_SZ));
	static char buf[1 << 16];
	long total = 0;
	for (;;) {
		ssize_t n = write(p[1], buf, sizeof(buf));
		if (n < 0) {
			CT_EQ(errno, EAGAIN);
			break;
		}
		total += n;
		CT_TRUE(total <= size);
	}
	CT_EQ(total, size);
}

CT_TEST(pipe2, bad_flags_einval)
{
	int p[2];
	CT_ERR(pipe2(p, O_RDWR | 0x10000000), EINVAL);
}

CT_TEST(pipe2, direct_packet_mode)
{
	int p[2];
	CT_OK(pipe2(p, O_DIRECT));
	/* Packet mode: each write is one packet; a read takes at most one. */
	CT_EQ(write(p[1], "one", 3), 3);
	CT_EQ(write(p[1], "two", 3), 3);
	char buf[16];
	CT_EQ(read(p[0], buf, sizeof(buf)), 3);
	CT_TRUE(memcmp(buf, "one", 3) == 0);
	CT_EQ(read(p[0], buf, sizeof(buf)), 3);
}

CT_TEST(pipe2, epipe_sigpipe)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	close(p[0]);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);
	signal(SIGPIPE, SIG_IGN);
	CT_ERR(write(p[1], "x", 1), EPIPE);
}

CT_TEST(pipe2, capacity_get_set)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	long size = CT_OK(fcntl(p[0], F_GETPIPE_SZ));
	CT_TRUE(size >= 4096);
	long set = CT_OK(fcntl(p[0], F_SETPIPE_SZ, 128 * 1024));
	CT_TRUE(set >= 128 * 1024);
	CT_EQ(fcntl(p[1], F_GETPIPE_SZ), set);
}

CT_TEST(pipe2, fionread_like_partial_read)
{
	int p[2];
	CT_OK(pipe2(p, 0));
	CT_EQ(write(p[1], "abcdef", 6), 6);
	char buf[4];
	CT_EQ(read(p[0], buf, 2), 2);
	CT_EQ(read(p[0], buf, 4), 4);
	CT_TRUE(memcmp(buf, "cdef", 4) == 0);
}

static volatile sig_atomic_t usr1_runs;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_runs++;
}

/* FIFOs p1 and p2, and a child process that handles SIGUSR1 with sa_flags (0 in the child). */
static pid_t fifos_and_child(int sa_flags)
{
	CT_OK(mkfifo("p1", 0600));
	CT_OK(mkfifo("p2", 0600));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = sa_flags};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	return pid;
}

/* SIGUSR1 to process pid while its threads wait in their opens, and time to act on it. */
static void usr1_while_waiting(pid_t pid)
{
	usleep(300 * 1000);
	CT_OK(kill(pid, SIGUSR1));
	usleep(300 * 1000);
}

static void *open_fifo_for_reading(void *arg)
{
	int *fd = arg;
	*fd = open("p2", O_RDONLY);
	return NULL;
}

/* A signal sent to a process is taken by one of its threads, the main thread when it does not
 * block it: its FIFO open runs the handler and is restarted (SA_RESTART), while a second thread
 * waiting in another FIFO's open goes on waiting. Both opens complete once their writers come. */
CT_TEST(openat, fifo_open_process_signal)
{
	pid_t pid = fifos_and_child(SA_RESTART);
	if (pid == 0) {
		int other = -1;
		pthread_t th;
		if (pthread_create(&th, NULL, open_fifo_for_reading, &other) != 0)
			_exit(4);
		int fd = open("p1", O_RDONLY);
		pthread_join(th, NULL);
		_exit(fd < 0 ? 1 : other < 0 ? 2 : usr1_runs != 1 ? 3 : 0);
	}
	usr1_while_waiting(pid);
	int w1 = CT_OK(open("p1", O_WRONLY));
	int w2 = CT_OK(open("p2", O_WRONLY | O_NONBLOCK)); /* (ENXIO without its reader) */
	close(w1);
	close(w2);
	CT_EQ(ct_exit_code(pid), 0);
}

struct fifo_waiter {
	const char *path;
	int fd, err;
};

static void *open_fifo_unblocked(void *arg)
{
	struct fifo_waiter *w = arg;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	errno = 0;
	w->fd = open(w->path, O_RDONLY);
	w->err = errno;
	return NULL;
}

/* A signal sent to a process whose main thread blocks it goes to one other thread that does
 * not: with a handler without SA_RESTART, exactly one of two threads waiting in FIFO opens
 * gets EINTR (after the handler, which runs once), and the other's open goes on. */
CT_TEST(openat, fifo_open_process_signal_one_thread)
{
	pid_t pid = fifos_and_child(0);
	if (pid == 0) {
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		struct fifo_waiter w[2] = {{.path = "p1", .fd = -1}, {.path = "p2", .fd = -1}};
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, open_fifo_unblocked, &w[i]) != 0)
				_exit(4);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		int eintr = (w[0].fd < 0 && w[0].err == EINTR) + (w[1].fd < 0 && w[1].err == EINTR);
		int opened = (w[0].fd >= 0) + (w[1].fd >= 0);
		_exit(eintr == 1 && opened == 1 && usr1_runs == 1 ? 0 : 1 + eintr + 4 * opened);
	}
	usr1_while_waiting(pid);
	/* The writer of the open that goes on; the other's reader is gone (ENXIO). */
	for (int i = 0; i < 2; i++) {
		int w = open(i ? "p2" : "p1", O_WRONLY | O_NONBLOCK);
		if (w >= 0)
			close(w);
	}
	CT_EQ(ct_exit_code(pid), 0);
}
