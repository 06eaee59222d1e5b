/*
 * AF_UNIX sockets: stream/dgram/seqpacket, pathname and abstract addresses, SO_PEERCRED, and
 * the generic socket errors. Data transfer and ancillary data: test_socket_unix_data.c.
 */
#include "compat_test.h"
#include "unix_addr.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* An abstract name unique to this process: "\0cbox-ct-<tag>-<pid>". */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *tag)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n =
	    snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "cbox-ct-%s-%d", tag, (int)getpid());
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static int connector(int type, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	int s = CT_OK(socket(AF_UNIX, type, 0));
	CT_OK(connect(s, (struct sockaddr *)&a, len));
	return s;
}

/* ---- socket / socketpair ---- */

CT_TEST(socket, unix_types_and_flags)
{
	CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	int s = CT_OK(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	CT_EQ(fcntl(s, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CT_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
}

CT_TEST(socket, bogus_family_eafnosupport)
{
	CT_ERR(socket(4242, SOCK_STREAM, 0), EAFNOSUPPORT);
}

CT_TEST(socket, bad_type_einval)
{
	CT_ERR(socket(AF_UNIX, 77, 0), EINVAL);
}

CT_TEST(socket, unix_bad_protocol)
{
	CT_ERR(socket(AF_UNIX, SOCK_STREAM, 5), EPROTONOSUPPORT);
}

CT_TEST(socketpair, stream_bidirectional)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_EQ(write(sv[0], "ping", 4), 4);
	char buf[8];
	CT_EQ(read(sv[1], buf, sizeof(buf)), 4);
	CT_EQ(write(sv[1], "pong", 4), 4);
	CT_EQ(read(sv[0], buf, sizeof(buf)), 4);
	CT_TRUE(memcmp(buf, "pong", 4) == 0);
}

CT_TEST(socketpair, dgram_keeps_boundaries)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CT_EQ(send(sv[0], "ab", 2, 0), 2);
	CT_EQ(send(sv[0], "cde", 3, 0), 3);
	char buf[8];
	CT_EQ(recv(sv[1], buf, sizeof(buf), 0), 2);
	CT_EQ(recv(sv[1], buf, sizeof(buf), 0), 3);
}

CT_TEST(socketpair, seqpacket_truncates)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	CT_EQ(send(sv[0], "abcdef", 6, 0), 6);
	char buf[3];
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	CT_EQ(recvmsg(sv[1], &m, 0), 3);
	CT_TRUE(m.msg_flags & MSG_TRUNC);
}

CT_TEST(socketpair, inet_eopnotsupp)
{
	int sv[2];
	CT_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);
}

CT_TEST(socketpair, efault)
{
	CT_ERR(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, (int *)8), EFAULT);
}

CT_TEST(socketpair, eof_and_epipe)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	close(sv[1]);
	char c;
	CT_EQ(read(sv[0], &c, 1), 0);
	CT_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
}

/* ---- bind / listen / accept / connect ---- */

CT_TEST(bind, path_creates_socket_file)
{
	int s = listener(SOCK_STREAM, "sock");
	(void)s;
	CT_OK(access("sock", F_OK));
	CT_ERR(connect(socket(AF_UNIX, SOCK_STREAM, 0),
	               (struct sockaddr *)&(struct sockaddr_un){.sun_family = AF_UNIX,
	                                                        .sun_path = "nosuch"},
	               sizeof(struct sockaddr_un)),
	       ENOENT);
}

CT_TEST(bind, path_exists_eaddrinuse)
{
	close(CT_OK(open("taken", O_CREAT | O_WRONLY, 0600)));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "taken");
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(bind(s, (struct sockaddr *)&a, len), EADDRINUSE);
}

CT_TEST(bind, twice_einval)
{
	int s = listener(SOCK_STREAM, "a");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "b");
	CT_ERR(bind(s, (struct sockaddr *)&a, len), EINVAL);
}

CT_TEST(bind, bad_len_einval)
{
	struct sockaddr_un a;
	path_addr(&a, "x");
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(bind(s, (struct sockaddr *)&a, 1), EINVAL);
}

CT_TEST(bind, missing_dir_enoent)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "nodir/s");
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(bind(s, (struct sockaddr *)&a, len), ENOENT);
}

CT_TEST(bind, not_a_socket_enotsock)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "s");
	CT_ERR(bind(fd, (struct sockaddr *)&a, len), ENOTSOCK);
}

CT_TEST(bind, abstract_unique_then_eaddrinuse)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, "abs");
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(bind(s, (struct sockaddr *)&a, len));
	int s2 = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(bind(s2, (struct sockaddr *)&a, len), EADDRINUSE);
}

CT_TEST(listen, dgram_eopnotsupp)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CT_ERR(listen(s, 1), EOPNOTSUPP);
}

CT_TEST(listen, unbound_stream_einval)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(listen(s, 1), EINVAL);
}

CT_TEST(listen, file_enotsock)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	CT_ERR(listen(fd, 1), ENOTSOCK);
}

CT_TEST(accept, stream_roundtrip)
{
	int l = listener(SOCK_STREAM, "srv");
	int c = connector(SOCK_STREAM, "srv");
	int a = CT_OK(syscall(SYS_accept, l, NULL, NULL));
	CT_EQ(write(c, "hi", 2), 2);
	char buf[4];
	CT_EQ(read(a, buf, sizeof(buf)), 2);
}

CT_TEST(accept, nonblock_eagain)
{
	int l = listener(SOCK_STREAM, "srv");
	CT_OK(fcntl(l, F_SETFL, O_NONBLOCK));
	CT_ERR(syscall(SYS_accept, l, NULL, NULL), EAGAIN);
}

CT_TEST(accept, not_listening_einval)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(syscall(SYS_accept, s, NULL, NULL), EINVAL);
}

CT_TEST(accept, dgram_eopnotsupp)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CT_ERR(syscall(SYS_accept, s, NULL, NULL), EOPNOTSUPP);
}

CT_TEST(accept4, flags)
{
	int l = listener(SOCK_SEQPACKET, "srv");
	connector(SOCK_SEQPACKET, "srv");
	int a = CT_OK(accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
	CT_EQ(fcntl(a, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CT_EQ(fcntl(a, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
}

CT_TEST(accept4, bad_flags_einval)
{
	int l = listener(SOCK_STREAM, "srv");
	CT_ERR(accept4(l, NULL, NULL, 0x1), EINVAL);
}

CT_TEST(connect, no_listener_econnrefused)
{
	int l = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "bound");
	CT_OK(bind(l, (struct sockaddr *)&a, len));
	int c = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(connect(c, (struct sockaddr *)&a, len), ECONNREFUSED);
}

CT_TEST(connect, abstract)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, "conn");
	int l = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(bind(l, (struct sockaddr *)&a, len));
	CT_OK(listen(l, 1));
	int c = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(connect(c, (struct sockaddr *)&a, len));
	CT_OK(accept(l, NULL, NULL));
}

CT_TEST(connect, efault)
{
	int c = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(connect(c, (struct sockaddr *)8, sizeof(struct sockaddr_un)), EFAULT);
}

CT_TEST(connect, type_mismatch_eprototype)
{
	listener(SOCK_DGRAM, "d");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "d");
	int c = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(connect(c, (struct sockaddr *)&a, len), EPROTOTYPE);
}

CT_TEST(connect, from_forked_child)
{
	int l = listener(SOCK_STREAM, "srv");
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sockaddr_un a;
		socklen_t len = path_addr(&a, "srv");
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, len) < 0)
			_exit(1);
		_exit(write(c, "kid", 3) == 3 ? 0 : 1);
	}
	int a = CT_OK(accept(l, NULL, NULL));
	char buf[4] = {0};
	CT_EQ(read(a, buf, 3), 3);
	CT_STREQ(buf, "kid");
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Fill the backlog of listener path "srv" with non-blocking connects; returns how many. */
static int fill_backlog(void)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "srv");
	for (int n = 0; n < 64; n++) {
		int c = CT_OK(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
		if (connect(c, (struct sockaddr *)&a, len) < 0) {
			CT_EQ(errno, EAGAIN);
			close(c);
			return n;
		}
	}
	CT_FAIL("no backlog limit in 64 connects");
}

static volatile sig_atomic_t connect_alarms;

static void connect_on_alarm(int sig)
{
	(void)sig;
	connect_alarms++;
}

/* A blocking connect to "srv" (or a datagram to "dsrv") in a child: its errno (0 on success) as
 * exit code. timeout_ms: SO_SNDTIMEO (0 for none); sa_flags: with an alarm after 200 ms handled
 * that way (-1: no alarm). */
static pid_t waiting_child(bool dgram, int timeout_ms, int sa_flags)
{
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sockaddr_un a;
		socklen_t len = path_addr(&a, dgram ? "dsrv" : "srv");
		int c = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);
		struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
		if (timeout_ms && setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
			_exit(100);
		if (sa_flags >= 0) {
			struct sigaction sa = {.sa_handler = connect_on_alarm,
			                       .sa_flags = sa_flags};
			sigemptyset(&sa.sa_mask);
			sigaction(SIGALRM, &sa, NULL);
			ualarm(200 * 1000, 0);
		}
		long r = dgram ? sendto(c, "d", 1, 0, (struct sockaddr *)&a, len)
		               : connect(c, (struct sockaddr *)&a, len);
		_exit(r >= 0 ? 0 : errno);
	}
	return pid;
}

/* A blocking connect to a listener whose backlog is full waits for room: it connects once the
 * server accepts, runs out at SO_SNDTIMEO (EAGAIN), and a signal ends it as Linux's waits end
 * (EINTR for a handler without SA_RESTART). A non-blocking one says EAGAIN at once. */
CT_TEST(connect, backlog_full_waits)
{
	int l = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	CT_OK(bind(l, (struct sockaddr *)&a, path_addr(&a, "srv")));
	CT_OK(listen(l, 0));
	CT_TRUE(fill_backlog() >= 1);
	CT_EQ(ct_exit_code(waiting_child(false, 300, -1)), EAGAIN);
	CT_EQ(ct_exit_code(waiting_child(false, 0, 0)), EINTR);
	pid_t pid = waiting_child(false, 0, -1);
	usleep(300 * 1000);           /* it waits... */
	CT_OK(accept(l, NULL, NULL)); /* ...until there is room */
	CT_EQ(ct_exit_code(pid), 0);
}

/* A datagram to a receiver whose queue is full waits for room, as a connect does for a backlog
 * (above); MSG_DONTWAIT says EAGAIN at once. */
CT_TEST(sendto, dgram_queue_full_waits)
{
	int r = listener(SOCK_DGRAM, "dsrv");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "dsrv");
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	int sent = 0;
	while (sent < 100000 && sendto(s, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&a, len) == 1)
		sent++;
	CT_EQ(errno, EAGAIN);
	CT_TRUE(sent >= 1);
	CT_EQ(ct_exit_code(waiting_child(true, 300, -1)), EAGAIN);
	pid_t pid = waiting_child(true, 0, -1);
	usleep(300 * 1000); /* it waits... */
	char c;
	CT_EQ(recv(r, &c, 1, 0), 1); /* ...until there is room */
	CT_EQ(ct_exit_code(pid), 0);
}

/* ---- names ---- */

CT_TEST(getsockname, pathname)
{
	int s = listener(SOCK_STREAM, "named");
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	CT_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CT_EQ(a.sun_family, AF_UNIX);
	CT_STREQ(a.sun_path, "named");
}

CT_TEST(getsockname, unbound_family_only)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	CT_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CT_EQ(len, sizeof(sa_family_t));
}

CT_TEST(getsockname, file_enotsock)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	CT_ERR(getsockname(fd, (struct sockaddr *)&a, &len), ENOTSOCK);
}

CT_TEST(getpeername, connected_and_not)
{
	int l = listener(SOCK_STREAM, "peer");
	int c = connector(SOCK_STREAM, "peer");
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	CT_OK(getpeername(c, (struct sockaddr *)&a, &len));
	CT_STREQ(a.sun_path, "peer");
	len = sizeof(a);
	CT_ERR(getpeername(l, (struct sockaddr *)&a, &len), ENOTCONN);
}

CT_TEST(getpeername, abstract)
{
	struct sockaddr_un a, p;
	socklen_t len = abstract_addr(&a, "gp");
	int l = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(bind(l, (struct sockaddr *)&a, len));
	CT_OK(listen(l, 1));
	int c = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_OK(connect(c, (struct sockaddr *)&a, len));
	socklen_t plen = sizeof(p);
	CT_OK(getpeername(c, (struct sockaddr *)&p, &plen));
	CT_EQ(plen, len);
	CT_EQ(p.sun_path[0], 0);
	CT_TRUE(memcmp(p.sun_path, a.sun_path, len - offsetof(struct sockaddr_un, sun_path)) == 0);
}

/* ---- shutdown / options ---- */

CT_TEST(shutdown, wr_gives_peer_eof)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_OK(shutdown(sv[0], SHUT_WR));
	char c;
	CT_EQ(read(sv[1], &c, 1), 0);
	CT_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	/* The other direction still works. */
	CT_EQ(write(sv[1], "y", 1), 1);
	CT_EQ(read(sv[0], &c, 1), 1);
}

CT_TEST(shutdown, bad_how_einval)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_ERR(shutdown(sv[0], 7), EINVAL);
}

CT_TEST(shutdown, file_enotsock_bad_fd_ebadf)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	CT_ERR(shutdown(fd, SHUT_RDWR), ENOTSOCK);
	CT_ERR(shutdown(999, SHUT_RDWR), EBADF);
}

CT_TEST(getsockopt, so_peercred)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct ucred cr;
	socklen_t len = sizeof(cr);
	CT_OK(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cr, &len));
	CT_EQ(len, sizeof(cr));
	CT_EQ(cr.pid, getpid());
	CT_EQ(cr.uid, geteuid());
	CT_EQ(cr.gid, getegid());
}

CT_TEST(getsockopt, so_type_domain_acceptconn)
{
	int l = listener(SOCK_SEQPACKET, "l");
	int v;
	socklen_t len = sizeof(v);
	CT_OK(getsockopt(l, SOL_SOCKET, SO_TYPE, &v, &len));
	CT_EQ(v, SOCK_SEQPACKET);
	CT_OK(getsockopt(l, SOL_SOCKET, SO_DOMAIN, &v, &len));
	CT_EQ(v, AF_UNIX);
	CT_OK(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len));
	CT_EQ(v, 1);
}

CT_TEST(getsockopt, so_error_and_bad_level)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = -1;
	socklen_t len = sizeof(v);
	CT_OK(getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &len));
	CT_EQ(v, 0);
	CT_ERR(getsockopt(s, SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT);
}

CT_TEST(setsockopt, sndbuf_roundtrip)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	int v = 16384;
	CT_OK(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	int got = 0;
	socklen_t len = sizeof(got);
	CT_OK(getsockopt(s, SOL_SOCKET, SO_SNDBUF, &got, &len));
	CT_EQ(got, 2 * v); /* Linux doubles the value for bookkeeping */
}

CT_TEST(setsockopt, short_optlen_einval)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	char v = 1;
	CT_ERR(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &v, 1), EINVAL);
}

CT_TEST(setsockopt, file_enotsock)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	int v = 1;
	CT_ERR(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &v, sizeof(v)), ENOTSOCK);
}

CT_TEST(setsockopt, rcvtimeo)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct timeval tv = {0, 10000};
	CT_OK(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	char c;
	CT_ERR(recv(sv[1], &c, 1, 0), EAGAIN);
}
