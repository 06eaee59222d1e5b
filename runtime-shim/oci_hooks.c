/* OCI hooks: run in the runtime's namespaces, with the container's state JSON on stdin. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

static int wait_hook(pid_t pid, int timeout, int *status)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timeout > 0 && now.tv_sec - start.tv_sec >= timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -ETIMEDOUT;
		}
		usleep(2000);
	}
}

static int run_one(const struct cbox_oci_hook *h, const char *what, const char *state,
                   struct cbox_err **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return cbox_err_set(err, errno, "hook %s: pipe", what);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return cbox_err_set(err, errno, "hook %s: fork", what);
	}
	if (pid == 0) {
		char *argv_default[] = {h->path, NULL};
		char *env_empty[] = {NULL};
		if (dup2(p[0], 0) < 0)
			_exit(127);
		execve(h->path, h->args && h->n_args ? h->args : argv_default,
		       h->env ? h->env : env_empty);
		fprintf(stderr, "cbox: hook %s: exec %s: %s\n", what, h->path, strerror(errno));
		_exit(127);
	}
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	size_t len = strlen(state);
	/* A hook that does not read its stdin is fine: EPIPE is not an error. */
	if (write(p[1], state, len) < 0 && errno != EPIPE)
		cbox_debug("hook %s: writing the state: %s", what, strerror(errno));
	close(p[1]);
	int status = 0;
	int r = wait_hook(pid, h->timeout, &status);
	if (r == -ETIMEDOUT)
		return cbox_err_set(err, ETIMEDOUT, "hook %s (%s) killed after its timeout of %d s",
		                    what, h->path, h->timeout);
	if (r < 0)
		return cbox_err_set(err, -r, "hook %s: wait", what);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return cbox_err_set(err, 0, "hook %s (%s) failed with exit status %d", what,
		                    h->path, WEXITSTATUS(status));
	return cbox_err_set(err, 0, "hook %s (%s) killed by signal %d", what, h->path,
	                    WTERMSIG(status));
}

int cbox_oci_hooks_run(const struct cbox_oci_config *cfg, enum cbox_oci_hook_kind kind,
                       const char *state_json, struct cbox_err **err)
{
	for (size_t i = 0; i < cfg->n_hooks[kind]; i++) {
		char what[64];
		snprintf(what, sizeof(what), "%s[%zu]", cbox_oci_hook_kind_name(kind), i);
		cbox_debug("running hook %s: %s", what, cfg->hooks[kind][i].path);
		if (run_one(&cfg->hooks[kind][i], what, state_json, err) < 0)
			return -1;
	}
	return 0;
}

void cbox_oci_post_hooks_run(const struct cbox_oci_state *st, enum cbox_oci_hook_kind kind,
                             const char *status)
{
	CBOX_AUTO(cbox_oci_config) *cfg = NULL;
	struct cbox_err *err = NULL;
	json_object *j = cbox_oci_state_json(st, status);
	if (cbox_oci_config_load(st->dir, &cfg, &err) < 0 ||
	    cbox_oci_hooks_run(cfg, kind, json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
	                       &err) < 0)
		cbox_err_report(&err, cbox_oci_hook_kind_name(kind));
	json_object_put(j);
}
