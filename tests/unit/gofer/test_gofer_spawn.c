/* The real gofer process: namespaces, pivot, read-only mounts, seccomp; it serves, refuses
 * writes, hides host pseudo-filesystems and exits when the socket closes. Needs root (or
 * unprivileged user namespaces); skips otherwise unless CBOX_TESTS_MUST_WORK=1. */
#include <criterion/criterion.h>
#include <errno.h>
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

static void need_root(void)
{
	if (geteuid() == 0)
		return;
	const char *must = getenv("CBOX_TESTS_MUST_WORK");
	if (must && strcmp(must, "1") == 0)
		cr_assert_fail("spawning the gofer needs root here (CBOX_TESTS_MUST_WORK=1)");
	cr_skip_test("spawning the gofer needs root: run the tests as root");
}

/* Wait for the gofer to exit (at most ~5 s) and return its wait status. */
static int wait_exit(pid_t pid)
{
	int status = 0;
	for (int i = 0; i < 500; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	cr_expect_fail("the gofer did not exit after its socket closed");
	return status;
}

static struct cbox_gofer_client *spawn(const char *rootfs, bool readonly, pid_t *pid)
{
	struct cbox_gofer_config cfg = {.rootfs = rootfs, .readonly = readonly};
	struct cbox_err *err = NULL;
	int sock = -1;
	int rc = cbox_gofer_spawn(&cfg, &sock, pid, &err);
	cr_assert_eq(rc, 0, "spawn: %s", err ? err->msg : "?");
	return cbox_gofer_client_new(sock);
}

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
	uint32_t fid = 0, nf;
	struct cbox_gofer_stat st;
	cr_assert_eq(cbox_gofer_walk(c, CBOX_GOFER_ROOT_FID, "f", &fid, &st), 0);
	cr_expect_eq(st.size, 7);
	int fd = cbox_gofer_open(c, fid, O_RDONLY);
	cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
	char b[16] = {0};
	cr_expect_eq(read(fd, b, sizeof(b)), 7);
	cr_expect_str_eq(b, "content");
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, fid, O_WRONLY), -EROFS);
	cr_expect_eq(cbox_gofer_create(c, 0, "g", O_WRONLY, 0644, &nf, NULL), -EROFS);
	struct cbox_gofer_statfs sf;
	cr_assert_eq(cbox_gofer_statfs(c, 0, &sf), 0);
	cr_expect(sf.flags & 1 /* ST_RDONLY */, "the mount itself is read-only");
	cbox_gofer_client_free(c);
	int status = wait_exit(pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gofer status %#x", status);
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
	int fd = cbox_gofer_create(c, 0, "new", O_WRONLY, 0600, &nf, NULL);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	cr_expect_eq(write(fd, "ok", 2), 2);
	close(fd);
	cr_expect_eq(cbox_gofer_mkdir(c, 0, "d", 0700), 0);
	cr_expect_eq(cbox_gofer_rename(c, 0, "new", 0, "moved"), 0);
	cbox_gofer_client_free(c);
	int status = wait_exit(pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gofer status %#x", status);
	snprintf(p, sizeof(p), "%s/moved", root);
	struct stat st;
	cr_expect_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_size, 2);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}

Test(gofer_spawn, host_root_hides_pseudo_filesystems)
{
	need_root();
	pid_t pid;
	struct cbox_gofer_client *c = spawn("/", true, &pid);
	uint32_t proc = 0, x;
	struct cbox_gofer_stat st;
	cr_assert_eq(cbox_gofer_walk(c, 0, "proc", &proc, &st), 0);
	/* The directory is there (it is part of the rootfs), the host's procfs is not. */
	cr_expect_eq(cbox_gofer_walk(c, proc, "self", &x, NULL), -ENOENT);
	cr_expect_eq(cbox_gofer_walk(c, proc, "1", &x, NULL), -ENOENT);
	uint32_t dev = 0;
	if (cbox_gofer_walk(c, 0, "dev", &dev, NULL) == 0)
		cr_expect_eq(cbox_gofer_walk(c, dev, "null", &x, NULL), -ENOENT);
	uint32_t etc = 0, passwd = 0;
	cr_assert_eq(cbox_gofer_walk(c, 0, "etc", &etc, NULL), 0);
	cr_assert_eq(cbox_gofer_walk(c, etc, "passwd", &passwd, NULL), 0);
	cr_expect_eq(cbox_gofer_open(c, passwd, O_RDWR), -EROFS);
	cbox_gofer_client_free(c);
	int status = wait_exit(pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gofer status %#x", status);
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
