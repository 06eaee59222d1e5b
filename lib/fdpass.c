/* Passing fds over unix sockets (see cbox/fdpass.h). */
#include "cbox/fdpass.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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

/*
 * A spin is bounded by time as well as by tries. A yield returns at once when nothing else
 * wants the CPU, but when another task does it runs that task's slice first: beside two busy
 * processes on this 2-CPU VM, a yield of the ptrace platform's sentry took 0.4 ms on average
 * and up to 7 ms (perf trace), and 64 of them per wait made 1000 creates under --platform=ptrace
 * take 7.5 s (0.17 s unloaded). Bounded, the same took 4-4.7 s; the rest was the gofer's own
 * spin, now gone (gofer/session.c). Once CBOX_SPIN_MAX_NS have gone the caller sleeps instead,
 * which a fast spin (64 yields of a few microseconds) never reaches.
 */
#define CBOX_SPIN_MAX_NS 150000ULL

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

bool cbox_spin_again(struct cbox_spin *sp, unsigned max_tries)
{
	if (!cbox_spin_allowed() || sp->tries >= max_tries)
		return false;
	uint64_t now = mono_ns();
	if (sp->tries++ == 0)
		sp->start_ns = now;
	else if (now - sp->start_ns > CBOX_SPIN_MAX_NS)
		return false;
	sched_yield();
	return true;
}

ssize_t cbox_recvmsg_spin(int sock, struct msghdr *mh, int flags, unsigned tries)
{
	size_t ctl = mh->msg_controllen;
	struct cbox_spin sp = {0};
	while (cbox_spin_again(&sp, tries)) {
		mh->msg_controllen = ctl;
		ssize_t n = recvmsg(sock, mh, flags | MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
	}
	mh->msg_controllen = ctl;
	ssize_t n;
	do
		n = recvmsg(sock, mh, flags);
	while (n < 0 && errno == EINTR);
	return n;
}
