#pragma once
/* Passing fds over unix sockets (SCM_RIGHTS), one message at a time. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CBOX_FDPASS_MAX 8

/* Send len bytes of data and nfds (<= CBOX_FDPASS_MAX) fds as one message; retried on EINTR,
 * never raises SIGPIPE. Returns 0, or -errno (-EMSGSIZE for a short send). */
int cbox_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds);

/* Receive one message into buf (size bytes) and at most maxfds fds, close-on-exec, into fds
 * (*nfds: how many); fds past maxfds are closed. flags: recvmsg's (MSG_DONTWAIT...). Returns
 * the message's length, 0 at EOF, or -errno: -EBADMSG when the data or the fds were truncated
 * (the fds received are then closed and *nfds is 0). */
ssize_t cbox_recv_fds(int sock, void *buf, size_t size, int *fds, int maxfds, int *nfds, int flags);

/* recvmsg(2) that first tries for a while: up to tries attempts with MSG_DONTWAIT (yielding
 * the CPU between them), then a blocking one (EINTR retried). For request/reply channels whose
 * peer answers within microseconds: see the comment in fdpass.c. The msghdr is as recvmsg's;
 * its msg_controllen is restored before each attempt. */
struct msghdr;
ssize_t cbox_recvmsg_spin(int sock, struct msghdr *mh, int flags, unsigned tries);

/* Whether the waits that try before they sleep may do so (cbox_recvmsg_spin, and the ptrace
 * platform's waits for a stop): false when CBOX_NO_SPIN is set, to compare. */
bool cbox_spin_allowed(void);

/* One more try of a spin: false (sleep instead) when spinning is off, after max_tries, or once
 * the spin has lasted too long (fdpass.c says why); else it yields the CPU and says go on. Start
 * each wait with a zeroed struct cbox_spin. */
struct cbox_spin {
	unsigned tries;
	uint64_t start_ns;
};
bool cbox_spin_again(struct cbox_spin *sp, unsigned max_tries);
