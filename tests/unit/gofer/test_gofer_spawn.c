/* The real gofer process: namespaces, pivot, read-only mounts, seccomp; it serves, refuses
 * writes, gives what it makes the owner asked for, and exits when the socket closes or on a
 * malformed request. The tree it builds is tested in test_gofer_tree.c. Needs root (or
 * unprivileged user namespaces); skips otherwise unless CBOX_TESTS_MUST_WORK=1. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "spawn_fixture.h"

Test(gofer_spawn, serves_read_only_rootfs)
{
	need_root();
	char root[] = "/tmp/cbox-gofer-spawn-XXXXXX", p[128];
	cr_assert_not_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/f", root);
	FILE *f = fopen(p, "w");
	fputs("content", f);
	fclose(f);

	pid_t pid;
	struct cbox_gofer_client *c = spawn(root, true, &pid);
	/* It started on another CPU than this one, and has all of this process's CPUs back. */
	cpu_set_t mine, its;
	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	cr_assert_eq(sched_getaffinity(pid, sizeof(its), &its), 0);
	cr_expect(CPU_EQUAL(&mine, &its), "the gofer was left on %d of %d CPUs", CPU_COUNT(&its),
	          CPU_COUNT(&mine));
	/* Told the CPU each request comes from, it waits there: its seccomp filter lets it set its
	 * own affinity (a call the filter refused would kill it). Sent from our last CPU. */
	cpu_set_t one;
	CPU_ZERO(&one);
	for (int i = CPU_SETSIZE - 1; i >= 0; i--) {
		if (CPU_ISSET(i, &mine)) {
			CPU_SET(i, &one);
			break;
		}
	}
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cbox_gofer_client_hint_cpu(c, true);
	uint32_t fid = 0, nf;
	struct cbox_gofer_stat st;
	cr_assert_eq(cbox_gofer_walk(c, CBOX_GOFER_ROOT_FID, "f", &fid, &st), 0);
	cr_expect_eq(st.size, 7);
	cr_assert_eq(sched_getaffinity(pid, sizeof(its), &its), 0);
	cr_expect(CPU_EQUAL(&one, &its), "the gofer is on %d CPUs, not on the sender's",
	          CPU_COUNT(&its));
	cr_assert_eq(sched_setaffinity(0, sizeof(mine), &mine), 0);
	int fd = cbox_gofer_open(c, fid, O_RDONLY);
	cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
	char b[16] = {0};
	cr_expect_eq(read(fd, b, sizeof(b)), 7);
	cr_expect_str_eq(b, "content");
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, fid, O_WRONLY), -EROFS);
	cr_expect_eq(
	    cbox_gofer_create(c, 0, "g", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	struct cbox_gofer_statfs sf;
	cr_assert_eq(cbox_gofer_statfs(c, 0, &sf), 0);
	cr_expect(sf.flags & 1 /* ST_RDONLY */, "the mount itself is read-only");
	end_gofer(c, pid);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}

Test(gofer_spawn, writable_rootfs)
{
	need_root();
	char root[] = "/tmp/cbox-gofer-spawn-XXXXXX", p[128];
	cr_assert_not_null(mkdtemp(root));
	pid_t pid;
	struct cbox_gofer_client *c = spawn(root, false, &pid);
	uint32_t nf;
	int fd =
	    cbox_gofer_create(c, 0, "new", O_WRONLY, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	cr_expect_eq(write(fd, "ok", 2), 2);
	close(fd);
	cr_expect_eq(cbox_gofer_mkdir(c, 0, "d", 0700, (uint32_t)-1, (uint32_t)-1), 0);
	cr_expect_eq(cbox_gofer_rename(c, 0, "new", 0, "moved", 0), 0);
	end_gofer(c, pid);
	snprintf(p, sizeof(p), "%s/moved", root);
	struct stat st;
	cr_expect_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_size, 2);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}

/* Every creation with an owner, in the real gofer: its seccomp filter allows what that takes. */
Test(gofer_spawn, creations_take_their_owner_under_seccomp)
{
	need_root();
	char root[] = "/tmp/cbox-gofer-spawn-XXXXXX", p[128];
	cr_assert_not_null(mkdtemp(root));
	pid_t pid;
	struct cbox_gofer_client *c = spawn(root, false, &pid);
	struct cbox_gofer_stat st;
	uint32_t nf;
	int fd = cbox_gofer_create(c, 0, "f", O_WRONLY, 0600, 1234, 5678, &nf, &st);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(st.uid, 1234);
	fd = cbox_gofer_tmpfile(c, 0, O_RDWR, 0600, 1234, 5678, &nf, &st);
	cr_assert_geq(fd, 0, "tmpfile: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(st.gid, 5678);
	cr_expect_eq(cbox_gofer_mkdir(c, 0, "d", 0700, 1234, 5678), 0);
	cr_expect_eq(cbox_gofer_symlink(c, 0, "l", "f", 1234, 5678), 0);
	cr_expect_eq(cbox_gofer_mknod(c, 0, "p", S_IFIFO | 0600, 1234, 5678, &nf, &st), 0);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_expect_eq(cbox_gofer_bind(c, 0, "s", 1, s, 0777, 1234, 5678), 0);
	close(s);
	end_gofer(c, pid);
	static const char *const names[] = {"f", "d", "l", "p", "s"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct stat hs;
		snprintf(p, sizeof(p), "%s/%s", root, names[i]);
		cr_assert_eq(lstat(p, &hs), 0, "%s", names[i]);
		cr_expect(hs.st_uid == 1234 && hs.st_gid == 5678, "%s: %u:%u", names[i], hs.st_uid,
		          hs.st_gid);
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}

Test(gofer_spawn, missing_rootfs)
{
	struct cbox_gofer_config cfg = {.rootfs = "/nonexistent/cbox-rootfs", .readonly = true};
	struct cbox_err *err = NULL;
	int sock = -1;
	pid_t pid;
	cr_expect_eq(cbox_gofer_spawn(&cfg, &sock, &pid, &err), -ENOENT);
	cr_assert_not_null(err);
	cr_expect_not_null(strstr(err->msg, "/nonexistent/cbox-rootfs"));
	cbox_err_free(&err);
	cfg.rootfs = "/etc/passwd";
	cr_expect_eq(cbox_gofer_spawn(&cfg, &sock, &pid, &err), -ENOTDIR);
	cbox_err_free(&err);
}

Test(gofer_spawn, malformed_request_logged_and_exits)
{
	need_root();
	char root[] = "/tmp/cbox-gofer-spawn-XXXXXX", p[128];
	cr_assert_not_null(mkdtemp(root));
	struct cbox_gofer_config cfg = {.rootfs = root, .readonly = true};
	struct cbox_err *err = NULL;
	int sock = -1;
	pid_t pid;
	cr_assert_eq(cbox_gofer_spawn(&cfg, &sock, &pid, &err), 0);
	/* The error line goes through the logger (write, getpid) under the seccomp filter: the
	 * gofer must end with status 1, not be killed by the filter. */
	cr_assert_eq(send(sock, "\x01\x00\x00\x00\x63", 5, 0), 5);
	int status = wait_exit(pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "gofer status %#x", status);
	close(sock);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}
