/* The gofer's BIND and xattr requests, in-process over a socketpair on a temp tree: binding,
 * the O_PATH open of bound sockets only, the xattr namespace policy and read-only refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox/gofer.h"
#include "internal.h"

static char root[64];
static int sv[2];
static pthread_t th;
static struct cbox_gofer_client *C;
static int serve_rc;

static void *serve_thread(void *arg)
{
	int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	serve_rc = cbox_gofer_serve(sv[1], root_fd, *(bool *)arg);
	close(sv[1]);
	return NULL;
}

static int host_bind(const char *rel)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", root, rel);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(s, 4), 0);
	return s;
}

static void start(bool readonly)
{
	static bool ro;
	char p[128];
	strcpy(root, "/tmp/cbox-gofer-ext-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/file", root);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/link", root);
	cr_assert_eq(symlink("file", p), 0);
	close(host_bind("hostsock")); /* a socket node nobody in the sandbox bound */
	ro = readonly;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	cr_assert_eq(pthread_create(&th, NULL, serve_thread, &ro), 0);
	C = cbox_gofer_client_new(sv[0]);
}

static void setup_rw(void)
{
	start(false);
}
static void setup_ro(void)
{
	start(true);
}

static void teardown(void)
{
	char cmd[128];
	cbox_gofer_client_free(C);
	pthread_join(th, NULL);
	cr_expect_eq(serve_rc, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(gofer_ext_rw, .init = setup_rw, .fini = teardown);
TestSuite(gofer_ext_ro, .init = setup_ro, .fini = teardown);

static uint32_t walk(const char *name)
{
	uint32_t fid = 0;
	int rc = cbox_gofer_walk(C, CBOX_GOFER_ROOT_FID, name, &fid, NULL);
	cr_assert_eq(rc, 0, "walk %s: %s", name, strerror(-rc));
	return fid;
}

/* connect(s) to the socket behind the O_PATH fd pfd, through /proc/self/fd as the sentry does. */
static int connect_via(int s, int pfd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	return connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
}

/* A stream socket bound through the gofer at name in the root with mode, listening. */
static int bound_listener(const char *name, uint32_t mode)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, name, strlen(name), s, mode,
	                             (uint32_t)-1, (uint32_t)-1),
	             0, "bind %s", name);
	cr_assert_eq(listen(s, 4), 0);
	return s;
}

Test(gofer_ext_rw, bind_then_connect_by_opath)
{
	int s = bound_listener("sock1", 0777);
	/* getsockname reports the exact path the guest gave. */
	struct sockaddr_un got;
	socklen_t glen = sizeof(got);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&got, &glen), 0);
	cr_expect_str_eq(got.sun_path, "sock1");
	int s2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "sock1", 5, s2, 0777, (uint32_t)-1,
	                             (uint32_t)-1),
	             -EADDRINUSE);
	int pfd = cbox_gofer_open(C, walk("sock1"), O_PATH | O_CLOEXEC);
	cr_assert_geq(pfd, 0, "open O_PATH: %s", strerror(-pfd));
	cr_expect_eq(connect_via(s2, pfd), 0);
	close(pfd);
	close(s2);
	close(s);
}

/* BIND gives the node the mode asked for (the guest's umask applied); CONNECT reaches it as
 * the gofer, even 0600, but only the node the fid names and only a socket bound here. */
Test(gofer_ext_rw, bind_mode_and_connect_through_the_gofer)
{
	int s = bound_listener("sock3", 0600);
	char p[128];
	struct stat st;
	snprintf(p, sizeof(p), "%s/sock3", root);
	cr_assert_eq(lstat(p, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
	uint32_t fid = walk("sock3");
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(cbox_gofer_connect(C, fid, CBOX_GOFER_ROOT_FID, "sock3", 5, c), 0);
	cr_assert_eq(fcntl(s, F_SETFL, O_NONBLOCK), 0);
	int a = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	cr_expect_geq(a, 0);
	close(a);
	close(c);
	/* not the node the fid names (sock4 is another socket bound here): refused */
	int s4 = bound_listener("sock4", 0777);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(cbox_gofer_connect(C, fid, CBOX_GOFER_ROOT_FID, "sock4", 5, c), -ECONNREFUSED);
	/* Security: a host socket that was in the tree is never connected to */
	int l = host_bind("hostsock3");
	cr_expect_eq(
	    cbox_gofer_connect(C, walk("hostsock3"), CBOX_GOFER_ROOT_FID, "hostsock3", 9, c),
	    -ECONNREFUSED);
	cr_assert_eq(fcntl(l, F_SETFL, O_NONBLOCK), 0);
	cr_expect_eq(accept4(l, NULL, NULL, SOCK_CLOEXEC), -1, "the host socket was reached");
	/* only an AF_UNIX socket, a directory, a known fid, a valid path */
	int pp[2];
	cr_assert_eq(pipe2(pp, O_CLOEXEC), 0);
	cr_expect_eq(cbox_gofer_connect(C, fid, CBOX_GOFER_ROOT_FID, "sock3", 5, pp[0]), -ENOTSOCK);
	cr_expect_eq(cbox_gofer_connect(C, fid, walk("file"), "sock3", 5, c), -ENOTDIR);
	cr_expect_eq(cbox_gofer_connect(C, 4242, CBOX_GOFER_ROOT_FID, "sock3", 5, c), -EBADF);
	cr_expect_eq(cbox_gofer_connect(C, fid, CBOX_GOFER_ROOT_FID, "a\0b", 3, c), -EINVAL);
	/* a mode beyond 0777 is refused before sending */
	cr_expect_eq(cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "sock5", 5, c, 04777, (uint32_t)-1,
	                             (uint32_t)-1),
	             -EINVAL);
	close(pp[0]);
	close(pp[1]);
	close(l);
	close(c);
	close(s4);
	close(s);
}

Test(gofer_ext_rw, opath_sockets_only_when_bound_here)
{
	int l = host_bind("hostsock2");
	/* A socket that was in the tree already belongs to a host service: refused. */
	cr_expect_eq(cbox_gofer_open(C, walk("hostsock2"), O_PATH | O_CLOEXEC), -ECONNREFUSED);
	cr_expect_eq(cbox_gofer_open(C, walk("hostsock"), O_PATH), -ECONNREFUSED);
	/* Other files: the guest's own open(O_PATH), which reads nothing. */
	int fd = cbox_gofer_open(C, walk("file"), O_PATH | O_CLOEXEC);
	cr_expect_geq(fd, 0);
	close(fd);
	cr_expect_eq(cbox_gofer_open(C, walk("hostsock2"), O_PATH | O_RDWR), -EINVAL);
	close(l);
}

Test(gofer_ext_rw, bind_refuses_what_is_not_an_af_unix_socket)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_expect_eq(
	    cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "x", 1, p[0], 0777, (uint32_t)-1, (uint32_t)-1),
	    -ENOTSOCK);
	int in = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(
	    cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "x", 1, in, 0777, (uint32_t)-1, (uint32_t)-1),
	    -EAFNOSUPPORT);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(cbox_gofer_bind(C, walk("file"), "x", 1, s, 0777, (uint32_t)-1, (uint32_t)-1),
	             -ENOTDIR);
	cr_expect_eq(cbox_gofer_bind(C, 4242, "x", 1, s, 0777, (uint32_t)-1, (uint32_t)-1), -EBADF);
	cr_expect_eq(
	    cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "a\0b", 3, s, 0777, (uint32_t)-1, (uint32_t)-1),
	    -EINVAL);
	cr_expect_eq(cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "missing/x", 9, s, 0777, (uint32_t)-1,
	                             (uint32_t)-1),
	             -ENOENT);
	char p2[128];
	snprintf(p2, sizeof(p2), "%s/x", root);
	cr_expect_neq(access(p2, F_OK), 0);
	close(p[0]);
	close(p[1]);
	close(in);
	close(s);
}

Test(gofer_ext_rw, xattr_user_namespace)
{
	uint32_t f = walk("file");
	char v[16] = {0};
	cr_assert_eq(cbox_gofer_setxattr(C, f, "user.a", "hello", 5, 0), 0);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", NULL, 0), 5);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, 2), -ERANGE);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, sizeof(v)), 5);
	cr_expect_str_eq(v, "hello");
	cr_expect_eq(cbox_gofer_setxattr(C, f, "user.a", "x", 1, XATTR_CREATE), -EEXIST);
	cr_expect_eq(cbox_gofer_setxattr(C, f, "user.b", "x", 1, XATTR_REPLACE), -ENODATA);
	char list[64];
	int n = cbox_gofer_listxattr(C, f, list, sizeof(list));
	cr_expect_eq(n, 7);
	cr_expect_eq(memcmp(list, "user.a", 7), 0);
	cr_expect_eq(cbox_gofer_removexattr(C, f, "user.a"), 0);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, sizeof(v)), -ENODATA);
	cr_expect_eq(cbox_gofer_listxattr(C, f, list, sizeof(list)), 0);
	/* The root directory works too (a node without a parent). */
	cr_expect_eq(cbox_gofer_setxattr(C, CBOX_GOFER_ROOT_FID, "user.d", "1", 1, 0), 0);
	cr_expect_eq(cbox_gofer_getxattr(C, CBOX_GOFER_ROOT_FID, "user.d", v, sizeof(v)), 1);
	/* A symlink fid names the link itself: no user.* there (Linux: EPERM / ENODATA). */
	uint32_t l = walk("link");
	cr_expect_eq(cbox_gofer_setxattr(C, l, "user.a", "1", 1, 0), -EPERM);
	cr_expect_eq(cbox_gofer_getxattr(C, l, "user.a", v, sizeof(v)), -ENODATA);
}

/* A kernel before 6.13, as Debian 12's: the *xattrat calls (463-466) fail with ENOSYS in every
 * thread of this test's process, the gofer's serving thread included (TSYNC). */
static void no_xattrat(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 463, 0, 2),
	    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 466, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog), 0);
}

/* Before 6.13 a symlink (or FIFO, socket, device) cannot be opened for its xattrs without
 * following it; the gofer answers as Linux does for user.* names on such a node, not
 * EOPNOTSUPP (a user.* write on a symlink is EPERM, a read ENODATA, a list empty), and a regular
 * file's xattrs still work through its fd. */
Test(gofer_ext_rw, xattr_without_xattrat)
{
	no_xattrat();
	uint32_t f = walk("file"), l = walk("link");
	char v[16] = {0}, list[64];
	cr_expect_eq(cbox_gofer_setxattr(C, l, "user.a", "1", 1, 0), -EPERM);
	cr_expect_eq(cbox_gofer_getxattr(C, l, "user.a", v, sizeof(v)), -ENODATA);
	cr_expect_eq(cbox_gofer_removexattr(C, l, "user.a"), -EPERM);
	cr_expect_eq(cbox_gofer_listxattr(C, l, list, sizeof(list)), 0);
	/* (the link's write did not reach the file it points to) */
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, sizeof(v)), -ENODATA);
	cr_expect_eq(cbox_gofer_setxattr(C, f, "user.a", "hello", 5, 0), 0);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, sizeof(v)), 5);
	cr_expect_str_eq(v, "hello");
	cr_expect_eq(cbox_gofer_listxattr(C, f, list, sizeof(list)), 7);
	cr_expect_eq(cbox_gofer_removexattr(C, f, "user.a"), 0);
}

Test(gofer_ext_rw, xattr_privileged_namespaces_refused)
{
	uint32_t f = walk("file");
	char v[16];
	/* File capabilities would be privilege for whoever runs the file on the host later. */
	cr_expect_eq(cbox_gofer_setxattr(C, f, "security.capability", "\1\0\0\2", 4, 0), -EPERM);
	cr_expect_eq(cbox_gofer_setxattr(C, f, "trusted.x", "1", 1, 0), -EPERM);
	cr_expect_eq(cbox_gofer_setxattr(C, f, "system.posix_acl_access", "1", 1, 0), -EPERM);
	cr_expect_eq(cbox_gofer_removexattr(C, f, "security.selinux"), -EPERM);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "trusted.x", v, sizeof(v)), -ENODATA);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "security.capability", v, sizeof(v)), -ENODATA);
	cr_expect_eq(cbox_gofer_setxattr(C, f, "nonamespace", "1", 1, 0), -EOPNOTSUPP);
	cr_expect_eq(cbox_gofer_getxattr(C, f, "", v, sizeof(v)), -ERANGE);
	char p[128];
	snprintf(p, sizeof(p), "%s/file", root);
	cr_expect_lt(getxattr(p, "security.capability", v, sizeof(v)), 0);
	cr_expect_lt(getxattr(p, "trusted.x", v, sizeof(v)), 0);
	/* A list never shows another namespace's names. */
	cr_assert_eq(setxattr(p, "trusted.hidden", "1", 1, 0), 0, "host setxattr (needs root)");
	char list[128];
	cr_expect_eq(cbox_gofer_listxattr(C, f, list, sizeof(list)), 0);
}

Test(gofer_ext_ro, bind_and_xattr_writes_refused)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(
	    cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "s", 1, s, 0777, (uint32_t)-1, (uint32_t)-1),
	    -EROFS);
	uint32_t f = walk("file");
	cr_expect_eq(cbox_gofer_setxattr(C, f, "user.a", "1", 1, 0), -EROFS);
	cr_expect_eq(cbox_gofer_removexattr(C, f, "user.a"), -EROFS);
	char v[4];
	cr_expect_eq(cbox_gofer_getxattr(C, f, "user.a", v, sizeof(v)), -ENODATA);
	close(s);
}

/* A SENDTO packet from sock to the datagram node "dg" with the datagram in mfd, sent by hand (the
 * client always seals what it sends); returns the gofer's answer: bytes sent or -errno. */
static long raw_sendto_memfd(uint32_t fid, int sock, int mfd)
{
	struct cbox_gofer_req q = {.type = CBOX_GOFER_SENDTO,
	                           .tag = 999,
	                           .fid = fid,
	                           .fid2 = CBOX_GOFER_ROOT_FID,
	                           .flags = CBOX_GOFER_SENDTO_MEMFD,
	                           .name2 = "dg",
	                           .name2_len = 2};
	static unsigned char pkt[CBOX_GOFER_MSG_MAX];
	int len = cbox_gofer_encode_request(&q, pkt, sizeof(pkt));
	cr_assert_gt(len, 0);
	int fds[2] = {sock, mfd};
	cr_assert_eq(cbox_send_fds(sv[0], pkt, (size_t)len, fds, 2), 0);
	ssize_t n = recv(sv[0], pkt, sizeof(pkt), 0);
	cr_assert_gt(n, 0);
	struct cbox_gofer_reply r;
	cr_assert_eq(cbox_gofer_decode_reply(pkt, (size_t)n, &r), 0);
	cr_assert_eq(r.tag, 999);
	return r.type == CBOX_GOFER_REPLY_ERROR ? -(long)r.error : (long)r.fid;
}

/* A datagram past one request's 64 KiB goes in a sealed memfd: it arrives whole. The gofer maps
 * only a memfd sealed against every change, of at most CBOX_GOFER_DGRAM_MAX bytes: anything else
 * is refused (an unsealed one could be truncated under the mapping: SIGBUS in the gofer). */
Test(gofer_ext_rw, sendto_big_datagram_through_a_memfd)
{
	int d = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(
	    cbox_gofer_bind(C, CBOX_GOFER_ROOT_FID, "dg", 2, d, 0777, (uint32_t)-1, (uint32_t)-1),
	    0);
	int opt = 1 << 20;
	setsockopt(d, SOL_SOCKET, SO_RCVBUF, &opt, sizeof(opt));
	uint32_t fid = walk("dg");
	int c = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &opt, sizeof(opt));
	static unsigned char big[150000], got[200000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7);
	cr_assert_eq(
	    cbox_gofer_sendto(C, fid, CBOX_GOFER_ROOT_FID, "dg", 2, c, big, sizeof(big), 0),
	    (ssize_t)sizeof(big));
	cr_assert_eq(recv(d, got, sizeof(got), MSG_DONTWAIT), (ssize_t)sizeof(big));
	cr_expect_eq(memcmp(got, big, sizeof(big)), 0);
	/* past the largest the sentry sends: refused before anything is sent */
	cr_expect_eq(cbox_gofer_sendto(C, fid, CBOX_GOFER_ROOT_FID, "dg", 2, c, big,
	                               CBOX_GOFER_DGRAM_MAX + 1, 0),
	             -EMSGSIZE);
	/* Security: an unsealed memfd, one sealed but for writes, one too long, and no memfd
	 * (a pipe) are all refused, and nothing arrives */
	int m = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	cr_assert_eq(write(m, big, 1000), 1000);
	cr_expect_eq(raw_sendto_memfd(fid, c, m), -EINVAL);
	cr_assert_eq(fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	cr_expect_eq(raw_sendto_memfd(fid, c, m), -EINVAL);
	cr_assert_eq(fcntl(m, F_ADD_SEALS, F_SEAL_WRITE), 0);
	cr_expect_eq(raw_sendto_memfd(fid, c, m), 1000, "a sealed memfd is sent");
	cr_assert_eq(recv(d, got, sizeof(got), MSG_DONTWAIT), 1000);
	int m2 = memfd_create("t2", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	cr_assert_eq(ftruncate(m2, CBOX_GOFER_DGRAM_MAX + 1), 0);
	cr_assert_eq(fcntl(m2, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE), 0);
	cr_expect_eq(raw_sendto_memfd(fid, c, m2), -EINVAL);
	int pp[2];
	cr_assert_eq(pipe2(pp, O_CLOEXEC), 0);
	cr_expect_eq(raw_sendto_memfd(fid, c, pp[0]), -EINVAL);
	cr_expect_eq(recv(d, got, sizeof(got), MSG_DONTWAIT), -1, "nothing else arrived");
	close(pp[0]);
	close(pp[1]);
	close(m2);
	close(m);
	close(c);
	close(d);
}
