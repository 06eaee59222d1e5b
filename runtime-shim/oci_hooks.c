/* OCI hooks: run in the runtime's namespaces, with the container's state JSON on stdin. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

/* What a failing hook printed, for the error message (runc puts a hook's stdout and stderr
 * there too: Docker shows that message to the user). The last bytes are kept: a Go hook's
 * logrus.Fatal line comes last. */
struct hook_out {
	char buf[1024];
	size_t len;
	bool cut;
};

static void out_add(struct hook_out *o, const char *p, size_t n)
{
	size_t cap = sizeof(o->buf) - 1;
	if (n >= cap) {
		p += n - cap;
		n = cap;
		o->cut = true;
		o->len = 0;
	}
	if (o->len + n > cap) {
		size_t drop = o->len + n - cap;
		memmove(o->buf, o->buf + drop, o->len - drop);
		o->len -= drop;
		o->cut = true;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* The hook's output as one line: control bytes (newlines, escapes from a hostile hook) are
 * shown as spaces, trailing white space dropped. */
static const char *out_line(struct hook_out *o)
{
	for (size_t i = 0; i < o->len; i++)
		if ((unsigned char)o->buf[i] < 0x20 || o->buf[i] == 0x7f)
			o->buf[i] = ' ';
	while (o->len && o->buf[o->len - 1] == ' ')
		o->buf[--o->len] = '\0';
	return o->buf;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* One non-blocking write of the rest of the state to the hook's stdin (revents: poll's for it).
 * True once nothing more is to be written: all of it is, or the hook closed its end (EPIPE, or
 * POLLERR), which is fine: a hook need not read its stdin. */
static bool feed_state(int in, short revents, const char *state, size_t len, size_t *off)
{
	if (!(revents & POLLOUT))
		return true;
	ssize_t w = write(in, state + *off, len - *off);
	if (w < 0 && errno == EAGAIN)
		return false;
	if (w < 0) {
		if (errno != EPIPE)
			cbox_debug("hook: writing the state: %s", strerror(errno));
		return true;
	}
	*off += (size_t)w;
	return *off == len;
}

/* Feeds the state to the hook's stdin, collects its output and waits for it, all at once: a
 * hook that never reads a large state, or fills its output pipe, must not block the runtime.
 * Returns 0 with *status set, -ETIMEDOUT after killing the hook, or -errno. Once the hook has
 * exited, output still buffered is read but a pipe held open by something it left running
 * is not waited for. Closes *in (and sets it to -1) once the state is written. */
static int supervise(pid_t pid, int *in, int out, const char *state, int timeout,
                     struct hook_out *o, int *status)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t len = strlen(state), off = 0;
	char buf[4096];
	/* Readable when the hook exits; without pidfds, polling every 20 ms does. */
	CBOX_AUTOCLOSE int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		struct pollfd p[3] = {{.fd = out, .events = POLLIN},
		                      {.fd = pidfd, .events = POLLIN},
		                      {.fd = *in, .events = POLLOUT}};
		int n = poll(p, 3, pidfd >= 0 ? 1000 : 20);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && p[0].revents) {
			ssize_t r = read(out, buf, sizeof(buf));
			if (r > 0)
				out_add(o, buf, (size_t)r);
			else if (r == 0 || errno != EAGAIN)
				out = -1; /* closed: poll ignores a negative fd */
		}
		/* At the end, EOF tells the hook the state is complete. */
		if (*in >= 0 && n > 0 && p[2].revents &&
		    feed_state(*in, p[2].revents, state, len, &off)) {
			close(*in);
			*in = -1;
		}
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid) {
			ssize_t got;
			while (out >= 0 && (got = read(out, buf, sizeof(buf))) > 0)
				out_add(o, buf, (size_t)got);
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout > 0 && ms_since(&t0) >= timeout * 1000L) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -ETIMEDOUT;
		}
	}
}

static int run_one(const struct cbox_oci_hook *h, const char *what, const char *state,
                   struct cbox_err **err)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return cbox_err_set(err, errno, "hook %s: pipe", what);
	if (pipe2(out, O_CLOEXEC) < 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		return cbox_err_set(err, e, "hook %s: pipe", what);
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		return cbox_err_set(err, e, "hook %s: fork", what);
	}
	if (pid == 0) {
		char *argv_default[] = {h->path, NULL};
		char *env_empty[] = {NULL};
		signal(SIGPIPE, SIG_DFL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0)
			_exit(127);
		execve(h->path, h->args && h->n_args ? h->args : argv_default,
		       h->env ? h->env : env_empty);
		fprintf(stderr, "exec %s: %s\n", h->path, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	/* A write to a hook that closed its stdin must give EPIPE, not kill the runtime. */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	struct hook_out o = {.len = 0};
	int status = 0;
	int r = supervise(pid, &in[1], out[0], state, h->timeout, &o, &status);
	signal(SIGPIPE, old);
	if (in[1] >= 0)
		close(in[1]);
	close(out[0]);
	const char *said = out_line(&o);
	const char *sep = o.len ? (o.cut ? ": ..." : ": ") : "";
	if (r == -ETIMEDOUT)
		return cbox_err_set(err, ETIMEDOUT,
		                    "hook %s (%s) killed after its timeout of %d s%s%s", what,
		                    h->path, h->timeout, sep, said);
	if (r < 0)
		return cbox_err_set(err, -r, "hook %s: wait", what);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return cbox_err_set(err, 0, "hook %s (%s) failed with exit status %d%s%s", what,
		                    h->path, WEXITSTATUS(status), sep, said);
	return cbox_err_set(err, 0, "hook %s (%s) killed by signal %d%s%s", what, h->path,
	                    WTERMSIG(status), sep, said);
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
