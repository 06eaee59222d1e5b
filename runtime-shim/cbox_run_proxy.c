/*
 * cbox-run --allow-net HOST[:PORT],...: a way out to the hosts named and nowhere else, the way
 * Deno's --allow-net or an agent sandbox's domain list gives one. The sandbox keeps its network
 * namespace with a loopback interface only (so every other address stays ENETUNREACH); a socket
 * listening on its 127.0.0.1:3128 is made inside that namespace (by the sentry's process before
 * it becomes the sentry, or by the ns tier's namespace holder) and handed out to cbox-proxy
 * (cbox_proxy.c), which runs in the host's namespace and checks each request against the list.
 * The guest's environment names the proxy (HTTP_PROXY, HTTPS_PROXY and their lower-case forms,
 * which pip, npm, curl, git and python's urllib follow); a program that ignores them reaches
 * nothing. Names are resolved by the host, for the proxy: the guest needs no DNS.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox_proxy.h"
#include "cbox/cgroup.h"
#include "cbox_run.h"

static pid_t proxy_pid = -1;

int cbox_run_allow_net(struct cbox_run_net *n, const char *arg)
{
	char *list = strdup(arg);
	if (!list)
		return -1;
	int r = 0;
	char *save = NULL;
	if (strspn(arg, ",") == strlen(arg)) { /* (no entry at all) */
		fprintf(stderr, "cbox-run: --allow-net '%s': expected HOST[:PORT],...\n", arg);
		free(list);
		return -1;
	}
	for (char *e = strtok_r(list, ",", &save); e && r == 0; e = strtok_r(NULL, ",", &save)) {
		struct cbox_proxy_rule rule;
		char err[512];
		if (cbox_proxy_rule_parse(e, &rule, err, sizeof(err)) < 0) {
			fprintf(stderr, "cbox-run: --allow-net %s\n", err);
			r = -1;
		} else if (n->n_allow >= CBOX_RUN_MAX_ALLOW) {
			fprintf(stderr, "cbox-run: --allow-net: more than %d entries\n",
			        CBOX_RUN_MAX_ALLOW);
			r = -1;
		} else {
			char *copy = strdup(e);
			char **v = copy ? realloc(n->allow, (n->n_allow + 1) * sizeof(*v)) : NULL;
			if (!v) {
				free(copy);
				r = -1;
			} else {
				v[n->n_allow++] = copy;
				n->allow = v;
			}
		}
	}
	free(list);
	return r;
}

int cbox_run_proxy_listener(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons(CBOX_PROXY_PORT),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	/* (IP_FREEBIND: the namespace's loopback may not be up yet, and 127.0.0.1 with it; the
	 * sentry brings it up before the guest runs) */
	if (fd < 0 || setsockopt(fd, SOL_IP, IP_FREEBIND, &on, sizeof(on)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return -err;
	}
	return fd;
}

int cbox_run_proxy_start(const struct cbox_run_net *n, bool log_allowed, struct cbox_cgroup *cg)
{
	char path[PATH_MAX];
	if (cbox_run_sibling("cbox-proxy", path, sizeof(path)) < 0) {
		fprintf(stderr, "cbox-run: --allow-net needs cbox-proxy beside cbox-run (%s)\n",
		        path);
		return -1;
	}
	int sp[2];
	char **argv = calloc(n->n_allow + 3, sizeof(*argv));
	if (!argv || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		free(argv);
		fprintf(stderr, "cbox-run: --allow-net: %s\n", strerror(errno));
		return -1;
	}
	size_t a = 0;
	argv[a++] = path;
	if (log_allowed)
		argv[a++] = "--log-allowed";
	for (size_t i = 0; i < n->n_allow; i++)
		argv[a++] = n->allow[i];
	pid_t pid = cbox_cgroup_fork(cg, 0);
	if (pid == 0) {
		/* Its own process group (a terminal's ^C is cbox-run's to pass on); the socket the
		 * listener will come through as fd 3, stdin /dev/null, cbox-run's stdout and
		 * stderr; nothing else of cbox-run's. */
		setpgid(0, 0);
		/* Born in the sandbox's cgroup, it joins the rest by itself (cbox_cgroup_fork): a
		 * failure ends it as a failed exec does. */
		struct cbox_err *e = NULL;
		if (cbox_cgroup_join(cg, &e) < 0) {
			cbox_err_report(
			    &e, "cbox-run: --allow-net: the proxy joining the sandbox's cgroup");
			_exit(127);
		}
		/* (dup2 onto itself would keep its close-on-exec) */
		if (sp[1] == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(sp[1], 3) < 0)
			_exit(127);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0)
			_exit(127);
		syscall(SYS_close_range, 4, ~0U, 0);
		/* No environment: the caller's (its API keys, which the guest was not given) stays
		 * out of a process that reads what the guest sends. */
		char *const noenv[] = {NULL};
		execve(path, argv, noenv);
		dprintf(2, "cbox-run: --allow-net: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	free(argv);
	close(sp[1]);
	if (pid < 0) {
		fprintf(stderr, "cbox-run: --allow-net: %s\n", strerror(errno));
		close(sp[0]);
		return -1;
	}
	setpgid(pid, pid);
	proxy_pid = pid;
	return sp[0];
}

pid_t cbox_run_proxy_pid(void)
{
	return proxy_pid;
}

void cbox_run_proxy_stop(void)
{
	if (proxy_pid <= 0)
		return;
	/* SIGTERM: it lets its open connections pass on what the guest sent before it ended, for
	 * up to a second (cbox_proxy.c), then leaves. */
	int pidfd = (int)syscall(SYS_pidfd_open, proxy_pid, 0);
	kill(proxy_pid, SIGTERM);
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		while (poll(&p, 1, 3000) < 0 && errno == EINTR)
			;
		close(pidfd);
	}
	/* Then it and its connections' processes, which are in its process group, whatever is
	 * left of them. Those became cbox-run's when it left (cbox-run is a subreaper) and are
	 * reaped here, so that none is left when cbox-run returns; the kill is sent again after
	 * each, for one its fork was making. */
	do
		kill(-proxy_pid, SIGKILL);
	while (waitpid(-proxy_pid, NULL, 0) > 0 || errno == EINTR);
	proxy_pid = -1;
}
