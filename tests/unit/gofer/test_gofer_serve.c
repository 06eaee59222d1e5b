/* The gofer server, in-process over a socketpair, on a temp tree: the single requests, the
 * security refusals, malformed packets and fd hygiene (the batched ones: test_gofer_walk.c). */
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

Test(gofer_ro, mutations_refused)
{
	uint32_t f = walk("file.txt", NULL), nf;
	cr_expect_eq(cbox_gofer_open(S.c, f, O_WRONLY), -EROFS);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDWR), -EROFS);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDONLY | O_TRUNC), -EROFS);
	cr_expect_eq(
	    cbox_gofer_create(S.c, 0, "new", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	cr_expect_eq(cbox_gofer_mkdir(S.c, 0, "newdir", 0755, (uint32_t)-1, (uint32_t)-1), -EROFS);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "file.txt", false), -EROFS);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "dir", true), -EROFS);
	cr_expect_eq(cbox_gofer_rename(S.c, 0, "file.txt", 0, "moved", 0), -EROFS);
	cr_expect_eq(cbox_gofer_symlink(S.c, 0, "sl", "file.txt", (uint32_t)-1, (uint32_t)-1),
	             -EROFS);
	cr_expect_eq(cbox_gofer_link(S.c, f, 0, "hard"), -EROFS);
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, 0, O_RDWR, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	struct stat st;
	char p[256];
	at(p, "file.txt");
	cr_expect_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_size, 5);
	cr_expect_eq(st.st_nlink, 1);
	at(p, "new");
	cr_expect_neq(access(p, F_OK), 0);
}

Test(gofer_rw, mutations_work)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0;
	char p[256], b[64];
	int fd =
	    cbox_gofer_create(S.c, 0, "new", O_RDWR, 04755, (uint32_t)-1, (uint32_t)-1, &nf, &st);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.mode & 06000, 0, "setuid stripped");
	cr_expect_eq(write(fd, "data", 4), 4);
	close(fd);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "new", O_RDWR | O_CREAT | O_EXCL, 0644, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EEXIST);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "d2", O_RDWR | O_DIRECTORY, 0755, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "d2", O_RDWR | O_PATH, 0755, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EINVAL);
	fd = cbox_gofer_open(S.c, nf, O_WRONLY | O_APPEND);
	cr_assert_geq(fd, 0);
	cr_expect_eq(write(fd, "++", 2), 2);
	close(fd);
	at(p, "new");
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f);
	cr_expect_str_eq(fgets(b, sizeof(b), f), "data++");
	fclose(f);

	cr_expect_eq(cbox_gofer_mkdir(S.c, 0, "d", 0700, (uint32_t)-1, (uint32_t)-1), 0);
	cr_expect_eq(cbox_gofer_symlink(S.c, 0, "sl", "new", (uint32_t)-1, (uint32_t)-1), 0);
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "hard"), 0);
	cr_expect_eq(cbox_gofer_rename(S.c, 0, "hard", 0, "hard2", 0), 0);
	at(p, "hard2");
	struct stat hs;
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect_eq(hs.st_ino, st.ino);
	at(p, "sl");
	cr_expect_eq(readlink(p, b, sizeof(b)), 3);
	at(p, "d");
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect(S_ISDIR(hs.st_mode));
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "d", true), 0);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "hard2", false), 0);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "hard2", false), -ENOENT);
	cr_expect_neq(access(p, F_OK), 0);
	/* Truncate through OPEN on a writable mount. */
	fd = cbox_gofer_open(S.c, nf, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	close(fd);
	at(p, "new");
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect_eq(hs.st_size, 0);
}

Test(gofer_rw, tmpfile_then_link)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0, xf = 0;
	char p[256];
	int fd = cbox_gofer_tmpfile(S.c, 0, O_RDWR, 04640, (uint32_t)-1, (uint32_t)-1, &nf, &st);
	cr_assert_geq(fd, 0, "tmpfile: %s", strerror(-fd));
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.nlink, 0, "unnamed");
	cr_expect_eq(st.mode & 07777, 0640, "setuid stripped");
	cr_expect_eq(write(fd, "tmp", 3), 3);
	/* STAT of the fid works, OPEN does not (an unnamed file cannot be reopened here). */
	struct cbox_gofer_stat st2;
	cr_expect_eq(cbox_gofer_stat(S.c, nf, &st2), 0);
	cr_expect_eq(st2.ino, st.ino);
	cr_expect_eq(st2.size, 3);
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_RDONLY), -EINVAL);
	/* Not even O_PATH: the node's fd is the open file, which must not be handed out twice. */
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_PATH), -EINVAL);
	/* Its user.* attributes, through the open file (it has no name yet). */
	cr_expect_eq(cbox_gofer_setxattr(S.c, nf, "user.k", "v", 1, 0), 0);
	char xv[8];
	cr_expect_eq(cbox_gofer_getxattr(S.c, nf, "user.k", xv, sizeof(xv)), 1);
	cr_expect_eq(cbox_gofer_setxattr(S.c, nf, "trusted.k", "v", 1, 0), -EPERM);
	/* LINK names it; walking the name finds the same file. */
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "named"), 0);
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "named"), -EEXIST);
	struct cbox_gofer_stat ws;
	uint32_t wf = walk("named", &ws);
	cr_expect_eq(ws.ino, st.ino);
	cr_expect_eq(ws.size, 3);
	cr_expect_eq(cbox_gofer_clunk(S.c, wf), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, nf), 0);
	close(fd);
	/* O_EXCL: never linkable. */
	fd = cbox_gofer_tmpfile(S.c, 0, O_WRONLY | O_EXCL, 0600, (uint32_t)-1, (uint32_t)-1, &xf,
	                        NULL);
	cr_assert_geq(fd, 0);
	cr_expect_eq(cbox_gofer_link(S.c, xf, 0, "never"), -ENOENT);
	at(p, "never");
	cr_expect_neq(access(p, F_OK), 0);
	close(fd);
	/* A read-only one is EINVAL (as Linux), as are flags OPEN refuses; a file is no dir. */
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, 0, O_RDONLY, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_PATH, 0600, (uint32_t)-1, (uint32_t)-1,
	                                &nf, NULL),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_CREAT, 0600, (uint32_t)-1, (uint32_t)-1,
	                                &nf, NULL),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_DIRECTORY, 0600, (uint32_t)-1,
	                                (uint32_t)-1, &nf, NULL),
	             -EINVAL);
	uint32_t f = walk("file.txt", NULL);
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, f, O_RDWR, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -ENOTDIR);
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

static int setattr(uint32_t fid, struct cbox_gofer_setattr a)
{
	return cbox_gofer_setattr(S.c, fid, &a);
}

/* SETATTR by name refuses (ESTALE, nothing changed) once the name leads elsewhere or nowhere;
 * without SET_BY_NAME the fid's own file is changed, as fchmod of an open fd does. */
Test(gofer_rw, setattr_by_name_checks_the_name)
{
	uint32_t f = walk("file.txt", NULL);
	struct cbox_gofer_setattr by_name = {.valid = CBOX_GOFER_SET_MODE | CBOX_GOFER_SET_BY_NAME,
	                                     .mode = 0600};
	cr_expect_eq(setattr(f, by_name), 0); /* the name still holds it */
	cr_expect_eq(host_lstat("file.txt").st_mode & 07777, 0600);
	struct stat before = host_lstat("file.txt");
	char p[256], q[256];
	at(p, "file.txt");
	at(q, "moved.txt");
	cr_assert_eq(rename(p, q), 0);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	by_name.mode = 0640;
	cr_expect_eq(setattr(f, by_name), -ESTALE);
	cr_expect_eq(host_lstat("file.txt").st_mode & 07777, 0644, "the new file is untouched");
	cr_expect_eq(host_lstat("moved.txt").st_mode & 07777, 0600, "the old one too");
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0640}), 0);
	struct stat after = host_lstat("moved.txt");
	cr_expect_eq(after.st_ino, before.st_ino);
	cr_expect_eq(after.st_mode & 07777, 0640, "without BY_NAME: the fid's own file");
	cr_assert_eq(unlink(p), 0);
	cr_expect_eq(setattr(f, by_name), -ESTALE, "a removed name");
}

Test(gofer_rw, setattr_each_field)
{
	uint32_t f = walk("file.txt", NULL), d = walk("dir", NULL);
	/* mode: setuid/setgid dropped, sticky kept, type bits ignored */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0106751}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_mode, S_IFREG | 0751);
	cr_expect_eq(
	    setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 03700}),
	    0);
	cr_expect_eq(host_lstat("dir").st_mode, S_IFDIR | 01700);
	/* owner: -1 keeps a field, and only the fields asked for change */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID | CBOX_GOFER_SET_GID,
	                                           .uid = 1234,
	                                           .gid = 5678}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 1234);
	cr_expect_eq(host_lstat("file.txt").st_gid, 5678);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_GID,
	                                                    .uid = 1,
	                                                    .gid = (uint32_t)-1}),
	             0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 1234);
	cr_expect_eq(host_lstat("file.txt").st_gid, 5678);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID, .uid = 0}),
	             0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 0);
	/* size: grow and shrink a file; a directory and a FIFO refuse */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE, .size = 3}), 0);
	cr_expect_eq(host_lstat("file.txt").st_size, 3);
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE, .size = 100000}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_size, 100000);
	cr_expect_eq(setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	             -EISDIR);
	cr_expect_eq(
	    setattr(walk("fifo", NULL), (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	    -EINVAL);
	/* times: exact values, UTIME_OMIT keeps one */
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_TIMES,
	                                                    .atime_sec = 1000000000,
	                                                    .atime_nsec = 5,
	                                                    .mtime_sec = 1200000000,
	                                                    .mtime_nsec = 999999999}),
	             0);
	struct stat st = host_lstat("file.txt");
	cr_expect_eq(st.st_atim.tv_sec, 1000000000);
	cr_expect_eq(st.st_atim.tv_nsec, 5);
	cr_expect_eq(st.st_mtim.tv_sec, 1200000000);
	cr_expect_eq(st.st_mtim.tv_nsec, 999999999);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_TIMES,
	                                                    .atime_sec = 7,
	                                                    .atime_nsec = UTIME_OMIT,
	                                                    .mtime_sec = 1300000000}),
	             0);
	st = host_lstat("file.txt");
	cr_expect_eq(st.st_atim.tv_sec, 1000000000);
	cr_expect_eq(st.st_mtim.tv_sec, 1300000000);
	/* unknown fid */
	cr_expect_eq(setattr(4242, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE}),
	             -EBADF);
}

Test(gofer_rw, setattr_order_and_first_error)
{
	uint32_t d = walk("dir", NULL);
	/* mode applies, then size fails on a directory, and the times are not applied */
	struct stat before = host_lstat("dir");
	cr_expect_eq(setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE |
	                                                             CBOX_GOFER_SET_SIZE |
	                                                             CBOX_GOFER_SET_TIMES,
	                                                    .mode = 0711,
	                                                    .mtime_sec = 42}),
	             -EISDIR);
	struct stat st = host_lstat("dir");
	cr_expect_eq(st.st_mode & 07777, 0711);
	cr_expect_eq(st.st_mtim.tv_sec, before.st_mtim.tv_sec);
}

Test(gofer_rw, setattr_symlink)
{
	uint32_t l = walk("link", NULL);
	struct stat target_before = host_lstat("file.txt");
	cr_expect_eq(
	    setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0600}),
	    -EOPNOTSUPP);
	cr_expect_eq(setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	             -EINVAL);
	/* Owner and times apply to the link itself, never to what it points at. */
	cr_expect_eq(setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID |
	                                                             CBOX_GOFER_SET_TIMES,
	                                                    .uid = 4321,
	                                                    .mtime_sec = 1234567}),
	             0);
	cr_expect_eq(host_lstat("link").st_uid, 4321);
	cr_expect_eq(host_lstat("link").st_mtim.tv_sec, 1234567);
	struct stat t = host_lstat("file.txt");
	cr_expect_eq(t.st_uid, target_before.st_uid);
	cr_expect_eq(t.st_mode, target_before.st_mode);
	cr_expect_eq(t.st_mtim.tv_sec, target_before.st_mtim.tv_sec);
}

Test(gofer_rw, mknod_types)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0;
	cr_assert_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 06640, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    0);
	cr_expect(S_ISFIFO(st.mode));
	cr_expect_eq(st.mode & 07777, 0640, "setuid/setgid dropped");
	cr_expect_eq(host_lstat("p").st_ino, st.ino);
	/* The new fid is usable at once: a FIFO opens without blocking the gofer. */
	int fd = cbox_gofer_open(S.c, nf, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 0600, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EEXIST);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "s", S_IFSOCK | 0755, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    0);
	cr_expect(S_ISSOCK(host_lstat("s").st_mode));
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_RDONLY), -ENXIO);
	cr_expect_eq(cbox_gofer_mknod(S.c, 0, "r", 0600, (uint32_t)-1, (uint32_t)-1, &nf, &st), 0,
	             "type 0 is a file");
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(cbox_gofer_mknod(S.c, walk("dir", NULL), "r2", S_IFREG | 0644, (uint32_t)-1,
	                              (uint32_t)-1, &nf, &st),
	             0);
	cr_expect(S_ISREG(host_lstat("dir/r2").st_mode));
	/* No devices, ever; no other types through MKNOD. */
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "c", S_IFCHR | 0666, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EPERM);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "b", S_IFBLK | 0666, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EPERM);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "d", S_IFDIR | 0755, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "l", S_IFLNK | 0777, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "x", 0x100000 | S_IFIFO, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	char p[256];
	at(p, "c");
	cr_expect_neq(access(p, F_OK), 0);
	cr_expect_eq(cbox_gofer_mknod(S.c, walk("file.txt", NULL), "x", S_IFIFO, (uint32_t)-1,
	                              (uint32_t)-1, &nf, &st),
	             -ENOTDIR);
}

Test(gofer_ro, setattr_mknod_refused)
{
	uint32_t f = walk("file.txt", NULL), nf;
	struct stat before = host_lstat("file.txt");
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0600}),
	    -EROFS);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}), -EROFS);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = 0}), -EROFS);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	struct stat st = host_lstat("file.txt");
	cr_expect_eq(st.st_mode, before.st_mode);
	cr_expect_eq(st.st_size, 5);
	char p[256];
	at(p, "p");
	cr_expect_neq(access(p, F_OK), 0);
	/* Refused locally by the client: the session goes on. */
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = 1u << 7}), -EINVAL);
	walk("dir", NULL);
}

/* The client's change count (cbox_gofer_changes): what the sentry's attribute reuse relies on
 * (fs_gofer.c). Lookups, stats, reads and read-only opens leave it; every request that may
 * change a file moves it, failed or not. */
Test(gofer_rw, change_count)
{
	struct cbox_gofer_client *c = S.c;
	uint64_t n = cbox_gofer_changes(c);
	struct cbox_gofer_stat st;
	uint32_t f = walk("file.txt", &st);
	cr_expect_eq(cbox_gofer_stat(c, f, &st), 0);
	int fd = cbox_gofer_open(c, f, O_RDONLY);
	cr_assert(fd >= 0);
	close(fd);
	char buf[64];
	cr_expect_eq(cbox_gofer_readlink(c, walk("link", NULL), buf, sizeof(buf)), 8);
	cr_expect_eq(cbox_gofer_changes(c), n, "lookups and reads change nothing");
	fd = cbox_gofer_open(c, f, O_WRONLY);
	cr_assert(fd >= 0);
	close(fd);
	cr_expect_eq(cbox_gofer_changes(c), n + 1, "an open for writing");
	fd = cbox_gofer_open(c, f, O_RDONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	cr_expect_eq(cbox_gofer_changes(c), n + 2, "an open that truncates");
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_MODE, .mode = 0600};
	cr_expect_eq(cbox_gofer_setattr(c, f, &a), 0);
	cr_expect_eq(cbox_gofer_changes(c), n + 3, "a chmod");
	cr_expect_eq(cbox_gofer_mkdir(c, 0, "dir", 0755, (uint32_t)-1, (uint32_t)-1), -EEXIST);
	cr_expect_eq(cbox_gofer_changes(c), n + 4, "a failed mkdir counts too");
	cr_expect_eq(cbox_gofer_unlink(c, 0, "file.txt", false), 0);
	cr_expect_eq(cbox_gofer_changes(c), n + 5, "an unlink");
	cr_expect_eq(cbox_gofer_changes(NULL), 0);
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
