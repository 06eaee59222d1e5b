/*
 * cbox-run's command line and the defaults a new user gets: the host root read-only with its
 * secrets hidden, the working folder writable, a private /tmp, no network, an environment that
 * holds nothing the caller did not pass on purpose. The tree the guest sees is built from the
 * options in cbox_run_tree.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/log.h"
#include "cbox/path.h"
#include "cbox/sentry.h"
#include "cbox_proxy.h"
#include "cbox_run.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#define SYNOPSIS "Usage: cbox-run [OPTIONS] -- PROGRAM [ARGS...]\n"

/* After a mistake on the command line: the synopsis and where the rest is, as GNU tools and
 * docker answer one, rather than the whole help (which would bury the message above it). */
static void usage_hint(void)
{
	fprintf(stderr, SYNOPSIS "Try 'cbox-run --help' for more information.\n");
}

static void usage(FILE *f)
{
	fprintf(
	    f, SYNOPSIS
	    "Run PROGRAM in a new cbox sandbox: a user-space kernel (the sentry) answers its\n"
	    "system calls. It sees the host's root read-only with secrets hidden (/root, /home\n"
	    "but the working folder, /etc/shadow*, /etc/gshadow*, /etc/ssh, /run, /var/lib; and\n"
	    "~/.ssh, ~/.aws, ~/.gnupg and other credentials of each home the working folder\n"
	    "holds), the working folder writable, an empty /tmp, its own home (/root for\n"
	    "root, as /etc/passwd names it) empty and writable, no network but its own\n"
	    "loopback (see --allow-net and --network; its name, cbox, is in its own\n"
	    "/etc/hostname and /etc/hosts), and an environment of PATH, HOME=/tmp/home, TERM\n"
	    "and LANG only. It starts as root with a container root's capabilities (or as\n"
	    "--user) and may become any user (su, setpriv); the owners it gives files (chown,\n"
	    "tar xf) are the sandbox's to show: on the host, what it writes is yours.\n\n"
	    "  -v, --volume HOST:GUEST[:ro]  bind a host path into the guest (writable unless "
	    ":ro);\n"
	    "                             GUEST: not /, nor in /proc, /sys, /dev (/dev/shm is)\n"
	    "                             e.g. cbox-run -v \"$PWD/data:/data:ro\" -- ls /data\n"
	    "  -u, --user USER[:GROUP]    start the program as USER (a name of the rootfs's\n"
	    "                             /etc/passwd, or a number) instead of root, as docker\n"
	    "                             run -u: the working folder and HOME are then its own\n"
	    "                             (with --tier=ns it is that host user, as under docker)\n"
	    "                             e.g. cbox-run -u 1000 -- id\n"
	    "                             (without :GROUP, the groups of /etc/group that list\n"
	    "                             USER are its supplementary groups, as under docker)\n"
	    "  --group-add GROUP          one more supplementary group (a name of the rootfs's\n"
	    "                             /etc/group, or a number), as docker run --group-add\n"
	    "                             e.g. cbox-run -u 1000 --group-add video -- id\n"
	    "  -w, --workdir DIR          the working folder (default: the current directory):\n"
	    "                             the guest starts there and may write there\n"
	    "                             e.g. cbox-run --workdir ~/project -- make\n"
	    "  --no-init                  run the program as pid 1 of the sandbox, as in a\n"
	    "                             container without --init: it then ignores every signal\n"
	    "                             it has no handler for (^C, SIGTERM, SIGPIPE, its own\n"
	    "                             kill). By default a tiny init is pid 1: it passes\n"
	    "                             signals on and reaps orphans, and the program, pid 2,\n"
	    "                             gets signals as outside (--init says so explicitly)\n"
	    "                             e.g. cbox-run --no-init -- sh -c 'echo $$'\n"
	    "  --ro                       keep the working folder read-only too\n"
	    "                             e.g. cbox-run --ro -- git log --oneline\n"
	    "  -t, --tty                  give the program a terminal of its own (a pty cbox-run\n"
	    "                             relays to yours): for shells and editors\n"
	    "                             e.g. cbox-run -t -- bash\n"
	    "  --overlay                  make the root writable through a throwaway layer: "
	    "writes\n"
	    "                             land in the sandbox's memory and vanish with it (run\n"
	    "                             by a user, other users' files stay read-only)\n"
	    "                             e.g. cbox-run --overlay -- make install\n"
	    "  --hide PATH                show PATH empty inside (repeatable): what PATH\n"
	    "                             leads to, through its symlinks, is hidden under\n"
	    "                             every name it has\n"
	    "                             e.g. cbox-run --hide \"$PWD/.env\" -- npm test\n"
	    "  -e, --env NAME[=VALUE]     pass NAME (with VALUE, or the caller's value)\n"
	    "                             e.g. cbox-run --env API_TOKEN -- ./deploy.sh\n"
	    "  --env-file FILE            pass the variables of FILE, one NAME=VALUE or NAME\n"
	    "                             a line (# starts a comment line; values are taken\n"
	    "                             as written, quotes too), as docker run --env-file;\n"
	    "                             read before every --env, which overrides them\n"
	    "                             e.g. cbox-run --env-file .env -- python3 app.py\n"
	    "  --network none|slirp4netns[:OPTIONS]  none (default): loopback only, a connect\n"
	    "                             out fails (ENETUNREACH); slirp4netns: a way out through\n"
	    "                             slirp4netns (the Debian package), as rootless Podman:\n"
	    "                             the guest is 10.0.2.100, DNS 10.0.2.3, and the\n"
	    "                             host's 127.0.0.1 stays out of reach unless\n"
	    "                             allow_host_loopback=true (then at 10.0.2.2); OPTIONS,\n"
	    "                             comma-separated: allow_host_loopback=true|false,\n"
	    "                             enable_ipv6=true|false, mtu=N (default 65520)\n"
	    "                             e.g. cbox-run --network slirp4netns -- pip download six\n"
	    "  --allow-net HOST[:PORT],...  a way out to these hosts only, through a proxy that\n"
	    "                             HTTP_PROXY and HTTPS_PROXY name (CONNECT, and http://\n"
	    "                             URLs; the host resolves names); HOST: a name, *.DOMAIN\n"
	    "                             (its subdomains), an IPv4 address or [an IPv6 one]; any\n"
	    "                             port unless given; a name that resolves to the host's\n"
	    "                             loopback is refused (name localhost or 127.0.0.1 to\n"
	    "                             allow it); refusals are said on stderr, and with\n"
	    "                             --log-level info each connection let through too\n"
	    "                             e.g. cbox-run --allow-net registry.npmjs.org -- npm ci\n"
	    "  -p, --publish [[HOSTIP:][HOSTPORT]:]PORT[/tcp|/udp]  with --network slirp4netns:\n"
	    "                             the guest's PORT at HOSTPORT of the host, on HOSTIP\n"
	    "                             (default 127.0.0.1: docker's 0.0.0.0 would show an\n"
	    "                             unreviewed program's server to the whole network; give\n"
	    "                             0.0.0.0); without HOSTPORT a free port, which cbox-run\n"
	    "                             names on stderr; ports may be ranges (8000-8009), as in\n"
	    "                             docker run\n"
	    "                             e.g. cbox-run --network slirp4netns -p 8000:8000 --\n"
	    "                             python3 -m http.server\n"
	    "  --timeout DURATION         kill the sandbox after DURATION (s, ms, m; default s);\n"
	    "                             exit status 137 e.g. cbox-run --timeout 10s -- ./task\n"
	    "  --memory SIZE              limit the sandbox's memory (k, m, g); the guest is "
	    "killed\n"
	    "                             with exit status 137 when it needs more\n"
	    "                             e.g. cbox-run --memory 512m -- python3 train.py\n"
	    "  --memory-swap SIZE         memory plus swap (default: the --memory value, no swap;\n"
	    "                             -1: unlimited swap) e.g. cbox-run --memory 256m "
	    "--memory-swap 1g -- ./build\n"
	    "  --cpus N                   CPU time, in CPUs (a fraction is fine): a quota over a\n"
	    "                             100 ms period e.g. cbox-run --cpus 0.5 -- make -j4\n"
	    "  --pids N                   at most N processes and threads (the sentry's and the\n"
	    "                             gofer's count too): a fork bomb gets EAGAIN\n"
	    "                             e.g. cbox-run --pids 64 -- bash ./script.sh\n"
	    "  --tier=sentry|ns           sentry (default): the user-space kernel; ns: plain\n"
	    "                             namespaces, like runc (same view, limits and timeout;\n"
	    "                             weaker isolation: the host kernel answers every call;\n"
	    "                             a seccomp profile refuses what Docker's refuses, and\n"
	    "                             set-user-ID and set-group-ID bits: EPERM); run by a\n"
	    "                             user, as root of a user namespace mapping your ids,\n"
	    "                             without -u, limits or --network, as rootless runc\n"
	    "                             e.g. cbox-run --tier=ns --memory 256m -- ./task\n"
	    "  --platform=seccomp|ptrace  how guest syscalls are trapped (default: seccomp)\n"
	    "                             e.g. cbox-run --platform=ptrace -- /bin/busybox true\n"
	    "  --strict                   no fast path: the sentry sees every syscall (on the\n"
	    "                             seccomp platform, all but pause, sigsuspend, sleeps, "
	    "poll,\n"
	    "                             select and epoll waits, which a trap would make "
	    "restart)\n"
	    "                             e.g. cbox-run --strict -- /bin/busybox ls /\n"
	    "  --strace                   print each guest syscall and what the sentry did\n"
	    "                             e.g. cbox-run --strace -- /bin/busybox true\n"
	    "  --rootfs DIR               the guest's root file system, read-only (default: /;\n"
	    "                             the working folder is then the rootfs's /)\n"
	    "                             e.g. cbox-run --rootfs /srv/rootfs -- /bin/sh\n"
	    "  --log-level=LEVEL          error, warning (default), info or debug\n"
	    "  --log-format=FORMAT        text (default) or json\n"
	    "  -h, --help                 this help\n"
	    "  --version                  cbox-run's version\n\n"
	    "Exit status: the program's; 128+N when it was killed by signal N; 127 when it does\n"
	    "not exist; 126 when it cannot be executed; 137 after --timeout or when the memory\n"
	    "limit was reached (the message says which); 125 when the sandbox could not be set\n"
	    "up. The limits use a cgroup (cbox/run-PID, removed at the end) and need root.\n"
	    "\n"
	    "Signals: SIGINT (^C), SIGTERM, SIGHUP and SIGQUIT are passed on to the program\n"
	    "(with --no-init it is pid 1 and gets only the ones it handles, as in a container);\n"
	    "a second one kills the whole sandbox (exit status 128+N). ^Z (SIGTSTP) stops the\n"
	    "program with cbox-run, and fg or bg continues both.\n"
	    "With --tier=ns a SIGQUIT kills the container at once, and ^Z stops every process\n"
	    "of the container with cbox-run.\n");
}

static int push(void **v, size_t *n, size_t size, const void *item)
{
	void *nv = realloc(*v, (*n + 1) * size);
	if (!nv)
		return -1;
	memcpy((char *)nv + *n * size, item, size);
	*v = nv;
	(*n)++;
	return 0;
}

int cbox_run_push_str(char ***v, size_t *n, const char *s)
{
	char *copy = strdup(s);
	if (!copy || push((void **)v, n, sizeof(char *), &copy) < 0) {
		free(copy);
		return -1;
	}
	return 0;
}

/*
 * --env-file FILE, read as docker run reads one: a line per variable, NAME=VALUE (VALUE as
 * written, up to the line's end: no quotes removed, no variables expanded) or NAME alone (the
 * caller's value, if it has one); leading white space ignored, blank lines and lines starting
 * with # skipped, a CR before the line's end dropped. A name with white space in it, or none
 * before the =, is an error, as are NUL bytes (no environment can hold them).
 */
static int read_env_file(struct cbox_run_opts *o, const char *file)
{
	FILE *f = fopen(file, "re");
	if (!f) {
		fprintf(stderr, "cbox-run: --env-file %s: %s\n", file, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;
	for (unsigned no = 1; r == 0 && (len = getline(&line, &cap, f)) >= 0; no++) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		char *l = line;
		if (no == 1 && strncmp(l, "\xef\xbb\xbf", 3) == 0)
			l += 3; /* a UTF-8 byte order mark */
		while (*l == ' ' || *l == '\t' || *l == '\v' || *l == '\f')
			l++;
		if (*l == '\0' || *l == '#')
			continue;
		size_t name_len = strcspn(l, "=");
		if (strlen(l) != (size_t)(len - (l - line))) {
			fprintf(stderr, "cbox-run: --env-file %s: line %u holds a NUL byte\n", file,
			        no);
			r = -1;
		} else if (name_len == 0) {
			fprintf(stderr,
			        "cbox-run: --env-file %s: line %u: no variable name before =\n",
			        file, no);
			r = -1;
		} else if (strcspn(l, " \t\v\f") < name_len) {
			fprintf(
			    stderr,
			    "cbox-run: --env-file %s: line %u: the variable name '%.*s' contains "
			    "white space\n",
			    file, no, (int)name_len, l);
			r = -1;
		} else {
			r = cbox_run_push_str(&o->env_file, &o->n_env_file, l);
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "cbox-run: --env-file %s: %s\n", file, strerror(errno));
		r = -1;
	}
	free(line);
	fclose(f);
	return r;
}

/* HOST:GUEST[:ro|:rw]; both absolute. */
static int parse_volume(struct cbox_run_opts *o, const char *arg)
{
	char *spec = strdup(arg);
	if (!spec)
		return -1;
	char *guest = strchr(spec, ':');
	char *mode = guest ? strchr(guest + 1, ':') : NULL;
	if (guest)
		*guest++ = '\0';
	if (mode)
		*mode++ = '\0';
	bool ro = mode && strcmp(mode, "ro") == 0;
	if (!guest || spec[0] != '/' || guest[0] != '/' ||
	    (mode && strcmp(mode, "ro") != 0 && strcmp(mode, "rw") != 0)) {
		fprintf(stderr,
		        "cbox-run: -v %s: expected HOST:GUEST[:ro|:rw] with absolute paths\n", arg);
		free(spec);
		return -1;
	}
	/* The guest path as the tree will hold it ("/tmp/../proc" is /proc). / is the rootfs's
	 * place (--rootfs), and the sentry's own /proc, /sys and /dev (not /dev/shm) would cover a
	 * volume there: it never showed (the ns tier failed to start on it), so both tiers refuse
	 * it here, by name. */
	char *target = cbox_path_clean(guest);
	const char *why = NULL;
	if (target && strcmp(target, "/") == 0)
		why = "the root is the rootfs (--rootfs)";
	else if (target && cbox_sentry_serves_path(target))
		why = "/proc, /sys and /dev are the sandbox's own (a volume may go below /dev/shm)";
	if (!target || why) {
		if (why)
			fprintf(stderr, "cbox-run: -v %s: no volume at %s: %s\n", arg, target, why);
		free(target);
		free(spec);
		return -1;
	}
	char *host = realpath(spec, NULL);
	if (!host) {
		fprintf(stderr, "cbox-run: -v %s: %s: %s\n", arg, spec, strerror(errno));
		free(target);
		free(spec);
		return -1;
	}
	struct cbox_gofer_mount m = {
	    .kind = CBOX_GOFER_MOUNT_BIND, .source = host, .target = target, .readonly = ro};
	free(spec);
	return push((void **)&o->mounts, &o->n_mounts, sizeof(m), &m);
}

/* "10", "10s", "500ms", "2m" -> milliseconds; 0 on a malformed or zero duration. */
static unsigned parse_duration(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return 0;
	double ms = strcmp(end, "ms") == 0                  ? v
	            : strcmp(end, "s") == 0 || *end == '\0' ? v * 1000
	            : strcmp(end, "m") == 0                 ? v * 60000
	            : strcmp(end, "h") == 0                 ? v * 3600000
	                                                    : 0;
	return ms >= 1 && ms < 4e9 ? (unsigned)ms : 0;
}

/* --memory, --memory-swap, --cpus, --pids. */
static int parse_limit(struct cbox_run_opts *o, int c, const char *arg)
{
	char *end;
	switch (c) {
	case 'M':
		if (cbox_cgroup_parse_size(arg, &o->memory) == 0)
			return 0;
		break;
	case 'W':
		if (strcmp(arg, "-1") == 0) {
			o->memory_swap = -1;
			return 0;
		}
		if (cbox_cgroup_parse_size(arg, &o->memory_swap) == 0)
			return 0;
		break;
	case 'C':
		errno = 0;
		o->cpus = strtod(arg, &end);
		if (!errno && end != arg && !*end &&
		    cbox_cgroup_cpus_to_quota(o->cpus, 100000, &o->cpu_quota) == 0)
			return 0;
		fprintf(
		    stderr,
		    "cbox-run: --cpus %s: expected a number of CPUs from 0.01 to 1024, like 0.5 "
		    "or 2\n",
		    arg);
		return -1;
	case 'P':
		errno = 0;
		o->pids = strtoll(arg, &end, 10);
		if (!errno && end != arg && !*end && o->pids > 0)
			return 0;
		fprintf(stderr, "cbox-run: --pids %s: expected a number of processes above 0\n",
		        arg);
		return -1;
	}
	fprintf(stderr, "cbox-run: --%s %s: expected a size like 512m, 2g or 100k\n",
	        c == 'M' ? "memory" : "memory-swap", arg);
	return -1;
}

static int parse_level_format(struct cbox_run_opts *o, int c, const char *arg)
{
	if (c == 'l' && (o->level = cbox_log_level_parse(arg)) < 0) {
		fprintf(stderr, "cbox-run: unknown log level '%s'\n", arg);
		return -1;
	}
	if (c == 'f' && (o->format = cbox_log_format_parse(arg)) < 0) {
		fprintf(stderr, "cbox-run: unknown log format '%s'\n", arg);
		return -1;
	}
	return 0;
}

static int parse_one(struct cbox_run_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'Q':
		o->platform = arg;
		return 0;
	case 'p':
		return cbox_run_net_publish(&o->net, arg);
	case 'A':
		return cbox_run_allow_net(&o->net, arg);
	case 'N':
		if (strcmp(arg, "sentry") != 0 && strcmp(arg, "ns") != 0) {
			fprintf(stderr,
			        "cbox-run: --tier %s: unknown tier (sentry or ns; `cbox tiers` "
			        "lists what this host supports)\n",
			        arg);
			return -1;
		}
		o->tier = arg;
		return 0;
	case 's':
		o->strict = true;
		return 0;
	case 'S':
		o->strace = true;
		return 0;
	case 'r':
		o->rootfs = arg;
		return 0;
	case 'l':
	case 'f':
		return parse_level_format(o, c, arg);
	case 'v':
		return parse_volume(o, arg);
	case 'w':
		o->workdir = arg;
		return 0;
	case 'u':
		o->user = arg;
		return 0;
	case 'g':
		return cbox_run_push_str(&o->group_add, &o->n_group_add, arg);
	case 'R':
		o->workdir_ro = true;
		return 0;
	case 'O':
		o->overlay = true;
		return 0;
	case 't':
		o->tty = true;
		return 0;
	case 'I':
		o->init = 1;
		return 0;
	case 'i':
		o->init = 0;
		return 0;
	case 'H':
		if (arg[0] != '/') {
			fprintf(stderr, "cbox-run: --hide %s: the path must be absolute\n", arg);
			return -1;
		}
		return cbox_run_push_str(&o->hide, &o->n_hide, arg);
	case 'e':
		if (arg[0] == '\0' || arg[0] == '=') {
			fprintf(stderr, "cbox-run: --env '%s': expected NAME[=VALUE]\n", arg);
			return -1;
		}
		return cbox_run_push_str(&o->env, &o->n_env, arg);
	case 'E':
		return read_env_file(o, arg);
	case 'n':
		return cbox_run_net_parse(&o->net, arg);
	case 'T':
		if ((o->timeout_ms = parse_duration(arg)) == 0) {
			fprintf(stderr,
			        "cbox-run: --timeout %s: expected a duration like 10s, "
			        "500ms or 2m\n",
			        arg);
			return -1;
		}
		return 0;
	case 'M':
	case 'W':
	case 'C':
	case 'P':
		return parse_limit(o, c, arg);
	case 'h':
		usage(stdout);
		exit(0);
	case 'V':
		printf("cbox-run version %s\n", CBOX_VERSION);
		exit(0);
	default:
		usage_hint(); /* (getopt named the option) */
		return -1;
	}
}

int cbox_run_parse(int argc, char **argv, struct cbox_run_opts *o)
{
	static const struct option longopts[] = {{"platform", required_argument, NULL, 'Q'},
	                                         {"tier", required_argument, NULL, 'N'},
	                                         {"strict", no_argument, NULL, 's'},
	                                         {"strace", no_argument, NULL, 'S'},
	                                         {"rootfs", required_argument, NULL, 'r'},
	                                         {"log-level", required_argument, NULL, 'l'},
	                                         {"log-format", required_argument, NULL, 'f'},
	                                         {"volume", required_argument, NULL, 'v'},
	                                         {"workdir", required_argument, NULL, 'w'},
	                                         {"user", required_argument, NULL, 'u'},
	                                         {"group-add", required_argument, NULL, 'g'},
	                                         {"ro", no_argument, NULL, 'R'},
	                                         {"overlay", no_argument, NULL, 'O'},
	                                         {"tty", no_argument, NULL, 't'},
	                                         {"init", no_argument, NULL, 'I'},
	                                         {"no-init", no_argument, NULL, 'i'},
	                                         {"hide", required_argument, NULL, 'H'},
	                                         {"env", required_argument, NULL, 'e'},
	                                         {"env-file", required_argument, NULL, 'E'},
	                                         {"timeout", required_argument, NULL, 'T'},
	                                         {"network", required_argument, NULL, 'n'},
	                                         {"net", required_argument, NULL, 'n'},
	                                         {"publish", required_argument, NULL, 'p'},
	                                         {"allow-net", required_argument, NULL, 'A'},
	                                         {"memory", required_argument, NULL, 'M'},
	                                         {"memory-swap", required_argument, NULL, 'W'},
	                                         {"cpus", required_argument, NULL, 'C'},
	                                         {"pids", required_argument, NULL, 'P'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {"version", no_argument, NULL, 'V'},
	                                         {NULL, 0, NULL, 0}};
	*o = (struct cbox_run_opts){.platform = "seccomp",
	                            .tier = "sentry",
	                            .rootfs = "/",
	                            .level = CBOX_LOG_WARNING,
	                            .init = -1,
	                            .net = {.mtu = 65520}};
	int c;
	while ((c = getopt_long(argc, argv, "+htv:w:e:u:p:", longopts, NULL)) != -1)
		if (parse_one(o, c, optarg) < 0)
			return -1;
	/* The program is not pid 1 unless asked (--no-init): a pid 1 ignores every signal it has
	 * no handler for, which outside it would get (^C, SIGPIPE, its own kill). The ns tier is
	 * `cbox run`'s container, whose process is pid 1 as in any container. */
	if (o->init < 0)
		o->init = strcmp(o->tier, "sentry") == 0;
	if (o->memory_swap && !o->memory) {
		fprintf(stderr, "cbox-run: --memory-swap needs --memory\n");
		return -1;
	}
	if (o->memory_swap > 0 && o->memory_swap < o->memory) {
		fprintf(stderr,
		        "cbox-run: --memory-swap must be at least --memory: it counts memory plus "
		        "swap\n");
		return -1;
	}
	if (o->net.n_publish && !o->net.slirp) {
		fprintf(stderr, "cbox-run: -p needs a way in: --network slirp4netns\n");
		return -1;
	}
	if (o->net.n_allow && o->net.slirp) {
		fprintf(stderr, "cbox-run: --allow-net limits the way out to the hosts it names, "
		                "and --network slirp4netns opens it to every host: give one of "
		                "them\n");
		return -1;
	}
	if (cbox_run_resolve_user(o) < 0)
		return -1;
	if (optind >= argc) {
		fprintf(stderr, "cbox-run: no program given\n");
		usage_hint();
		return -1;
	}
	return optind;
}

static int env_add(char ***v, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);
	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", name, value);
	/* A later setting of the same name replaces the earlier one. */
	size_t nl = strlen(name);
	for (size_t i = 0; i < *n; i++)
		if (strncmp((*v)[i], name, nl) == 0 && (*v)[i][nl] == '=') {
			free((*v)[i]);
			(*v)[i] = s;
			return 0;
		}
	if (push((void **)v, n, sizeof(char *), &s) < 0) {
		free(s);
		return -1;
	}
	return 0;
}

int cbox_run_sibling(const char *name, char *buf, size_t n)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k < 0) {
		snprintf(buf, n, "%s", name);
		return -1;
	}
	self[k] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	int w = snprintf(buf, n, "%s/%s", self, name);
	return w < 0 || (size_t)w >= n ? -1 : access(buf, X_OK);
}

char **cbox_run_env(struct cbox_run_opts *o)
{
	char **v = NULL;
	size_t n = 0;
	const char *path = getenv("PATH"), *term = getenv("TERM"), *lang = getenv("LANG");
	int r = env_add(&v, &n, "PATH", path && *path ? path : DEFAULT_PATH);
	r |= env_add(&v, &n, "HOME", CBOX_RUN_GUEST_HOME);
	if (term)
		r |= env_add(&v, &n, "TERM", term);
	r |= env_add(&v, &n, "LANG", lang ? lang : "C.UTF-8");
	/* --allow-net: the proxy, which programs find by these names (before --env's, which may
	 * replace them); the sandbox's own loopback is reached directly. */
	if (o->net.n_allow) {
		char url[64];
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", CBOX_PROXY_PORT);
		static const char *const names[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
		                                    "https_proxy"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			r |= env_add(&v, &n, names[i], url);
		r |= env_add(&v, &n, "NO_PROXY", "localhost,127.0.0.1,::1");
		r |= env_add(&v, &n, "no_proxy", "localhost,127.0.0.1,::1");
	}
	/* --env-file's first, then --env's, whatever their order on the command line (docker's
	 * rule): a later setting of a name replaces an earlier one. */
	for (size_t i = 0; i < o->n_env_file + o->n_env && r == 0; i++) {
		const char *e = i < o->n_env_file ? o->env_file[i] : o->env[i - o->n_env_file];
		const char *eq = strchr(e, '=');
		size_t nl = eq ? (size_t)(eq - e) : strlen(e);
		char *name = strndup(e, nl);
		if (!name) {
			r = -1;
			break;
		}
		const char *value = eq ? eq + 1 : getenv(name);
		if (value)
			r |= env_add(&v, &n, name, value);
		free(name);
	}
	char *end = NULL;
	if (r == 0)
		r = push((void **)&v, &n, sizeof(char *), &end);
	o->envp = v;
	return r < 0 ? NULL : v;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void cbox_run_opts_free(struct cbox_run_opts *o)
{
	for (size_t i = 0; i < o->n_mounts; i++) {
		free((char *)o->mounts[i].source);
		free((char *)o->mounts[i].target);
	}
	free(o->mounts);
	free_strv(o->hide, o->n_hide);
	free_strv(o->env, o->n_env);
	free_strv(o->env_file, o->n_env_file);
	free_strv(o->group_add, o->n_group_add);
	free(o->groups);
	free(o->tree);
	free(o->resolv_conf);
	free(o->net.publish);
	free_strv(o->net.allow, o->net.n_allow);
	size_t n = 0;
	while (o->envp && o->envp[n])
		n++;
	free_strv(o->envp, n);
	*o = (struct cbox_run_opts){0};
}
