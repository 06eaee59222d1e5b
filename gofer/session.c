/*
 * The gofer's session: one request packet at a time from the socket (an fd only on the requests
 * that carry one), checked by cbox_gofer_decode_request(), answered by the handlers (serve.c),
 * the reply and any fd sent back; the server's fid table is made and freed here.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/fdpass.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "internal.h"

/* Send r (and fd, when >= 0). Returns 1, or 0 when the peer is gone. */
static int send_reply(struct cbox_gofer_server *s, const struct cbox_gofer_reply *r, int fd)
{
	unsigned char *buf = s->replybuf;
	int len = cbox_gofer_encode_reply(r, buf, CBOX_GOFER_MSG_MAX);
	if (len < 0) {
		cbox_error("gofer: cannot encode the reply to tag %u: %s", r->tag, strerror(-len));
		return 0;
	}
	int e = cbox_send_fds(s->sock, buf, (size_t)len, &fd, fd >= 0 ? 1 : 0);
	if (e < 0) {
		cbox_debug("gofer: send reply: %s: ending the session", strerror(-e));
		return 0;
	}
	return 1;
}

/* One line naming what is wrong with a packet the decoder refused. */
static void log_malformed(const unsigned char *buf, size_t len)
{
	struct cbox_gofer_hdr h;
	if (len < sizeof(h)) {
		cbox_error("gofer: malformed request: %zu bytes, shorter than the header", len);
		return;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.len != len)
		cbox_error("gofer: malformed request: header length %u, packet length %zu", h.len,
		           len);
	else if (h.type < CBOX_GOFER_WALK || h.type > CBOX_GOFER_TYPE_MAX)
		cbox_error("gofer: malformed request: unknown type %u", h.type);
	else
		cbox_error("gofer: malformed request of type %u (tag %u): body of the wrong length "
		           "or an invalid name or field",
		           h.type, h.tag);
}

/*
 * The fds a request carried: none, one or two SCM_RIGHTS fds (the second only beside a SENDTO's
 * socket: its datagram's memfd), into *fd and *fd2 in order. Every fd received is taken or
 * closed, so that whatever the peer attaches never lingers in the gofer. Returns 0, or -1 when the
 * control data was truncated or held more than two fds or anything but SCM_RIGHTS.
 */
static int take_in_fds(struct msghdr *mh, int *fd, int *fd2)
{
	int rc = (mh->msg_flags & MSG_CTRUNC) ? -1 : 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			rc = -1;
			continue;
		}
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0) {
				*fd = f;
			} else if (*fd2 < 0) {
				*fd2 = f;
			} else {
				close(f);
				rc = -1;
			}
		}
	}
	return rc;
}

/* Receive one packet into buf and the fds it carried into *fd and *fd2. Returns its length, 0 at
 * the end of the session, -1 after an error (logged). */
static ssize_t recv_request(struct cbox_gofer_server *s, unsigned char *buf, int *fd, int *fd2)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = CBOX_GOFER_MSG_MAX};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = ctl.buf,
	                    .msg_controllen = sizeof(ctl)};
	ssize_t n;
	/* It waits at once, never spinning. Pinned to the sentry's CPU (follow_cpu, seccomp), a
	 * spin would only take the CPU the sentry needs. Under ptrace (no CPU hint) it spun 64
	 * yields, and beside two busy processes on this 2-CPU VM each yield gave a whole slice
	 * away: 1000 creates under --platform=ptrace took 4-7.5 s where they took 0.3 s without
	 * that spin, which, unloaded, made no difference (1000 creates 0.17 s either way; python3
	 * -c "import json, sqlite3" 71-73 ms against 71-72, medians of 7, interleaved). */
	n = cbox_recvmsg_spin(s->sock, &mh, MSG_CMSG_CLOEXEC, 0);
	if (n < 0 && (errno == ECONNRESET || errno == EPIPE))
		return 0;
	if (n < 0) {
		cbox_error("gofer: receive request: %s", strerror(errno));
		return -1;
	}
	int fdrc = take_in_fds(&mh, fd, fd2);
	if (n == 0)
		return 0;
	if (mh.msg_flags & MSG_TRUNC) {
		cbox_error("gofer: malformed request: longer than %u bytes", CBOX_GOFER_MSG_MAX);
		return -1;
	}
	if (fdrc < 0) {
		cbox_error("gofer: malformed request: ancillary data beyond two file descriptors");
		return -1;
	}
	return n;
}

/*
 * Wait for requests on the CPU the sentry sends them from (the request's hint). A gofer asleep
 * on another CPU is woken by an inter-processor interrupt, which on the nested 2-CPU VM this was
 * measured on made a blocking round trip 39-61 us against 8 us on one CPU (a socket ping-pong);
 * spinning before sleeping hides it only while requests come close together, and burns the
 * other CPU meanwhile. The sentry waits for each reply, so the two never need two CPUs at once:
 * python3 -c "import json, sqlite3" spent 5.1 ms a run in gofer round trips and 4.0 ms pinned,
 * and took 37.5 -> 36.2 ms (medians of 60, interleaved) with 41.5 -> 34.5 ms of CPU time; du -s
 * of 2000 files 54.8 -> 53.6 ms. The sentry sends the hint on the seccomp platform only (see
 * cbox_gofer_client_hint_cpu). The hint is the sentry's word, so any value is harmless: one
 * past CPU_SETSIZE is ignored, a CPU the gofer may not use fails and changes nothing, and the
 * gofer's seccomp filter lets it set no affinity but its own.
 */
static void follow_cpu(struct cbox_gofer_server *s, uint32_t cpu)
{
	if (cpu == 0 || cpu == s->cpu || cpu > CPU_SETSIZE)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu - 1, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		s->cpu = cpu;
}

int cbox_gofer_serve_one(struct cbox_gofer_server *s)
{
	unsigned char *buf = s->reqbuf;
	char target[CBOX_GOFER_TARGET_MAX + 1];
	CBOX_AUTOCLOSE int in_fd = -1;
	CBOX_AUTOCLOSE int in_fd2 = -1;
	ssize_t n = recv_request(s, buf, &in_fd, &in_fd2);
	if (n <= 0)
		return (int)n;
	struct cbox_gofer_req q;
	if (cbox_gofer_decode_request(buf, (size_t)n, &q) < 0) {
		log_malformed(buf, (size_t)n);
		return -1;
	}
	/* Only BIND, CONNECT, SENDTO and INOTIFY carry an fd (the guest's socket, its inotify
	 * instance), and they always do, and a SENDTO whose datagram is in a memfd carries that
	 * second: an fd on any other request (or a second one anywhere else) is refused as it
	 * always was, and never lands in the gofer's table. */
	bool wants_fd = q.type == CBOX_GOFER_BIND || q.type == CBOX_GOFER_CONNECT ||
	                q.type == CBOX_GOFER_SENDTO || q.type == CBOX_GOFER_INOTIFY;
	bool wants_fd2 = q.type == CBOX_GOFER_SENDTO && (q.flags & CBOX_GOFER_SENDTO_MEMFD);
	if (wants_fd != (in_fd >= 0) || wants_fd2 != (in_fd2 >= 0)) {
		cbox_error("gofer: malformed request of type %u (tag %u): %s", q.type, q.tag,
		           wants_fd2 ? "a SENDTO from a memfd without its socket and memfd"
		           : in_fd2 >= 0 || (!wants_fd && in_fd >= 0)
		               ? "carries ancillary data (file descriptors)"
		               : "BIND, CONNECT, SENDTO or INOTIFY without its fd");
		return -1;
	}
	follow_cpu(s, q.cpu);
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | q.type, .tag = q.tag};
	CBOX_AUTOCLOSE int fd = -1;
	int rc = cbox_gofer_handle(s, &q, &r, &fd, target, sizeof(target), in_fd, in_fd2);
	if (rc < 0)
		r = (struct cbox_gofer_reply){
		    .type = CBOX_GOFER_REPLY_ERROR, .tag = q.tag, .error = -rc};
	return send_reply(s, &r, fd);
}

struct cbox_gofer_server *cbox_gofer_server_new(int sock, int root_fd, bool readonly)
{
	CBOX_AUTOCLOSE int fd = root_fd;
	struct stat st;
	uint64_t mnt_id;
	int e = cbox_gofer_stat_node(fd, &st, &mnt_id);
	if (e < 0) {
		errno = -e;
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return NULL;
	}
	struct cbox_gofer_server *s = calloc(1, sizeof(*s));
	struct cbox_gofer_node *root = calloc(1, sizeof(*root) + 1);
	if (s) {
		s->fids = calloc(64, sizeof(*s->fids));
		s->xbuf = malloc(CBOX_GOFER_XVALUE_MAX);
		s->reqbuf = malloc(CBOX_GOFER_MSG_MAX);
		s->replybuf = malloc(CBOX_GOFER_MSG_MAX);
	}
	if (!s || !root || !s->fids || !s->xbuf || !s->reqbuf || !s->replybuf) {
		if (s) {
			free(s->fids);
			free(s->xbuf);
			free(s->reqbuf);
			free(s->replybuf);
		}
		free(s);
		free(root);
		errno = ENOMEM;
		return NULL;
	}
	*root = (struct cbox_gofer_node){.fd = cbox_steal_fd(&fd),
	                                 .refs = 1,
	                                 .dev = st.st_dev,
	                                 .ino = st.st_ino,
	                                 .mode = st.st_mode,
	                                 .mnt_id = mnt_id,
	                                 .ro = -1};
	s->fids[CBOX_GOFER_ROOT_FID] = root;
	s->cap = 64;
	s->hint = 1;
	s->wd_fd = -1;
	s->view_fd = -1;
	s->sock = sock;
	s->readonly = readonly;
	return s;
}

void cbox_gofer_server_free(struct cbox_gofer_server *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; i < s->cap; i++)
		cbox_gofer_node_unref(s->fids[i]);
	if (s->wd_fd >= 0)
		close(s->wd_fd);
	if (s->view_fd >= 0)
		close(s->view_fd);
	cbox_gofer_node_unref(s->wd_node);
	free(s->fids);
	free(s->xbuf);
	free(s->reqbuf);
	free(s->replybuf);
	free(s);
}

int cbox_gofer_serve_view(int sock, int root_fd, int view_fd, bool readonly)
{
	struct cbox_gofer_server *s = cbox_gofer_server_new(sock, root_fd, readonly);
	if (s == NULL) {
		cbox_error("gofer: cannot start serving: %s", strerror(errno));
		if (view_fd >= 0)
			close(view_fd);
		return -1;
	}
	s->view_fd = view_fd;
	int rc;
	while ((rc = cbox_gofer_serve_one(s)) > 0)
		;
	cbox_gofer_server_free(s);
	return rc < 0 ? -1 : 0;
}

int cbox_gofer_serve(int sock, int root_fd, bool readonly)
{
	return cbox_gofer_serve_view(sock, root_fd, -1, readonly);
}
