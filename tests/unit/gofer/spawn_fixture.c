/* The real gofer process for the spawn and tree tests (spawn_fixture.h). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_fixture.h"

void need_root(void)
{
	if (geteuid() == 0)
		return;
	const char *must = getenv("CBOX_TESTS_MUST_WORK");
	if (must && strcmp(must, "1") == 0)
		cr_assert_fail("spawning the gofer needs root here (CBOX_TESTS_MUST_WORK=1)");
	cr_skip_test("spawning the gofer needs root: run the tests as root");
}

int wait_exit(pid_t pid)
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

struct cbox_gofer_client *spawn_cfg(const struct cbox_gofer_config *cfg, pid_t *pid)
{
	struct cbox_err *err = NULL;
	int sock = -1;
	int rc = cbox_gofer_spawn(cfg, &sock, pid, &err);
	cr_assert_eq(rc, 0, "spawn: %s", err ? err->msg : "?");
	return cbox_gofer_client_new(sock);
}

void end_gofer(struct cbox_gofer_client *c, pid_t pid)
{
	cbox_gofer_client_free(c);
	int status = wait_exit(pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gofer status %#x", status);
}

struct cbox_gofer_client *spawn(const char *rootfs, bool readonly, pid_t *pid)
{
	struct cbox_gofer_config cfg = {.rootfs = rootfs, .readonly = readonly};
	return spawn_cfg(&cfg, pid);
}
