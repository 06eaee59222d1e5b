/*
 * AF_INET / AF_INET6 sockets on loopback only: TCP and UDP, ports, options, errors.
 */
#include "compat_test.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sockaddr_in lo4(unsigned short port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* Bind a socket of the given type to 127.0.0.1:0 and return its port in *port. */
static int bound4(int type, unsigned short *port)
{
	int s = CT_OK(socket(AF_INET, type, 0));
	struct sockaddr_in a = lo4(0);
	CT_OK(bind(s, (struct sockaddr *)&a, sizeof(a)));
	socklen_t len = sizeof(a);
	CT_OK(getsockname(s, (struct sockaddr *)&a, &len));
	*port = ntohs(a.sin_port);
	return s;
}

static int tcp_listener(unsigned short *port)
{
	int s = bound4(SOCK_STREAM, port);
	CT_OK(listen(s, 8));
	return s;
}

static int tcp_connect(unsigned short port)
{
	int c = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = lo4(port);
	CT_OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
	return c;
}

/* A port that nothing listens on: bound (so nobody else takes it) but not listening. */
static int closed_port(unsigned short *port)
{
	return bound4(SOCK_STREAM, port);
}

CT_TEST(socket, inet_stream_dgram)
{
	CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	CT_OK(socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP));
	CT_OK(socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
}

CT_TEST(socket, inet_wrong_protocol)
{
	CT_ERR(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
}

CT_TEST(bind, inet_port_zero_assigns)
{
	unsigned short port;
	bound4(SOCK_STREAM, &port);
	CT_TRUE(port != 0);
}

CT_TEST(bind, inet_eaddrinuse)
{
	unsigned short port;
	tcp_listener(&port);
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = lo4(port);
	CT_ERR(bind(s, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
}

CT_TEST(bind, inet_short_len_einval)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = lo4(0);
	CT_ERR(bind(s, (struct sockaddr *)&a, 4), EINVAL);
}

CT_TEST(bind, inet_nonlocal_eaddrnotavail)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = inet_addr("192.0.2.1"); /* TEST-NET-1: never local */
	CT_ERR(bind(s, (struct sockaddr *)&a, sizeof(a)), EADDRNOTAVAIL);
}

CT_TEST(bind, inet6_loopback)
{
	int s = CT_OK(socket(AF_INET6, SOCK_STREAM, 0));
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == EADDRNOTAVAIL)
		ct_skip("no IPv6 loopback address here");
	socklen_t len = sizeof(a);
	CT_OK(getsockname(s, (struct sockaddr *)&a, &len));
	CT_TRUE(a.sin6_port != 0);
	CT_OK(listen(s, 1));
	int c = CT_OK(socket(AF_INET6, SOCK_STREAM, 0));
	CT_OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
	CT_OK(accept(s, NULL, NULL));
}

CT_TEST(setsockopt, so_reuseaddr_udp_shared_port)
{
	/* UDP sockets that all set SO_REUSEADDR may share a port; one without it may not. */
	int on = 1;
	int s1 = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	CT_OK(setsockopt(s1, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
	struct sockaddr_in a = lo4(0);
	CT_OK(bind(s1, (struct sockaddr *)&a, sizeof(a)));
	socklen_t len = sizeof(a);
	CT_OK(getsockname(s1, (struct sockaddr *)&a, &len));
	int s3 = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	CT_ERR(bind(s3, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
	int s2 = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	CT_OK(setsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
	CT_OK(bind(s2, (struct sockaddr *)&a, sizeof(a)));
	int v = 0;
	len = sizeof(v);
	CT_OK(getsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &v, &len));
	CT_EQ(v, 1);
}

CT_TEST(setsockopt, tcp_nodelay)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	int on = 1, v = 0;
	socklen_t len = sizeof(v);
	CT_OK(getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	CT_EQ(v, 0);
	CT_OK(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)));
	CT_OK(getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	CT_TRUE(v != 0);
}

CT_TEST(setsockopt, tcp_option_on_udp_enoprotoopt)
{
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int on = 1;
	CT_ERR(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)), ENOPROTOOPT);
}

CT_TEST(setsockopt, efault)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	CT_ERR(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, (void *)8, sizeof(int)), EFAULT);
}

CT_TEST(getsockopt, so_type_and_keepalive)
{
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	int v;
	socklen_t len = sizeof(v);
	CT_OK(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len));
	CT_EQ(v, SOCK_DGRAM);
	int t = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	int on = 1;
	CT_OK(setsockopt(t, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)));
	CT_OK(getsockopt(t, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	CT_EQ(v, 1);
}

CT_TEST(getsockopt, bad_len_einval)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	int v;
	socklen_t len = (socklen_t)-1;
	CT_ERR(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), EINVAL);
}

CT_TEST(listen, inet_backlog_and_accept)
{
	unsigned short port;
	int l = tcp_listener(&port);
	int c = tcp_connect(port);
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	int a = CT_OK(accept(l, (struct sockaddr *)&peer, &len));
	CT_EQ(len, sizeof(peer));
	CT_EQ(ntohl(peer.sin_addr.s_addr), INADDR_LOOPBACK);
	CT_EQ(write(c, "tcp", 3), 3);
	char buf[4];
	CT_EQ(read(a, buf, sizeof(buf)), 3);
}

CT_TEST(accept, inet_nonblock_eagain)
{
	unsigned short port;
	int l = tcp_listener(&port);
	CT_OK(fcntl(l, F_SETFL, O_NONBLOCK));
	CT_ERR(syscall(SYS_accept, l, NULL, NULL), EAGAIN);
}

CT_TEST(accept4, inet_cloexec_and_addr)
{
	unsigned short port;
	int l = tcp_listener(&port);
	int c = tcp_connect(port);
	struct sockaddr_in peer, local;
	socklen_t len = sizeof(peer), llen = sizeof(local);
	int a = CT_OK(accept4(l, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC));
	CT_EQ(fcntl(a, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CT_OK(getsockname(c, (struct sockaddr *)&local, &llen));
	CT_EQ(peer.sin_port, local.sin_port);
}

CT_TEST(connect, inet_econnrefused)
{
	unsigned short port;
	closed_port(&port);
	int c = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in a = lo4(port);
	CT_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
}

CT_TEST(connect, inet_nonblock_einprogress_then_ok)
{
	unsigned short port;
	int l = tcp_listener(&port);
	int c = CT_OK(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
	struct sockaddr_in a = lo4(port);
	errno = 0;
	int r = connect(c, (struct sockaddr *)&a, sizeof(a));
	CT_TRUE(r == 0 || errno == EINPROGRESS);
	struct pollfd p = {c, POLLOUT, 0};
	CT_EQ(poll(&p, 1, 2000), 1);
	int err = -1;
	socklen_t len = sizeof(err);
	CT_OK(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len));
	CT_EQ(err, 0);
	CT_OK(accept(l, NULL, NULL));
}

CT_TEST(connect, inet_already_connected_eisconn)
{
	unsigned short port;
	tcp_listener(&port);
	int c = tcp_connect(port);
	struct sockaddr_in a = lo4(port);
	CT_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EISCONN);
}

CT_TEST(connect, inet_wrong_family_eafnosupport)
{
	int c = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	struct sockaddr_in6 a = {
	    .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT, .sin6_port = htons(9)};
	CT_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EAFNOSUPPORT);
}

CT_TEST(getsockname, inet_ephemeral_after_connect)
{
	unsigned short port;
	tcp_listener(&port);
	int c = tcp_connect(port);
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	CT_OK(getsockname(c, (struct sockaddr *)&a, &len));
	CT_EQ(ntohl(a.sin_addr.s_addr), INADDR_LOOPBACK);
	CT_TRUE(a.sin_port != 0 && ntohs(a.sin_port) != port);
}

CT_TEST(getpeername, inet_port)
{
	unsigned short port;
	tcp_listener(&port);
	int c = tcp_connect(port);
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	CT_OK(getpeername(c, (struct sockaddr *)&a, &len));
	CT_EQ(ntohs(a.sin_port), port);
	int u = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	len = sizeof(a);
	CT_ERR(getpeername(u, (struct sockaddr *)&a, &len), ENOTCONN);
}

CT_TEST(sendto, udp_loopback)
{
	unsigned short rport, sport;
	int r = bound4(SOCK_DGRAM, &rport);
	int s = bound4(SOCK_DGRAM, &sport);
	struct sockaddr_in to = lo4(rport), from;
	CT_EQ(sendto(s, "udp!", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
	char buf[8];
	socklen_t len = sizeof(from);
	CT_EQ(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len), 4);
	CT_EQ(ntohs(from.sin_port), sport);
}

CT_TEST(sendto, udp_no_dest_edestaddrreq)
{
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	CT_ERR(sendto(s, "x", 1, 0, NULL, 0), EDESTADDRREQ);
}

CT_TEST(sendto, udp_too_big_emsgsize)
{
	unsigned short rport;
	bound4(SOCK_DGRAM, &rport);
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	static char big[70000];
	struct sockaddr_in to = lo4(rport);
	CT_ERR(sendto(s, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to)), EMSGSIZE);
}

CT_TEST(recvfrom, udp_connected_refused)
{
	unsigned short port;
	int r = bound4(SOCK_DGRAM, &port);
	close(r); /* nobody there any more: the ICMP error comes back to a connected socket */
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(port);
	CT_OK(connect(s, (struct sockaddr *)&to, sizeof(to)));
	CT_EQ(send(s, "x", 1, 0), 1);
	char c;
	struct pollfd p = {s, POLLIN, 0};
	poll(&p, 1, 1000);
	CT_ERR(recvfrom(s, &c, 1, 0, NULL, NULL), ECONNREFUSED);
}

CT_TEST(recvfrom, udp_truncates)
{
	unsigned short rport;
	int r = bound4(SOCK_DGRAM, &rport);
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(rport);
	CT_EQ(sendto(s, "abcdef", 6, 0, (struct sockaddr *)&to, sizeof(to)), 6);
	char buf[2];
	CT_EQ(recvfrom(r, buf, sizeof(buf), MSG_TRUNC, NULL, NULL), 6);
}

CT_TEST(sendmsg, udp_msghdr_name)
{
	unsigned short rport;
	int r = bound4(SOCK_DGRAM, &rport);
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(rport);
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	struct msghdr m = {
	    .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = iov, .msg_iovlen = 2};
	CT_EQ(sendmsg(s, &m, 0), 4);
	char buf[8];
	CT_EQ(recv(r, buf, sizeof(buf), 0), 4);
}

CT_TEST(recvmsg, udp_pktinfo)
{
	unsigned short rport;
	int r = bound4(SOCK_DGRAM, &rport);
	int on = 1;
	CT_OK(setsockopt(r, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on)));
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(rport);
	CT_EQ(sendto(s, "p", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	char c, cbuf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct iovec iov = {&c, 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	CT_EQ(recvmsg(r, &m, 0), 1);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	CT_TRUE(cm && cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO);
	struct in_pktinfo pi;
	memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
	CT_EQ(ntohl(pi.ipi_addr.s_addr), INADDR_LOOPBACK);
}

CT_TEST(sendmmsg, udp_batch)
{
	unsigned short rport;
	int r = bound4(SOCK_DGRAM, &rport);
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(rport);
	CT_OK(connect(s, (struct sockaddr *)&to, sizeof(to)));
	struct iovec a = {"1", 1}, b = {"22", 2};
	struct mmsghdr m[2] = {{.msg_hdr = {.msg_iov = &a, .msg_iovlen = 1}},
	                       {.msg_hdr = {.msg_iov = &b, .msg_iovlen = 1}}};
	CT_EQ(sendmmsg(s, m, 2, 0), 2);
	char buf[4];
	CT_EQ(recv(r, buf, sizeof(buf), 0), 1);
	CT_EQ(recv(r, buf, sizeof(buf), 0), 2);
}

CT_TEST(recvmmsg, udp_timeout_partial)
{
	unsigned short rport;
	int r = bound4(SOCK_DGRAM, &rport);
	int s = CT_OK(socket(AF_INET, SOCK_DGRAM, 0));
	struct sockaddr_in to = lo4(rport);
	CT_EQ(sendto(s, "one", 3, 0, (struct sockaddr *)&to, sizeof(to)), 3);
	char b1[8], b2[8];
	struct iovec i1 = {b1, 8}, i2 = {b2, 8};
	struct mmsghdr m[2] = {{.msg_hdr = {.msg_iov = &i1, .msg_iovlen = 1}},
	                       {.msg_hdr = {.msg_iov = &i2, .msg_iovlen = 1}}};
	CT_EQ(recvmmsg(r, m, 2, MSG_DONTWAIT, NULL), 1);
	CT_EQ(m[0].msg_len, 3);
}

CT_TEST(shutdown, inet_rd_then_read_eof)
{
	unsigned short port;
	int l = tcp_listener(&port);
	int c = tcp_connect(port);
	int a = CT_OK(accept(l, NULL, NULL));
	CT_OK(shutdown(a, SHUT_WR));
	char ch;
	CT_EQ(read(c, &ch, 1), 0);
	CT_ERR(shutdown(l + 1000, SHUT_RD), EBADF);
}

CT_TEST(shutdown, inet_unconnected_enotconn)
{
	int s = CT_OK(socket(AF_INET, SOCK_STREAM, 0));
	CT_ERR(shutdown(s, SHUT_RDWR), ENOTCONN);
}

CT_TEST(sendto, tcp_peer_reset_epipe)
{
	unsigned short port;
	int l = tcp_listener(&port);
	int c = tcp_connect(port);
	int a = CT_OK(accept(l, NULL, NULL));
	close(a);
	CT_OK(shutdown(c, SHUT_WR));
	CT_ERR(sendto(c, "x", 1, MSG_NOSIGNAL, NULL, 0), EPIPE);
}
