/* The gofer server, in-process over a socketpair, on a temp tree: the single requests, the
 * security refusals, malformed packets and fd hygiene (the batched ones: test_gofer_walk.c; the
 * ones that change the tree: test_gofer_mut.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox/gofer.h"
#include "gofer_fixture.h"
#include "internal.h"

TestSuite(gofer_ro, .init = setup_ro, .fini = teardown);
TestSuite(gofer_rw, .init = setup_rw, .fini = teardown);

Test(gofer_ro, walk_stat_open_read)
{
	struct cbox_gofer_stat st, st2;
	uint32_t fid = walk("file.txt", &st);
	cr_expect_neq(fid, CBOX_GOFER_ROOT_FID);
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.size, 5);
	cr_assert_eq(cbox_gofer_stat(S.c, fid, &st2), 0);
	cr_expect_eq(st2.ino, st.ino);
	int fd = cbox_gofer_open(S.c, fid, O_RDONLY);
	cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_expect_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	char b[16] = {0};
	cr_expect_eq(read(fd, b, sizeof(b)), 5);
	cr_expect_str_eq(b, "hello");
	close(fd);
	cr_expect_eq(cbox_gofer_clunk(S.c, fid), 0);
	cr_expect_eq(cbox_gofer_stat(S.c, fid, &st2), -EBADF);
	cr_expect_eq(cbox_gofer_clunk(S.c, fid), -EBADF);
	cr_expect_eq(cbox_gofer_clunk(S.c, CBOX_GOFER_ROOT_FID), -EINVAL);
}

Test(gofer_ro, walk_into_dirs)
{
	struct cbox_gofer_stat st;
	uint32_t dir = walk("dir", &st);
	cr_expect(S_ISDIR(st.mode));
	uint32_t inner = 0;
	cr_assert_eq(cbox_gofer_walk(S.c, dir, "inner", &inner, &st), 0);
	cr_expect_eq(st.size, 1);
	/* The parent can go first: the child must still open (the gofer keeps what it needs). */
	cr_expect_eq(cbox_gofer_clunk(S.c, dir), 0);
	int fd = cbox_gofer_open(S.c, inner, O_RDONLY);
	cr_assert_geq(fd, 0);
	close(fd);
	fd = cbox_gofer_open(S.c, CBOX_GOFER_ROOT_FID, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_expect_eq(cbox_gofer_walk(S.c, inner, "x", &dir, NULL), -ENOTDIR);
	cr_expect_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, "missing", &dir, NULL), -ENOENT);
	cr_expect_eq(cbox_gofer_walk(S.c, 4242, "dir", &dir, NULL), -EBADF);
	cr_expect_eq(cbox_gofer_open(S.c, inner, O_RDONLY | O_DIRECTORY), -ENOTDIR);
}

Test(gofer_ro, dotdot_and_slash_refused)
{
	uint32_t fid;
	cr_expect_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, "..", &fid, NULL), -EINVAL);
	cr_expect_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, ".", &fid, NULL), -EINVAL);
	cr_expect_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, "dir/inner", &fid, NULL), -EINVAL);
	cr_expect_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, "", &fid, NULL), -EINVAL);
	/* The client refused them locally; the session is still fine. */
	walk("dir", NULL);
}

Test(gofer_ro, symlinks)
{
	struct cbox_gofer_stat st;
	char b[64];
	uint32_t l = walk("link", &st);
	cr_expect(S_ISLNK(st.mode));
	cr_expect_eq(cbox_gofer_readlink(S.c, l, b, sizeof(b)), 8);
	cr_expect_str_eq(b, "file.txt");
	cr_expect_eq(cbox_gofer_readlink(S.c, l, b, 8), -ERANGE);
	cr_expect_eq(cbox_gofer_open(S.c, l, O_RDONLY), -ELOOP);
	uint32_t f = walk("file.txt", NULL);
	cr_expect_eq(cbox_gofer_readlink(S.c, f, b, sizeof(b)), -EINVAL);
}

Test(gofer_ro, statfs)
{
	struct cbox_gofer_statfs sf;
	cr_assert_eq(cbox_gofer_statfs(S.c, CBOX_GOFER_ROOT_FID, &sf), 0);
	cr_expect_gt(sf.bsize, 0);
	cr_expect_gt(sf.namelen, 0);
}

Test(gofer_ro, special_files)
{
	uint32_t fifo = walk("fifo", NULL), sock = walk("sock", NULL);
	/* A FIFO with no writer must not block the gofer. */
	int fd = cbox_gofer_open(S.c, fifo, O_RDONLY);
	cr_assert_geq(fd, 0, "open fifo: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(cbox_gofer_open(S.c, sock, O_RDONLY), -ENXIO);
	uint32_t f = walk("file.txt", NULL);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDONLY | O_CREAT), -EINVAL);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_ACCMODE), -EINVAL);
	/* O_PATH names the file without opening it; no other flag may come with it. */
	cr_expect_eq(cbox_gofer_open(S.c, f, O_WRONLY | O_PATH), -EINVAL);
	fd = cbox_gofer_open(S.c, f, O_PATH);
	cr_assert_geq(fd, 0, "open O_PATH: %s", strerror(-fd));
	char c;
	cr_expect_eq(read(fd, &c, 1), -1, "an O_PATH fd must not read");
	cr_expect_eq(errno, EBADF);
	close(fd);
	/* A socket already in the tree (a host service's) is never handed out, even as O_PATH. */
	cr_expect_eq(cbox_gofer_open(S.c, sock, O_PATH), -ECONNREFUSED);
}

Test(gofer_rw, replaced_name_is_stale)
{
	uint32_t f = walk("file.txt", NULL);
	char p[256], q[256];
	at(p, "dir/inner");
	at(q, "file.txt");
	cr_assert_eq(rename(p, q), 0);
	/* The name now holds another file: opening the fid must not hand it out. */
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDONLY), -ESTALE);
	cr_expect_eq(cbox_gofer_link(S.c, f, 0, "x"), -ESTALE);
	at(p, "x");
	cr_expect_neq(access(p, F_OK), 0);
}

Test(gofer_rw, many_fids_then_close)
{
	/* Hold many fids at once (growing the table), then let teardown check every fd closes. */
	for (int i = 0; i < 300; i++)
		walk("dir", NULL);
}

/* Send one raw packet (optionally with an fd attached) and run one server step on it. */
static int one_step(const void *pkt, size_t len, int attach_fd, bool readonly)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct cbox_gofer_server *s = cbox_gofer_server_new(sv[1], rfd, readonly);
	cr_assert_not_null(s);
	struct iovec iov = {.iov_base = (void *)pkt, .iov_len = len};
	union {
		struct cmsghdr a;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (attach_fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &attach_fd, sizeof(int));
	}
	cr_assert_eq(sendmsg(sv[0], &mh, 0), (ssize_t)len);
	int rc = cbox_gofer_serve_one(s);
	cbox_gofer_server_free(s);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static int tree_fds; /* fds open before a gofer_malformed case */

static void setup_tree(void)
{
	make_tree();
	tree_fds = count_fds();
}

static void teardown_tree(void)
{
	cr_expect_eq(count_fds(), tree_fds, "fd leak");
	remove_tree();
}

TestSuite(gofer_malformed, .init = setup_tree, .fini = teardown_tree);

static size_t stat_pkt(unsigned char *b, uint32_t type, uint32_t len_field)
{
	struct cbox_gofer_hdr h = {.type = type, .len = len_field, .tag = 1};
	uint32_t fid = 0;
	memcpy(b, &h, 16);
	memcpy(b + 16, &fid, 4);
	return 20;
}

Test(gofer_malformed, each_ends_the_session)
{
	unsigned char b[CBOX_GOFER_MSG_MAX + 64] = {0};
	size_t n = stat_pkt(b, CBOX_GOFER_STAT, 20);
	cr_expect_eq(one_step(b, n, -1, true), 1, "a valid packet is served");
	cr_expect_eq(one_step(b, 8, -1, true), -1, "short");
	stat_pkt(b, CBOX_GOFER_STAT, 24);
	cr_expect_eq(one_step(b, 20, -1, true), -1, "wrong len");
	stat_pkt(b, 77, 20);
	cr_expect_eq(one_step(b, 20, -1, true), -1, "unknown type");
	stat_pkt(b, CBOX_GOFER_STAT, 21);
	cr_expect_eq(one_step(b, 21, -1, true), -1, "body too long");
	/* WALK with the name "..". */
	struct cbox_gofer_hdr h = {.type = CBOX_GOFER_WALK, .len = 24};
	memcpy(b, &h, 16);
	memcpy(b + 16, "\0\0\0\0\x02\0..", 8);
	cr_expect_eq(one_step(b, 24, -1, false), -1, "name ..");
	memcpy(b + 16, "\0\0\0\0\x02\0a/", 8);
	cr_expect_eq(one_step(b, 24, -1, false), -1, "name a/");
	/* Longer than any valid packet. */
	stat_pkt(b, CBOX_GOFER_STAT, sizeof(b));
	cr_expect_eq(one_step(b, sizeof(b), -1, true), -1, "oversized");
	/* A request must not carry fds; the one sent must not stay in the gofer. */
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	n = stat_pkt(b, CBOX_GOFER_STAT, 20);
	cr_expect_eq(one_step(b, n, devnull, true), -1, "fd attached");
	close(devnull);
}

Test(gofer_malformed, serve_returns_error)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unsigned char b[256];
	stat_pkt(b, CBOX_GOFER_STAT, 20);
	cr_assert_eq(send(sv[0], b, 20, 0), 20);
	cr_assert_eq(send(sv[0], b, 3, 0), 3);
	cr_assert_eq(send(sv[0], b, 20, 0), 20);
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_expect_eq(cbox_gofer_serve(sv[1], rfd, true), -1);
	/* The first request was answered, the third never read. */
	cr_expect_eq(recv(sv[0], b, sizeof(b), MSG_DONTWAIT), 16 + 120);
	cr_expect_eq(recv(sv[0], b, sizeof(b), MSG_DONTWAIT), -1);
	close(sv[0]);
	close(sv[1]);
}

Test(gofer_malformed, client_rejects_bad_replies)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	struct cbox_gofer_client *c = cbox_gofer_client_new(sv[0]);
	/* A reply with the wrong tag, queued before the request is even sent. */
	struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_CLUNK, .tag = 999};
	unsigned char b[64];
	int len = cbox_gofer_encode_reply(&r, b, sizeof(b));
	cr_assert_eq(send(sv[1], b, (size_t)len, 0), len);
	cr_expect_eq(cbox_gofer_clunk(c, 5), -EIO);
	/* Broken for good. */
	cr_expect_eq(cbox_gofer_clunk(c, 5), -EIO);
	cbox_gofer_client_free(c);
	close(sv[1]);

	/* Right tag (the first request's is 1), wrong type. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = cbox_gofer_client_new(sv[0]);
	r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_MKDIR, .tag = 1};
	len = cbox_gofer_encode_reply(&r, b, sizeof(b));
	cr_assert_eq(send(sv[1], b, (size_t)len, 0), len);
	cr_expect_eq(cbox_gofer_clunk(c, 5), -EIO);
	cbox_gofer_client_free(c);
	close(sv[1]);

	/* An OPEN reply without its fd, and a peer that hangs up. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = cbox_gofer_client_new(sv[0]);
	r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_OPEN, .tag = 1};
	len = cbox_gofer_encode_reply(&r, b, sizeof(b));
	cr_assert_eq(send(sv[1], b, (size_t)len, 0), len);
	cr_expect_eq(cbox_gofer_open(c, 5, O_RDONLY), -EIO);
	cbox_gofer_client_free(c);
	close(sv[1]);

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = cbox_gofer_client_new(sv[0]);
	close(sv[1]);
	cr_expect_eq(cbox_gofer_stat(c, 0, &(struct cbox_gofer_stat){0}), -EIO);
	cbox_gofer_client_free(c);

	/* WALKN replies that do not fit the request: more entries than names, a walk that went
	 * on past a file, an error although every name was walked. Each breaks the session. */
	struct cbox_gofer_walked w[3] = {{.fid = 5}, {.fid = 6}, {.fid = 7}};
	struct cbox_gofer_walked out[CBOX_GOFER_WALKN_MAX];
	struct {
		uint32_t n;
		int32_t err;
		mode_t first;
	} lies[] = {{3, 0, S_IFDIR}, {2, 0, S_IFREG}, {2, ENOENT, S_IFDIR}};
	unsigned char big[1024];
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
		c = cbox_gofer_client_new(sv[0]);
		w[0].stat.mode = lies[i].first | 0755;
		w[1].stat.mode = S_IFDIR | 0755;
		r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKN,
		                              .tag = 1,
		                              .nwalked = lies[i].n,
		                              .walk_error = lies[i].err,
		                              .walked = w};
		len = cbox_gofer_encode_reply(&r, big, sizeof(big));
		cr_assert_gt(len, 0);
		cr_assert_eq(send(sv[1], big, (size_t)len, 0), len);
		int err = 0;
		cr_expect_eq(cbox_gofer_walk_many(c, 0, "a/b", 3, out, &err, NULL), -EIO, "lie %zu",
		             i);
		cbox_gofer_client_free(c);
		close(sv[1]);
	}

	/* A WALKOPEN reply whose fd and OPENED flag disagree (an fd it did not announce, or the
	 * flag without the fd): either breaks the session, and the fd is not kept. */
	for (int lie = 0; lie < 2; lie++) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
		c = cbox_gofer_client_new(sv[0]);
		uint64_t flags = CBOX_GOFER_STAT_RDONLY | (lie ? CBOX_GOFER_STAT_OPENED : 0);
		r = (struct cbox_gofer_reply){.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKOPEN,
		                              .tag = 1,
		                              .fid = 5,
		                              .stat = {.mode = S_IFREG | 0644, .flags = flags}};
		len = cbox_gofer_encode_reply(&r, big, sizeof(big));
		cr_assert_gt(len, 0);
		int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
		cr_assert_geq(extra, 0);
		int before = count_fds();
		cr_assert_eq(cbox_send_fds(sv[1], big, (size_t)len, &extra, lie ? 0 : 1), 0);
		close(extra);
		uint32_t fid;
		struct cbox_gofer_stat st;
		int fd = 42;
		cr_expect_eq(cbox_gofer_walk_open(c, 0, "a", &fid, &st, &fd), -EIO, "lie %d", lie);
		cr_expect_eq(fd, 42);
		cr_expect_eq(count_fds(), before - 1, "the fd that came is closed");
		cbox_gofer_client_free(c);
		close(sv[1]);
	}
}

/* Send a STAT of the root with the given CPU hint as a raw packet; the reply must be OK. */
static void stat_with_hint(uint32_t cpu)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_STAT, .tag = 900, .fid = 0, .cpu = cpu};
	unsigned char b[512];
	int len = cbox_gofer_encode_request(&q, b, sizeof(b));
	cr_assert_gt(len, 0);
	struct cbox_gofer_req d;
	cr_assert_eq(cbox_gofer_decode_request(b, (size_t)len, &d), 0);
	cr_expect_eq(d.cpu, cpu, "the hint travels in the header");
	cr_assert_eq(send(S.sv[0], b, (size_t)len, 0), len);
	ssize_t n = recv(S.sv[0], b, sizeof(b), 0);
	cr_assert_gt(n, 0);
	struct cbox_gofer_reply r;
	cr_assert_eq(cbox_gofer_decode_reply(b, (size_t)n, &r), 0);
	cr_expect_eq(r.type, CBOX_GOFER_REPLY_OK | CBOX_GOFER_STAT, "hint %u", cpu);
}

/* The affinity of the server thread: the one task of this process pinned to a single CPU, or
 * -1 when none is. */
static int pinned_server_cpu(void)
{
	DIR *d = opendir("/proc/self/task");
	cr_assert_not_null(d);
	int found = -1;
	for (struct dirent *e; (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		cpu_set_t set;
		if (tid <= 0 || tid == gettid() || sched_getaffinity(tid, sizeof(set), &set) < 0 ||
		    CPU_COUNT(&set) != 1)
			continue;
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				found = i;
	}
	closedir(d);
	return found;
}

/* A request's CPU hint: the server waits on that CPU from then on. The hint is the sentry's
 * word: none, one past CPU_SETSIZE or a CPU it may not use changes nothing, and it still
 * answers. */
Test(gofer_ro, cpu_hint)
{
	cpu_set_t mine;
	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	int last = -1, unusable = -1;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &mine))
			last = i;
		else if (unusable < 0)
			unusable = i;
	}
	cr_expect_eq(pinned_server_cpu(), -1);
	stat_with_hint(0);
	cr_expect_eq(pinned_server_cpu(), -1, "no hint, no pin");
	stat_with_hint((uint32_t)last + 1);
	cr_expect_eq(pinned_server_cpu(), last);
	static const uint32_t bad[] = {CPU_SETSIZE + 1, 0xffffffffu, 0};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		stat_with_hint(bad[i]);
		cr_expect_eq(pinned_server_cpu(), last, "hint %u", bad[i]);
	}
	if (unusable >= 0) {
		stat_with_hint((uint32_t)unusable + 1);
		cr_expect_eq(pinned_server_cpu(), last, "a CPU it may not use");
	}
	int first = -1;
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &mine))
			first = i;
	stat_with_hint((uint32_t)first + 1);
	cr_expect_eq(pinned_server_cpu(), first, "it follows the sender");
}

/* The first requests sent ahead (cbox_gofer_early_send): their answers are the STAT, VIEW and
 * WALKs a client would get asking then (a walk's ENOENT among them), a server without a view
 * says EOPNOTSUPP for it, too many walks are refused, and a request made before the answers are
 * taken is refused and breaks the client (it would have taken the STAT's reply as its own). */
Test(gofer_ro, early_requests)
{
	struct cbox_gofer_stat early, now;
	int view_fd = 0;
	const char *const names[] = {"dir", "missing", "dir"};
	struct cbox_gofer_early_walk walked[3];
	cr_assert_eq(cbox_gofer_early_send(S.c, true, names, 3), 0);
	cr_assert_eq(cbox_gofer_early_recv(S.c, &early, &view_fd, walked), 0);
	cr_expect_eq(view_fd, -EOPNOTSUPP, "this server has no view: %d", view_fd);
	cr_assert_eq(cbox_gofer_stat(S.c, CBOX_GOFER_ROOT_FID, &now), 0);
	cr_expect_eq(early.ino, now.ino);
	cr_expect_eq(early.mode, now.mode);
	uint32_t dir;
	struct cbox_gofer_stat st;
	cr_assert_eq(cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, "dir", &dir, &st), 0);
	cr_assert_eq(walked[0].err, 0);
	cr_expect_eq(walked[0].stat.ino, st.ino);
	cr_expect(S_ISDIR(walked[0].stat.mode));
	cr_expect_eq(walked[1].err, -ENOENT);
	cr_assert_eq(walked[2].err, 0);
	cr_expect_neq(walked[0].fid, walked[2].fid, "each walk its own fid");
	uint32_t inner;
	cr_expect_eq(cbox_gofer_walk(S.c, walked[2].fid, "inner", &inner, NULL), 0,
	             "the walked fid is usable");
	cr_expect_eq(cbox_gofer_clunk(S.c, walked[0].fid), 0);

	cr_assert_eq(cbox_gofer_early_send(S.c, false, NULL, 0), 0);
	cr_assert_eq(cbox_gofer_early_recv(S.c, &early, &view_fd, NULL), 0);
	cr_expect_eq(view_fd, -EOPNOTSUPP, "not asked for: %d", view_fd);

	const char *const many[CBOX_GOFER_EARLY_WALKS + 1] = {"dir"};
	cr_expect_eq(cbox_gofer_early_send(S.c, false, many, CBOX_GOFER_EARLY_WALKS + 1), -EINVAL);

	cr_assert_eq(cbox_gofer_early_send(S.c, false, NULL, 0), 0);
	cr_expect_eq(cbox_gofer_stat(S.c, CBOX_GOFER_ROOT_FID, &now), -EIO);
	cr_expect_eq(cbox_gofer_early_recv(S.c, &early, &view_fd, NULL), -EIO,
	             "the client is broken");
}
