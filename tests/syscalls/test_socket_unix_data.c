/*
 * AF_UNIX data transfer: send/recv on each socket type, sendto/sendmsg/sendmmsg to a path,
 * recvfrom's sender address, ancillary data (SCM_RIGHTS, SCM_CREDENTIALS), batches.
 */
#include "compat_test.h"
#include "unix_addr.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

CT_TEST(sendto, dgram_to_path)
{
	int r = listener(SOCK_DGRAM, "rx");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "rx");
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CT_EQ(sendto(s, "dg", 2, 0, (struct sockaddr *)&a, len), 2);
	char buf[4];
	CT_EQ(recvfrom(r, buf, sizeof(buf), 0, NULL, NULL), 2);
}

/* sendmsg and sendmmsg with the path in msg_name (the sentry resolves it in the guest's tree). */
CT_TEST(sendmsg, dgram_to_path)
{
	int r = listener(SOCK_DGRAM, "rx");
	int s = listener(SOCK_DGRAM, "tx");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "rx");
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	struct msghdr m = {.msg_name = &a, .msg_namelen = len, .msg_iov = iov, .msg_iovlen = 2};
	CT_EQ(sendmsg(s, &m, 0), 4);
	char buf[8] = {0};
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	CT_EQ(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 4);
	CT_STREQ(buf, "abcd");
	CT_STREQ(from.sun_path, "tx");
	path_addr(&a, "nothere");
	CT_ERR(sendmsg(s, &m, 0), ENOENT);
	close(r);
	path_addr(&a, "rx");
	CT_ERR(sendmsg(s, &m, 0), ECONNREFUSED);
}

CT_TEST(sendmmsg, dgram_to_path)
{
	int r = listener(SOCK_DGRAM, "rx");
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "rx");
	struct iovec iov[2] = {{"one", 3}, {"three", 5}};
	struct mmsghdr v[2];
	memset(v, 0, sizeof(v));
	for (int i = 0; i < 2; i++)
		v[i].msg_hdr = (struct msghdr){
		    .msg_name = &a, .msg_namelen = len, .msg_iov = &iov[i], .msg_iovlen = 1};
	CT_EQ(sendmmsg(s, v, 2, 0), 2);
	CT_EQ(v[0].msg_len, 3);
	CT_EQ(v[1].msg_len, 5);
	char buf[8];
	CT_EQ(recv(r, buf, sizeof(buf), 0), 3);
	CT_EQ(recv(r, buf, sizeof(buf), 0), 5);
}

CT_TEST(sendto, dgram_no_receiver_econnrefused)
{
	int r = listener(SOCK_DGRAM, "rx");
	close(r);
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "rx");
	int s = CT_OK(socket(AF_UNIX, SOCK_DGRAM, 0));
	CT_ERR(sendto(s, "dg", 2, 0, (struct sockaddr *)&a, len), ECONNREFUSED);
}

CT_TEST(sendto, unconnected_stream_enotconn)
{
	int s = CT_OK(socket(AF_UNIX, SOCK_STREAM, 0));
	CT_ERR(sendto(s, "x", 1, 0, NULL, 0), ENOTCONN);
}

CT_TEST(recvfrom, sender_address)
{
	int r = listener(SOCK_DGRAM, "rx");
	int s = listener(SOCK_DGRAM, "tx");
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, "rx");
	CT_EQ(sendto(s, "q", 1, 0, (struct sockaddr *)&a, len), 1);
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	char c;
	CT_EQ(recvfrom(r, &c, 1, 0, (struct sockaddr *)&from, &flen), 1);
	CT_STREQ(from.sun_path, "tx");
}

CT_TEST(recvfrom, dontwait_eagain_and_peek)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	char buf[4];
	CT_ERR(recvfrom(sv[1], buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL), EAGAIN);
	CT_EQ(send(sv[0], "pk", 2, 0), 2);
	CT_EQ(recvfrom(sv[1], buf, sizeof(buf), MSG_PEEK, NULL, NULL), 2);
	CT_EQ(recvfrom(sv[1], buf, sizeof(buf), 0, NULL, NULL), 2);
}

/* A one-byte message with one SOL_SOCKET control message of type (SCM_RIGHTS,
 * SCM_CREDENTIALS) carrying len bytes of data (at most a struct ucred). */
static int send_cmsg(int sock, int type, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))] = {0};
	struct iovec iov = {"M", 1};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = cbuf,
	                   .msg_controllen = CMSG_SPACE(len)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return (int)sendmsg(sock, &m, 0);
}

static int send_fd(int sock, int fd)
{
	return send_cmsg(sock, SCM_RIGHTS, &fd, sizeof(fd));
}

CT_TEST(sendmsg, scm_rights)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	CT_EQ(write(fd, "content", 7), 7);
	CT_EQ(send_fd(sv[0], fd), 1);
	char cbuf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = {&c, 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	CT_EQ(recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC), 1);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	CT_TRUE(cm && cm->cmsg_type == SCM_RIGHTS);
	int got;
	memcpy(&got, CMSG_DATA(cm), sizeof(int));
	CT_TRUE(got != fd);
	CT_EQ(fcntl(got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	char buf[8] = {0};
	CT_EQ(pread(got, buf, 7, 0), 7);
	CT_STREQ(buf, "content");
}

CT_TEST(sendmsg, scm_rights_bad_fd_ebadf)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_ERR(send_fd(sv[0], 999), EBADF);
}

/* A one-byte message from sock and its SCM_CREDENTIALS into *got: 1, or -1 when either is
 * missing. */
static int recv_creds(int sock, struct ucred *got)
{
	char rbuf[CMSG_SPACE(sizeof(*got))], ch;
	struct iovec riov = {&ch, 1};
	struct msghdr r = {
	    .msg_iov = &riov, .msg_iovlen = 1, .msg_control = rbuf, .msg_controllen = sizeof(rbuf)};
	if (recvmsg(sock, &r, 0) != 1)
		return -1;
	struct cmsghdr *rc = CMSG_FIRSTHDR(&r);
	if (!rc || rc->cmsg_type != SCM_CREDENTIALS)
		return -1;
	memcpy(got, CMSG_DATA(rc), sizeof(*got));
	return 1;
}

CT_TEST(sendmsg, scm_credentials_own)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	int on = 1;
	CT_OK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	struct ucred cr = {getpid(), geteuid(), getegid()};
	CT_EQ(send_cmsg(sv[0], SCM_CREDENTIALS, &cr, sizeof(cr)), 1);
	struct ucred got;
	CT_EQ(recv_creds(sv[1], &got), 1);
	CT_EQ(got.pid, getpid());
	CT_EQ(got.uid, geteuid());
	CT_EQ(got.gid, getegid());
}

CT_TEST(sendmsg, gather_iov)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
	CT_EQ(sendmsg(sv[0], &m, 0), 4);
	char buf[4];
	CT_EQ(read(sv[1], buf, 4), 4);
	CT_TRUE(memcmp(buf, "abcd", 4) == 0);
}

CT_TEST(sendmsg, efault)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_ERR(sendmsg(sv[0], (struct msghdr *)8, 0), EFAULT);
}

CT_TEST(recvmsg, passcred_implicit)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	int on = 1;
	CT_OK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)));
	CT_EQ(send(sv[0], "x", 1, 0), 1);
	struct ucred got;
	CT_EQ(recv_creds(sv[1], &got), 1);
	CT_EQ(got.pid, getpid());
}

CT_TEST(recvmsg, ctrunc)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CT_EQ(send_fd(sv[0], 0), 1);
	char c;
	struct iovec iov = {&c, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	CT_EQ(recvmsg(sv[1], &m, 0), 1);
	CT_TRUE(m.msg_flags & MSG_CTRUNC);
}

CT_TEST(sendmmsg, two_datagrams)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	struct iovec a = {"one", 3}, b = {"three", 5};
	struct mmsghdr msgs[2] = {{.msg_hdr = {.msg_iov = &a, .msg_iovlen = 1}},
	                          {.msg_hdr = {.msg_iov = &b, .msg_iovlen = 1}}};
	CT_EQ(sendmmsg(sv[0], msgs, 2, 0), 2);
	CT_EQ(msgs[1].msg_len, 5);
	char buf[8];
	CT_EQ(recv(sv[1], buf, sizeof(buf), 0), 3);
	CT_EQ(recv(sv[1], buf, sizeof(buf), 0), 5);
}

CT_TEST(sendmmsg, file_enotsock)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	struct iovec a = {"x", 1};
	struct mmsghdr m = {.msg_hdr = {.msg_iov = &a, .msg_iovlen = 1}};
	CT_ERR(sendmmsg(fd, &m, 1, 0), ENOTSOCK);
}

CT_TEST(recvmmsg, batch)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	CT_EQ(send(sv[0], "a", 1, 0), 1);
	CT_EQ(send(sv[0], "bb", 2, 0), 2);
	char b1[4], b2[4], b3[4];
	struct iovec i1 = {b1, 4}, i2 = {b2, 4}, i3 = {b3, 4};
	struct mmsghdr m[3] = {{.msg_hdr = {.msg_iov = &i1, .msg_iovlen = 1}},
	                       {.msg_hdr = {.msg_iov = &i2, .msg_iovlen = 1}},
	                       {.msg_hdr = {.msg_iov = &i3, .msg_iovlen = 1}}};
	CT_EQ(recvmmsg(sv[1], m, 3, MSG_DONTWAIT, NULL), 2);
	CT_EQ(m[0].msg_len, 1);
	CT_EQ(m[1].msg_len, 2);
}

CT_TEST(recvmmsg, empty_dontwait_eagain)
{
	int sv[2];
	CT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	char b[4];
	struct iovec i = {b, 4};
	struct mmsghdr m = {.msg_hdr = {.msg_iov = &i, .msg_iovlen = 1}};
	CT_ERR(recvmmsg(sv[1], &m, 1, MSG_DONTWAIT, NULL), EAGAIN);
}
