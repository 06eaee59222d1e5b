/*
 * cbox-proxy [--log-allowed] RULE...: the way out that cbox-run --allow-net gives a sandbox.
 * Through fd 3 comes a listening TCP socket of the sandbox's own network namespace (127.0.0.1:3128
 * there), which the guest's HTTP_PROXY and HTTPS_PROXY name; this process runs in the host's
 * namespace and is the only way from one to the other. Each connection gets a process of its own,
 * which reads the request's head, checks the host against the rules (cbox_proxy_parse.c) and then
 * either tunnels (CONNECT HOST:PORT, for https and anything else over TCP) or passes one plain-http
 * request on (absolute-form GET http://HOST/...), with "Connection: close".
 *
 * Security: the guest chooses every byte this process reads, so it runs with as little as it
 * needs: started by root it becomes nobody (it only accepts, resolves names and connects out),
 * it cannot gain privileges (no_new_privs), it keeps no fd of cbox-run's but the listener, and it
 * is exec'd without an environment, so nothing of cbox-run's memory or of the caller's variables
 * (API keys the guest was not given) is in it. It dies with cbox-run (PR_SET_PDEATHSIG).
 * What the rules let through is decided on the name the guest gives, which is the name the
 * connection is made to: the host resolves it, and a name that resolves to the host's loopback
 * is refused unless the rule names the loopback itself (cbox_proxy_addr_allowed). Not prevented:
 * what an allowed server does with the bytes, such as a shared front end that serves other
 * domains by the TLS SNI or the Host field ("domain fronting").
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox_proxy.h"

#define FEED_FD    3
#define MAX_CONNS  256   /* connections at once; more wait to be accepted */
#define HEAD_MS    30000 /* for the request's head */
#define CONNECT_MS 30000 /* for the server to answer a connect */
#define DRAIN_MS   1000  /* for the connections left when cbox-run is done */
#define NOBODY     65534

static struct cbox_proxy_rule *rules;
static size_t nrules;
static bool log_allowed; /* --log-allowed: a line for each connection let through too */

/* A line on cbox-run's stderr about a connection that did not go through. */
static void say(const struct cbox_proxy_request *req, const char *why)
{
	bool v6 = strchr(req->host, ':') != NULL;
	fprintf(stderr, "cbox-run: --allow-net: %s%s%s:%u: %s\n", v6 ? "[" : "", req->host,
	        v6 ? "]" : "", req->port, why);
	fflush(stderr);
}

/* Write all of buf (0), or -1. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* An answer of the proxy's own to the guest. */
static void reply(int c, const char *status, const char *text)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
	                 "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
	                 "Connection: close\r\n\r\n%s",
	                 status, strlen(text), text);
	if (n > 0)
		write_all(c, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Read the head into buf: its parse (1), or 0 after answering the guest why not. */
static int read_head(int c, char *buf, size_t *len, struct cbox_proxy_request *req)
{
	*len = 0;
	for (;;) {
		struct pollfd p = {.fd = c, .events = POLLIN};
		int r = poll(&p, 1, HEAD_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			reply(c, "408 Request Timeout", "cbox-run: no request\n");
			return 0;
		}
		ssize_t n = r < 0 ? -1 : read(c, buf + *len, CBOX_PROXY_HEAD_MAX - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		*len += (size_t)n;
		int k = cbox_proxy_parse_request(buf, *len, req);
		if (k == 1)
			return 1;
		if (k < 0) {
			reply(c, "400 Bad Request",
			      "cbox-run: --allow-net takes CONNECT HOST:PORT, or a request for an "
			      "http:// URL, in HTTP/1.x\n");
			return 0;
		}
	}
}

/* A connection to addr within CONNECT_MS: its fd, or -1 with errno. */
static int connect_to(const struct addrinfo *a)
{
	int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
	if (s < 0)
		return -1;
	if (connect(s, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS)
		goto fail;
	struct pollfd p = {.fd = s, .events = POLLOUT};
	int r;
	while ((r = poll(&p, 1, CONNECT_MS)) < 0 && errno == EINTR)
		;
	int err = 0;
	socklen_t el = sizeof(err);
	if (r == 0)
		err = ETIMEDOUT;
	else if (r < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		err = errno;
	if (err) {
		errno = err;
		goto fail;
	}
	fcntl(s, F_SETFL, 0);
	return s;
fail:
	err = errno;
	close(s);
	errno = err;
	return -1;
}

/* Bytes both ways until each side has ended its half. */
static void relay(int a, int b)
{
	struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	char buf[65536];
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			int to = i == 0 ? b : a;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* (this way is done: the other side sees the end, the other way
				 * goes on) */
				shutdown(to, SHUT_WR);
				p[i].fd = -1;
				continue;
			}
			if (write_all(to, buf, (size_t)n) < 0)
				return;
		}
	}
}

/* One guest connection, in a process of its own. */
static int serve(int c)
{
	static char buf[CBOX_PROXY_HEAD_MAX];
	size_t len;
	struct cbox_proxy_request req;
	if (!read_head(c, buf, &len, &req))
		return 0;
	const struct cbox_proxy_rule *rule = cbox_proxy_match(rules, nrules, req.host, req.port);
	if (!rule) {
		say(&req, "refused: not in the list");
		reply(c, "403 Forbidden", "cbox-run: this host and port are not in --allow-net\n");
		return 0;
	}
	char port[8];
	snprintf(port, sizeof(port), "%u", req.port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
	int g = getaddrinfo(req.host, port, &hints, &res);
	if (g != 0) {
		say(&req, gai_strerror(g));
		reply(c, "502 Bad Gateway", "cbox-run: the name does not resolve\n");
		return 0;
	}
	int s = -1, err = ECONNREFUSED;
	bool loopback = false;
	for (const struct addrinfo *a = res; a && s < 0; a = a->ai_next) {
		if (!cbox_proxy_addr_allowed(rule, a->ai_addr)) {
			loopback = true;
			continue;
		}
		s = connect_to(a);
		if (s < 0)
			err = errno;
	}
	freeaddrinfo(res);
	if (s < 0) {
		say(&req, loopback ? "refused: the name is the host's loopback, which only a rule "
		                     "naming the loopback opens"
		                   : strerror(err));
		reply(c, loopback ? "403 Forbidden" : "502 Bad Gateway",
		      loopback ? "cbox-run: the name resolves to the host's loopback\n"
		               : "cbox-run: the server cannot be reached\n");
		return 0;
	}
	if (log_allowed)
		say(&req, req.connect ? "allowed (CONNECT)" : "allowed (http)");
	int r;
	if (req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		r = write_all(c, ok, sizeof(ok) - 1);
	} else {
		static char head[CBOX_PROXY_HEAD_MAX + 64];
		int hl = cbox_proxy_origin_head(&req, head, sizeof(head));
		r = hl < 0 ? -1 : write_all(s, head, (size_t)hl);
	}
	/* what the guest sent after the head (a request's body, a TLS hello sent early) */
	if (r == 0 && len > req.head_len)
		r = write_all(s, buf + req.head_len, len - req.head_len);
	if (r == 0)
		relay(c, s);
	close(s);
	return 0;
}

static volatile sig_atomic_t stopping;
static int listener = -1;

/* The listening socket, the one message on fd 3 (cbox-run's sandbox makes it and sends it there
 * once its network namespace exists), or -1 at EOF: the sandbox failed to start, and its end
 * closed. */
static int receive_listener(void)
{
	char c;
	int fd = -1, nfds = 0;
	ssize_t n = cbox_recv_fds(FEED_FD, &c, 1, &fd, 1, &nfds, 0);
	close(FEED_FD);
	return n == 1 && nfds == 1 ? fd : -1;
}

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * SIGTERM, from cbox-run once the sandbox is gone: no more connections, and those still open get
 * DRAIN_MS to finish. The guest may have written its last bytes and exited before they were
 * passed on (its socket's end closed after them); they are not lost for the sandbox's end. Then
 * the rest are killed with this process (its process group).
 */
static void drain(void)
{
	close(listener);
	for (int waited = 0; waited < DRAIN_MS; waited += 10) {
		pid_t p;
		while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (p < 0 && errno == ECHILD)
			return;
		usleep(10000);
	}
	kill(0, SIGKILL);
}

/* Started by root: nobody, with no groups. */
static int drop_root(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > 1 && strcmp(argv[1], "--log-allowed") == 0) {
		log_allowed = true;
		first = 2;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: cbox-proxy [--log-allowed] RULE... (the listener comes "
		                "through fd 3; cbox-run --allow-net starts it)\n");
		return 2;
	}
	rules = calloc((size_t)(argc - first), sizeof(*rules));
	if (!rules)
		return 1;
	for (int i = first; i < argc; i++) {
		char err[512];
		if (cbox_proxy_rule_parse(argv[i], &rules[nrules++], err, sizeof(err)) < 0) {
			fprintf(stderr, "cbox-proxy: %s\n", err);
			return 2;
		}
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || drop_root() < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "cbox-proxy: dropping privileges: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* (no SA_RESTART: the accept below returns on it) */
	struct sigaction sa = {.sa_handler = on_term};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	listener = receive_listener();
	if (listener < 0)
		return 1; /* (the sandbox did not start, and said why) */
	unsigned active = 0;
	while (!stopping) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			active--;
		if (active >= MAX_CONNS) {
			if (waitpid(-1, NULL, 0) > 0)
				active--;
			continue;
		}
		int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) {
				fprintf(stderr, "cbox-proxy: not a listening socket: %s\n",
				        strerror(errno));
				return 1;
			}
			if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
				usleep(10000);
			continue;
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(listener);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(serve(c));
		}
		close(c);
		if (pid > 0)
			active++;
	}
	drain();
	return 0;
}
