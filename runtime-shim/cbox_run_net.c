/*
 * cbox-run --network: the sandbox's way out, if any.
 *
 * none (the default): the sandbox's network namespace has a loopback interface only, so that a
 * server and a client inside work and a connect to any outside address fails (ENETUNREACH).
 *
 * slirp4netns[:OPTIONS]: the same namespace, and slirp4netns (rootless Podman's user-mode
 * network) gives it a tap device whose packets it turns into the host's own sockets: the guest
 * has 10.0.2.100, a default route through 10.0.2.2 and a DNS forwarder at 10.0.2.3, which the
 * sandbox's /etc/resolv.conf names (cbox_run_tree). OPTIONS, comma-separated, as Podman's:
 * allow_host_loopback=true|false, enable_ipv6=true|false, mtu=N.
 *
 * Security: the guest keeps a network namespace of its own, so what the namespace holds stays
 * the sandbox's: the abstract AF_UNIX names (a host's shared network namespace would give the
 * guest every host service listening on one: containerd's shims, X11, D-Bus), its ports and
 * its interfaces. The host's loopback is out of reach unless allow_host_loopback=true
 * (slirp4netns --disable-host-loopback: 10.0.2.2 is then unreachable), since services that
 * listen on 127.0.0.1 trust whoever reaches them; the threat model's attack, a POST to such a
 * listener, fails with the network on too (tests/integration/test_network.sh). What the host
 * itself reaches (the internet, the LAN, the host's services on its other addresses) the guest
 * reaches: that is what was asked for. slirp4netns parses the guest's packets outside the
 * sandbox, as the caller: it runs with --enable-sandbox (a mount namespace of its own holding
 * only /etc and /run; run by root, no capability but CAP_NET_BIND_SERVICE) and --enable-seccomp.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox_proxy.h"
#include "cbox_run.h"

#define DEFAULT_MTU 65520 /* slirp4netns's maximum is 65521; Podman's default */
#define MAX_MTU     65521
#define READY_MS    10000

static int parse_bool(const char *opt, const char *v, bool *out)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		*out = strcmp(v, "true") == 0;
		return 0;
	}
	fprintf(stderr, "cbox-run: --network: %s=%s: expected true or false\n", opt, v);
	return -1;
}

static int parse_option(struct cbox_run_net *n, char *opt)
{
	char *v = strchr(opt, '=');
	if (!v) {
		fprintf(stderr, "cbox-run: --network: option '%s': expected NAME=VALUE\n", opt);
		return -1;
	}
	*v++ = '\0';
	if (strcmp(opt, "allow_host_loopback") == 0)
		return parse_bool(opt, v, &n->allow_host_loopback);
	if (strcmp(opt, "enable_ipv6") == 0)
		return parse_bool(opt, v, &n->ipv6);
	if (strcmp(opt, "mtu") == 0) {
		char *end;
		errno = 0;
		unsigned long mtu = strtoul(v, &end, 10);
		if (errno || end == v || *end || mtu < 1280 || mtu > MAX_MTU) {
			fprintf(stderr, "cbox-run: --network: mtu=%s: expected 1280 to %d\n", v,
			        MAX_MTU);
			return -1;
		}
		n->mtu = (unsigned)mtu;
		return 0;
	}
	fprintf(stderr,
	        "cbox-run: --network: unknown slirp4netns option '%s' (allow_host_loopback, "
	        "enable_ipv6, mtu)\n",
	        opt);
	return -1;
}

int cbox_run_net_parse(struct cbox_run_net *n, const char *arg)
{
	/* (a later --network replaces an earlier one; -p's and --allow-net's stay) */
	*n = (struct cbox_run_net){.mtu = DEFAULT_MTU,
	                           .publish = n->publish,
	                           .n_publish = n->n_publish,
	                           .allow = n->allow,
	                           .n_allow = n->n_allow};
	if (strcmp(arg, "none") == 0)
		return 0;
	if (strcmp(arg, "host") == 0) {
		/* (see the top of this file) */
		fprintf(stderr, "cbox-run: --network host is not offered: the host's network "
		                "namespace holds its abstract unix sockets, which the guest would "
		                "reach; --network slirp4netns gives a way out\n");
		return -1;
	}
	const char *name = "slirp4netns";
	size_t len = strlen(name);
	if (strncmp(arg, name, len) != 0 || (arg[len] != '\0' && arg[len] != ':')) {
		fprintf(stderr, "cbox-run: --network %s: expected none or slirp4netns[:OPTIONS]\n",
		        arg);
		return -1;
	}
	n->slirp = true;
	if (arg[len] == '\0')
		return 0;
	char *opts = strdup(arg + len + 1);
	if (!opts)
		return -1;
	int r = 0;
	char *save = NULL;
	for (char *opt = strtok_r(opts, ",", &save); opt && r == 0;
	     opt = strtok_r(NULL, ",", &save))
		r = parse_option(n, opt);
	free(opts);
	return r;
}

/* A port number from 1 to 65535 in [s, end) */
static bool parse_port(const char *s, const char *end, unsigned *port)
{
	return cbox_proxy_port_parse(s, (size_t)(end - s), port);
}

/* PORT or PORT-END (END not below PORT) in [s, end) */
static bool parse_range(const char *s, const char *end, unsigned *lo, unsigned *hi)
{
	const char *dash = memchr(s, '-', (size_t)(end - s));
	if (!dash)
		return parse_port(s, end, lo) && parse_port(s, end, hi);
	return parse_port(s, dash, lo) && parse_port(dash + 1, end, hi) && *lo <= *hi;
}

/* One forward more in n->publish: 0, or -1 (out of memory) */
static int add_forward(struct cbox_run_net *n, const struct cbox_run_publish *p)
{
	struct cbox_run_publish *v = realloc(n->publish, (n->n_publish + 1) * sizeof(*v));
	if (!v)
		return -1;
	v[n->n_publish++] = *p;
	n->publish = v;
	return 0;
}

/*
 * -p [[HOSTIP:][HOSTPORT[-END]]:]PORT[-END][/tcp|/udp], docker run's forms: HOSTIP:HOSTPORT:PORT,
 * HOSTIP::PORT and PORT alone (a free host port, which cbox-run names once it is published),
 * HOSTPORT:PORT, and ranges (as many host ports as guest ports, or one guest port and the first
 * free host port of a range). But for the host address: 127.0.0.1 unless HOSTIP is given.
 * Docker binds 0.0.0.0, which would put a server of a program nobody reviewed in front of the
 * whole network the host is on; whoever wants that writes 0.0.0.0.
 */
int cbox_run_net_publish(struct cbox_run_net *n, const char *arg)
{
	struct cbox_run_publish p = {.arg = arg, .host_addr = "127.0.0.1"};
	const char *proto = strchr(arg, '/');
	const char *end = proto ? proto : arg + strlen(arg);
	if (proto && strcmp(proto, "/tcp") != 0 && strcmp(proto, "/udp") != 0)
		goto bad;
	p.udp = proto && strcmp(proto, "/udp") == 0;
	const char *colon[3];
	size_t ncolons = 0;
	for (const char *c = arg; c < end; c++)
		if (*c == ':') {
			if (ncolons == 2)
				goto bad;
			colon[ncolons++] = c;
		}
	unsigned guest_lo, guest_hi;
	const char *guest = ncolons ? colon[ncolons - 1] + 1 : arg;
	if (!parse_range(guest, end, &guest_lo, &guest_hi))
		goto bad;
	const char *host = ncolons == 2 ? colon[0] + 1 : arg;
	if (ncolons == 2) {
		size_t len = (size_t)(colon[0] - arg);
		struct in_addr a;
		char addr[sizeof(p.host_addr)];
		if (len == 0 || len >= sizeof(addr))
			goto bad;
		memcpy(addr, arg, len);
		addr[len] = '\0';
		if (inet_pton(AF_INET, addr, &a) != 1)
			goto bad;
		memcpy(p.host_addr, addr, len + 1);
	}
	/* (HOSTIP::PORT and PORT: no host port; HOSTPORT: must be one) */
	bool any_host = ncolons == 0 || (ncolons == 2 && host == colon[1]);
	unsigned host_lo = 0, host_hi = 0;
	if (!any_host && !parse_range(host, colon[ncolons - 1], &host_lo, &host_hi))
		goto bad;
	unsigned count = guest_hi - guest_lo + 1;
	if (!any_host && host_hi - host_lo + 1 != count && count != 1) {
		fprintf(stderr,
		        "cbox-run: -p %s: the host's range and the guest's differ in size (a "
		        "range of host ports goes with one guest port, or with as many)\n",
		        arg);
		return -1;
	}
	if (n->n_publish + count > CBOX_RUN_MAX_FORWARDS) {
		fprintf(stderr, "cbox-run: -p %s: more than %d forwards in all\n", arg,
		        CBOX_RUN_MAX_FORWARDS);
		return -1;
	}
	for (unsigned i = 0; i < count; i++) {
		p.guest_port = guest_lo + i;
		if (any_host)
			p.host_port = p.host_port_end = 0;
		else if (count == 1)
			p.host_port = host_lo, p.host_port_end = host_hi;
		else
			p.host_port = p.host_port_end = host_lo + i;
		if (add_forward(n, &p) < 0)
			return -1;
	}
	return 0;
bad:
	fprintf(stderr,
	        "cbox-run: -p %s: expected [[HOSTIP:][HOSTPORT[-END]]:]PORT[-END][/tcp|/udp], an "
	        "IPv4 HOSTIP and ports from 1 to 65535\n",
	        arg);
	return -1;
}

/* The program: $CBOX_SLIRP4NETNS, else slirp4netns in PATH (execvp). */
static const char *slirp_program(void)
{
	const char *p = getenv("CBOX_SLIRP4NETNS");
	return p && *p ? p : "slirp4netns";
}

/*
 * enable_ipv6: Duplicate Address Detection off in the sandbox's network namespace before
 * slirp4netns makes tap0, which takes the namespace's default setting. The guest's IPv6
 * address comes from slirp4netns's router advertisements (SLAAC); with DAD, first the
 * link-local address and then that one waited a second each, and a program found no IPv6 route
 * for its first 1.7-3.5 s here (connect: ENETUNREACH); without, the address is there ~0.13 s
 * after slirp4netns starts. No other host shares tap0's link (slirp4netns is the only peer),
 * so no address can clash. Podman turns it off the same way for slirp4netns:enable_ipv6.
 * Made by a child of cbox-run's in the sandbox's namespaces: a net sysctl is the writer's
 * namespace's. Root needs only the network namespace (its CAP_NET_ADMIN reaches every one); a
 * user enters the sandbox's user namespace first, which it owns.
 */
static int dad_off(pid_t sandbox)
{
	pid_t c = fork();
	if (c < 0)
		return -errno;
	if (c == 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)sandbox);
		int u = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)sandbox);
		int net = open(path, O_RDONLY | O_CLOEXEC);
		if (geteuid() != 0 && (u < 0 || setns(u, CLONE_NEWUSER) < 0))
			_exit(1);
		if (net < 0 || setns(net, CLONE_NEWNET) < 0)
			_exit(1);
		static const char *const conf[] = {"/proc/sys/net/ipv6/conf/default/accept_dad",
		                                   "/proc/sys/net/ipv6/conf/all/accept_dad"};
		for (int i = 0; i < 2; i++) {
			int fd = open(conf[i], O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

/* Whether the sandbox's tap0 has a global IPv6 address past its tentative state, from the
 * namespace's /proc/net/if_inet6 ("ADDR IFINDEX PLEN SCOPE FLAGS NAME", hex). */
static bool has_global_v6(pid_t sandbox)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/net/if_inet6", (int)sandbox);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char addr[40], name[32];
		unsigned idx, plen, scope, flags;
		found = sscanf(line, "%39s %x %x %x %x %31s", addr, &idx, &plen, &scope, &flags,
		               name) == 6 &&
		        strcmp(name, "tap0") == 0 && scope == 0 /* global */ &&
		        !(flags & (0x40 /* IFA_F_TENTATIVE */ | 0x08 /* IFA_F_DADFAILED */));
	}
	fclose(f);
	return found;
}

/* enable_ipv6: the program starts with its IPv6 address and route (slirp4netns's "ready" comes
 * with tap0's IPv4 set-up; IPv6's arrives with the first router advertisement). */
#define V6_WAIT_MS 5000

static void wait_v6(pid_t sandbox)
{
	for (int ms = 0; ms < V6_WAIT_MS; ms += 5) {
		if (has_global_v6(sandbox))
			return;
		struct timespec ts = {0, 5 * 1000000L};
		nanosleep(&ts, NULL);
	}
	fprintf(
	    stderr,
	    "cbox-run: --network: enable_ipv6: tap0 had no IPv6 address after %d s; the program "
	    "starts without one\n",
	    V6_WAIT_MS / 1000);
}

int cbox_run_net_start(const struct cbox_run_net *n, pid_t sandbox, struct cbox_run_slirp *sl)
{
	*sl = (struct cbox_run_slirp){
	    .pid = -1, .sandbox = sandbox, .exit_fd = -1, .ready_fd = -1, .log_fd = -1};
	if (n->ipv6) {
		int r = dad_off(sandbox);
		if (r < 0)
			fprintf(
			    stderr,
			    "cbox-run: --network: enable_ipv6: duplicate address detection stays "
			    "on (%s): IPv6 comes up ~3 s later\n",
			    strerror(-r));
	}
	int ready[2] = {-1, -1}, quit[2] = {-1, -1};
	/* -p goes through its API socket, in a directory only the caller may enter. */
	char api[sizeof(sl->api_dir) + 32] = "";
	if (n->n_publish) {
		snprintf(sl->api_dir, sizeof(sl->api_dir), "/tmp/cbox-run-slirp.XXXXXX");
		if (!mkdtemp(sl->api_dir)) {
			fprintf(stderr,
			        "cbox-run: -p: a directory for slirp4netns's API socket: %s\n",
			        strerror(errno));
			sl->api_dir[0] = '\0';
			return -1;
		}
		snprintf(api, sizeof(api), "--api-socket=%s/api.sock", sl->api_dir);
	}
	/* Its messages go to a file, read only when it fails to start: a pipe nobody reads
	 * would block it once full, and it says a few lines on every start. */
	sl->log_fd = memfd_create("cbox-slirp4netns-log", MFD_CLOEXEC);
	if (sl->log_fd < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(quit, O_CLOEXEC) < 0) {
		fprintf(stderr, "cbox-run: --network: %s\n", strerror(errno));
		goto fail;
	}
	char mtu[32], pid[32], ready_arg[32], exit_arg[32];
	snprintf(mtu, sizeof(mtu), "--mtu=%u", n->mtu);
	snprintf(pid, sizeof(pid), "%d", (int)sandbox);
	snprintf(ready_arg, sizeof(ready_arg), "--ready-fd=%d", 3);
	snprintf(exit_arg, sizeof(exit_arg), "--exit-fd=%d", 4);
	const char *argv[16];
	size_t a = 0;
	argv[a++] = slirp_program();
	argv[a++] = "--configure";
	argv[a++] = mtu;
	if (!n->allow_host_loopback)
		argv[a++] = "--disable-host-loopback";
	if (n->ipv6)
		argv[a++] = "--enable-ipv6";
	if (api[0])
		argv[a++] = api;
	argv[a++] = "--enable-sandbox";
	argv[a++] = "--enable-seccomp";
	argv[a++] = ready_arg;
	argv[a++] = exit_arg;
	argv[a++] = pid;
	argv[a++] = "tap0";
	argv[a] = NULL;
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "cbox-run: --network: %s\n", strerror(errno));
		goto fail;
	}
	if (child == 0) {
		/* Its own process group: a terminal's ^C is cbox-run's to pass on, not its. */
		setpgid(0, 0);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(sl->log_fd, 1) < 0 ||
		    dup2(sl->log_fd, 2) < 0 || dup2(ready[1], 3) < 0 || dup2(quit[0], 4) < 0)
			_exit(127);
		/* Nothing else of cbox-run's (the gofer's socket, a -t terminal) goes with it. */
		syscall(SYS_close_range, 5, ~0U, 0);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(child, child); /* (also done by the child: whichever runs first) */
	close(ready[1]);
	close(quit[0]);
	sl->pid = child;
	sl->ready_fd = ready[0];
	sl->exit_fd = quit[1];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (quit[i] >= 0)
			close(quit[i]);
	}
	if (sl->log_fd >= 0)
		close(sl->log_fd);
	sl->log_fd = -1;
	return -1;
}

/* What slirp4netns said, each line after "cbox-run: slirp4netns: ". */
static void print_log(int fd)
{
	char buf[4096];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return;
	buf[len] = '\0';
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "cbox-run: slirp4netns: %s\n", line);
}

/* One API request: 0 when slirp4netns's answer (in resp) has no "error", else -1 (resp has the
 * answer, or the error of the exchange). */
static int api_request(const struct cbox_run_slirp *sl, const char *req, char *resp, size_t size)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/api.sock", sl->api_dir);
	ssize_t got = 0, k;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	                write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
	                shutdown(fd, SHUT_WR) < 0
	            ? -1
	            : 0;
	int err = errno;
	while (r == 0 && got < (ssize_t)size - 1 &&
	       (k = read(fd, resp + got, size - 1 - (size_t)got)) > 0)
		got += k;
	if (got <= 0 && r == 0)
		err = errno;
	resp[got] = '\0';
	if (fd >= 0)
		close(fd);
	if (r == 0 && got > 0 && !strstr(resp, "\"error\""))
		return 0;
	if (got <= 0)
		snprintf(resp, size, "%s", err ? strerror(err) : "no answer");
	return -1;
}

/* The API socket's name and directory, once the forwards are made (slirp4netns keeps its
 * listening socket): nothing is left in /tmp even when cbox-run is killed. */
static void remove_api_dir(struct cbox_run_slirp *sl)
{
	if (!sl->api_dir[0])
		return;
	char sock[sizeof(sl->api_dir) + 16];
	snprintf(sock, sizeof(sock), "%s/api.sock", sl->api_dir);
	unlink(sock);
	rmdir(sl->api_dir);
	sl->api_dir[0] = '\0';
}

/* One forward of port on the host: 0, or -1 with slirp4netns's answer in resp. */
static int add_hostfwd(const struct cbox_run_slirp *sl, const struct cbox_run_publish *p,
                       unsigned port, char *resp, size_t size)
{
	char req[256];
	snprintf(req, sizeof(req),
	         "{\"execute\": \"add_hostfwd\", \"arguments\": {\"proto\": \"%s\", "
	         "\"host_addr\": \"%s\", \"host_port\": %u, \"guest_port\": %u}}",
	         p->udp ? "udp" : "tcp", p->host_addr, port, p->guest_port);
	return api_request(sl, req, resp, size);
}

/* A port of p's host address free now (the kernel's pick, as docker's allocator takes one of
 * the same range): 0 after saying why there is none. */
static unsigned free_port(const struct cbox_run_publish *p)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	inet_pton(AF_INET, p->host_addr, &a.sin_addr);
	int fd = socket(AF_INET, (p->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	int r = fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	                getsockname(fd, (struct sockaddr *)&a, &len) < 0
	            ? -1
	            : 0;
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (r == 0)
		return ntohs(a.sin_port);
	fprintf(stderr, "cbox-run: -p %s: no free port on %s: %s\n", p->arg, p->host_addr,
	        strerror(err));
	return 0;
}

/* A forward whose host port is cbox-run's to choose: a free one (tried again should another
 * process take it first), or the first free of a range. Says which it took. */
static int publish_chosen(const struct cbox_run_slirp *sl, const struct cbox_run_publish *p,
                          char *resp, size_t size)
{
	bool range = p->host_port != 0;
	unsigned tries = range ? p->host_port_end - p->host_port + 1 : 5;
	for (unsigned i = 0; i < tries; i++) {
		unsigned port = range ? p->host_port + i : free_port(p);
		if (port == 0)
			return -1;
		if (add_hostfwd(sl, p, port, resp, size) == 0) {
			fprintf(stderr, "cbox-run: -p %s: the guest's port %u/%s is at %s:%u\n",
			        p->arg, p->guest_port, p->udp ? "udp" : "tcp", p->host_addr, port);
			return 0;
		}
	}
	if (range)
		fprintf(stderr,
		        "cbox-run: -p %s: no port of %s:%u-%u could be taken; slirp4netns "
		        "said, for the last: %s\n",
		        p->arg, p->host_addr, p->host_port, p->host_port_end, resp);
	else
		fprintf(stderr, "cbox-run: -p %s: slirp4netns said: %s\n", p->arg, resp);
	return -1;
}

static int publish_ports(const struct cbox_run_net *n, struct cbox_run_slirp *sl)
{
	char resp[4096];
	for (size_t i = 0; i < n->n_publish; i++) {
		const struct cbox_run_publish *p = &n->publish[i];
		if (p->host_port && p->host_port == p->host_port_end) {
			if (add_hostfwd(sl, p, p->host_port, resp, sizeof(resp)) < 0) {
				fprintf(stderr,
				        "cbox-run: -p %s: %s:%u to %u/%s: slirp4netns said: %s\n",
				        p->arg, p->host_addr, p->host_port, p->guest_port,
				        p->udp ? "udp" : "tcp", resp);
				return -1;
			}
		} else if (publish_chosen(sl, p, resp, sizeof(resp)) < 0) {
			return -1;
		}
	}
	remove_api_dir(sl);
	return 0;
}

int cbox_run_net_ready(const struct cbox_run_net *n, struct cbox_run_slirp *sl)
{
	struct pollfd p = {.fd = sl->ready_fd, .events = POLLIN};
	int r;
	while ((r = poll(&p, 1, READY_MS)) < 0 && errno == EINTR)
		;
	char c = 0;
	ssize_t got = r > 0 ? read(sl->ready_fd, &c, 1) : -1;
	close(sl->ready_fd);
	sl->ready_fd = -1;
	if (got == 1 && c == '1') {
		if (n->ipv6)
			wait_v6(sl->sandbox);
		return publish_ports(n, sl);
	}
	/* Nothing in time (or not its "1"): it is killed. An end of file: it is leaving. */
	if (got != 0)
		kill(sl->pid, SIGKILL);
	if (r == 0)
		fprintf(stderr, "cbox-run: --network: slirp4netns did not start within %d s\n",
		        READY_MS / 1000);
	int status = 0;
	if (waitpid(sl->pid, &status, 0) == sl->pid) {
		sl->pid = -1;
		if (got == 0)
			fprintf(stderr,
			        "cbox-run: --network: slirp4netns failed (exit status %d)%s:\n",
			        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			        WIFEXITED(status) && WEXITSTATUS(status) == 127
			            ? " (is it installed? Debian's package slirp4netns)"
			            : "");
	}
	print_log(sl->log_fd);
	return -1;
}

void cbox_run_net_stop(struct cbox_run_slirp *sl)
{
	/* The end of its exit fd (a hang-up) makes it leave once it runs; before it said it was
	 * ready it may not look there yet, and is killed. */
	bool unready = sl->ready_fd >= 0;
	if (unready)
		close(sl->ready_fd);
	if (sl->exit_fd >= 0)
		close(sl->exit_fd);
	if (sl->pid > 0) {
		if (unready)
			kill(sl->pid, SIGKILL);
		while (waitpid(sl->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (sl->log_fd >= 0)
		close(sl->log_fd);
	remove_api_dir(sl);
	*sl = (struct cbox_run_slirp){.pid = -1, .exit_fd = -1, .ready_fd = -1, .log_fd = -1};
}
