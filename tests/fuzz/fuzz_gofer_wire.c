/*
 * Fuzz target for the gofer wire format and server. Each input is decoded as a request and as a
 * reply (a packet that decodes must re-encode to the same bytes), then sent as one packet to an
 * in-process server on a temp tree, once read-only and once writable, for one serve step. The
 * server must neither crash nor keep an fd once it is freed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "cbox/gofer_wire.h"
#include "cbox/log.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];
static int sv[2] = {-1, -1};

static void remove_root(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_gofer_wire: could not remove %s\n", root);
}

static void setup_once(void)
{
	if (sv[0] >= 0)
		return;
	char p[128];
	strcpy(root, "/tmp/cbox-fuzz-gofer-XXXXXX");
	if (!mkdtemp(root) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	atexit(remove_root);
	snprintf(p, sizeof(p), "%s/name", root);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "data", 4) != 4)
		abort();
	close(fd);
	snprintf(p, sizeof(p), "%s/dir", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/link", root);
	if (symlink("name", p) < 0)
		abort();
	/* Malformed inputs are logged by design; keep the fuzzer's output readable. */
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cbox_log_init(devnull, CBOX_LOG_TEXT, CBOX_LOG_ERROR, "fuzz");
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (d == NULL)
		abort();
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A decoded packet re-encodes to the same bytes (a reply's header pad is not kept; a request's
 * is its CPU hint). */
static void check_round_trip(const uint8_t *data, size_t size)
{
	static unsigned char buf[CBOX_GOFER_MSG_MAX];
	struct cbox_gofer_req q;
	struct cbox_gofer_reply r;
	int n = -1;
	bool request = false;
	if (cbox_gofer_decode_request(data, size, &q) == 0) {
		n = cbox_gofer_encode_request(&q, buf, sizeof(buf));
		request = true;
	} else if (cbox_gofer_decode_reply(data, size, &r) == 0) {
		n = cbox_gofer_encode_reply(&r, buf, sizeof(buf));
	} else {
		return;
	}
	if (n < 0 || (size_t)n != size || memcmp(buf, data, 12) != 0 ||
	    (request && memcmp(buf + 12, data + 12, 4) != 0) ||
	    memcmp(buf + 16, data + 16, size - 16) != 0)
		abort();
}

/* Read and drop whatever the server answered, closing any fd it passed. */
static void drain(void)
{
	static unsigned char buf[CBOX_GOFER_MSG_MAX];
	union {
		struct cmsghdr a;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	for (;;) {
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov,
		                    .msg_iovlen = 1,
		                    .msg_control = ctl.b,
		                    .msg_controllen = sizeof(ctl.b)};
		if (recvmsg(sv[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < nfd; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				close(fd);
			}
		}
	}
}

static void serve_step(const uint8_t *data, size_t size, bool readonly)
{
	int before = count_fds();
	int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct cbox_gofer_server *s = cbox_gofer_server_new(sv[1], root_fd, readonly);
	if (s == NULL)
		abort();
	if (send(sv[0], data, size, MSG_DONTWAIT) == (ssize_t)size)
		(void)cbox_gofer_serve_one(s);
	cbox_gofer_server_free(s);
	drain();
	if (count_fds() != before) {
		fprintf(stderr, "fuzz_gofer_wire: fd leak (%d -> %d)\n", before, count_fds());
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup_once();
	check_round_trip(data, size);
	/* An empty packet reads as end of stream, and the server blocks waiting for a packet
	 * that could not be sent: neither is a request. */
	if (size == 0 || size > 2 * CBOX_GOFER_MSG_MAX)
		return 0;
	serve_step(data, size, true);
	serve_step(data, size, false);
	return 0;
}
