/* Passing fds over unix sockets (see cbox/fdpass.h). */
#include "cbox/fdpass.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
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

/*
 * The sentry and the gofer talk in bursts of request and reply (a walk is one per path
 * component). A blocking recvmsg puts the caller to sleep, and the peer's answer must wake
 * it, often on the other CPU: on this nested 2-CPU VM that hand-off made a gofer round trip
 * 35-60 us. Trying again for a few tens of microseconds first usually finds the answer
 * without either side sleeping: python3 -c pass spent 5.8 ms waiting for the gofer (median of
 * 12 runs) without this and 3.5 ms with 64 tries, and its run went from 26.8 to 21.9 ms
 * (medians of 15, interleaved). Each try yields the CPU, so a runnable task (another guest
 * process) is not held up by the wait; an idle channel costs nothing, as nobody waits on it.
 * gVisor's flipcall channel spins before it sleeps for the same reason. CBOX_NO_SPIN=1 turns
 * it off, to compare.
 */
bool cbox_spin_allowed(void)
{
	static int allowed = -1;
	if (allowed < 0)
		allowed = getenv("CBOX_NO_SPIN") == NULL;
	return allowed;
}

ssize_t cbox_recvmsg_spin(int sock, struct msghdr *mh, int flags, unsigned tries)
{
	bool off = !cbox_spin_allowed();
	size_t ctl = mh->msg_controllen;
	for (unsigned i = 0; !off && i < tries; i++) {
		mh->msg_controllen = ctl;
		ssize_t n = recvmsg(sock, mh, flags | MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
		sched_yield();
	}
	mh->msg_controllen = ctl;
	ssize_t n;
	do
		n = recvmsg(sock, mh, flags);
	while (n < 0 && errno == EINTR);
	return n;
}
