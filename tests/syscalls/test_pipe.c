/*
 * pipe and pipe2: data flow, flags, EOF/EPIPE semantics, capacity.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
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
