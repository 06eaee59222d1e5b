/* Passing fds over unix sockets (see cbox/fdpass.h). */
#include "cbox/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

union fd_cmsg {
	struct cmsghdr h;
	char b[CMSG_SPACE(CBOX_FDPASS_MAX * sizeof(int))];
};

int cbox_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds)
{
	if (nfds < 0 || nfds > CBOX_FDPASS_MAX)
		return -EINVAL;
	union fd_cmsg ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		msg.msg_control = ctl.b;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

ssize_t cbox_recv_fds(int sock, void *buf, size_t size, int *fds, int maxfds, int *nfds, int flags)
{
	union fd_cmsg ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl)};
	ssize_t n;
	*nfds = 0;
	do
		n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (*nfds < maxfds)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -EBADMSG;
	}
	return n;
}
