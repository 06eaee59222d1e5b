/*
 * `cbox exec [--process FILE] [--detach] [--pid-file F] [--console-socket S] [--tty] [--cwd D]
 * [--env K=V]... [--user UID[:GID]] [--additional-gids G]... [--cap C]... [--no-new-privs] ID
 * [CMD ARGS...]`, as runc's: a new process in a running container. --process gives the whole
 * process (what containerd's shim passes for `docker exec`); without it the container's own
 * process (its saved config.json) is the base, with CMD and the options over it. Without
 * --detach cbox waits and exits with the process's status (128 + the signal that killed it).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "cbox_run.h"
#include "oci_cli.h"

#define MAX_PROCESS_JSON (4 << 20)

struct exec_opts {
	const char *process_file, *pid_file, *console_socket, *cwd, *user;
	bool detach, tty, no_new_privs;
	char **env; /* the --env values, NULL-terminated */
	size_t n_env;
	uint64_t caps;     /* --cap */
	uint32_t gids[64]; /* --additional-gids */
	size_t n_gids;
};

static int read_process(const char *file, struct cbox_oci_process *p, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "--process: open %s", file);
	CBOX_AUTOFREE char *buf = NULL;
	size_t len = 0;
	int r = cbox_oci_read_fd(fd, MAX_PROCESS_JSON, &buf, &len);
	if (r == -EFBIG)
		return cbox_err_set(err, EFBIG, "--process: %s is larger than %d bytes", file,
		                    MAX_PROCESS_JSON);
	if (r < 0)
		return cbox_err_set(err, -r, "--process: read %s", file);
	return cbox_oci_process_parse(buf, len, file, p, err);
}

/* A NULL-terminated copy of v[0..n). */
static char **strv_dup(char *const *v, size_t n)
{
	char **out = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; out && i < n; i++)
		if (!(out[i] = strdup(v[i]))) {
			for (size_t k = 0; k < i; k++)
				free(out[k]);
			free(out);
			return NULL;
		}
	return out;
}

/* Set K=V in p's environment: replace K's entry, else append. */
static int env_set(struct cbox_oci_process *p, const char *kv, struct cbox_err **err)
{
	size_t klen = strcspn(kv, "=");
	if (!kv[klen] || !klen)
		return cbox_err_set(err, 0, "--env: '%s' is not KEY=VALUE", kv);
	char *copy = strdup(kv);
	if (!copy)
		return cbox_err_set(err, ENOMEM, "--env");
	for (size_t i = 0; i < p->n_env; i++)
		if (!strncmp(p->env[i], kv, klen + 1)) {
			free(p->env[i]);
			p->env[i] = copy;
			return 0;
		}
	char **env = realloc(p->env, (p->n_env + 2) * sizeof(char *));
	if (!env) {
		free(copy);
		return cbox_err_set(err, ENOMEM, "--env");
	}
	env[p->n_env++] = copy;
	env[p->n_env] = NULL;
	p->env = env;
	return 0;
}

static int parse_id(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > UINT32_MAX || *s == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* runc's `exec` without --process: the container's process from its config.json, with CMD and
 * the options over it. */
static int process_from_config(struct cbox_oci_config *cfg, const struct exec_opts *o, char **cmd,
                               size_t n_cmd, struct cbox_oci_process *p, struct cbox_err **err)
{
	*p = cfg->process;
	memset(&cfg->process, 0, sizeof(cfg->process)); /* p owns it now */
	char **args = strv_dup(cmd, n_cmd);
	if (!args)
		return cbox_err_set(err, ENOMEM, "exec");
	for (size_t i = 0; p->args && p->args[i]; i++)
		free(p->args[i]);
	free(p->args);
	p->args = args;
	p->n_args = n_cmd;
	if (o->cwd) {
		if (o->cwd[0] != '/')
			return cbox_err_set(err, 0, "--cwd: '%s' must be an absolute path", o->cwd);
		char *cwd = strdup(o->cwd);
		if (!cwd)
			return cbox_err_set(err, ENOMEM, "--cwd");
		free(p->cwd);
		p->cwd = cwd;
	}
	for (size_t i = 0; i < o->n_env; i++)
		if (env_set(p, o->env[i], err) < 0)
			return -1;
	p->terminal = o->tty;
	if (o->no_new_privs)
		p->no_new_privileges = true;
	if (o->user) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", o->user);
		char *gid = strchr(buf, ':');
		if (gid)
			*gid++ = '\0';
		if (parse_id(buf, &p->user.uid) < 0 || (gid && parse_id(gid, &p->user.gid) < 0))
			return cbox_err_set(err, 0, "--user: '%s' is not UID[:GID] (numbers)",
			                    o->user);
	}
	if (o->n_gids) {
		uint32_t *g = malloc(o->n_gids * sizeof(*g));
		if (!g)
			return cbox_err_set(err, ENOMEM, "--additional-gids");
		memcpy(g, o->gids, o->n_gids * sizeof(*g));
		free(p->user.additional_gids);
		p->user.additional_gids = g;
		p->user.n_additional_gids = o->n_gids;
	}
	p->caps.bounding |= o->caps;
	p->caps.effective |= o->caps;
	p->caps.permitted |= o->caps;
	return 0;
}

static volatile sig_atomic_t forward_pid;

static void forward(int sig)
{
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

/* Wait for pid, passing on the signals a caller sends to stop it; its status as a shell's. */
static int wait_process(pid_t pid)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	forward_pid = pid;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(sigs); i++)
		signal(sigs[i], forward);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* The checks runc makes before it starts anything. */
static int check(const struct exec_opts *o, const struct cbox_oci_process *p,
                 const struct cbox_tier_ops *tier, enum cbox_tier_status s, const char *id,
                 struct cbox_err **err)
{
	if (!tier->exec)
		return cbox_err_set(err, 0, "exec into a %s container is not supported yet",
		                    tier->name);
	if (s == CBOX_TIER_STOPPED)
		return cbox_err_set(err, 0, "cannot exec in a stopped container (%s)", id);
	if (s == CBOX_TIER_PAUSED)
		return cbox_err_set(err, 0, "cannot exec in a paused container (%s)", id);
	if (s != CBOX_TIER_RUNNING && s != CBOX_TIER_CREATED)
		return cbox_err_set(err, 0, "container %s is %s: cannot exec in it", id,
		                    cbox_tier_status_name(s));
	if (p->terminal && !o->console_socket && o->detach)
		return cbox_err_set(err, 0,
		                    "a terminal with --detach needs --console-socket (no one would "
		                    "hold the terminal's other end)");
	if (!p->terminal && o->console_socket)
		return cbox_err_set(err, 0,
		                    "--console-socket without a terminal (process.terminal or "
		                    "--tty)");
	return 0;
}

/* do_exec: the process's pid, and the master of its terminal when cbox relays it (else -1). */
static int do_exec(const struct cbox_oci_global *g, const struct exec_opts *o, const char *id,
                   char **cmd, size_t n_cmd, pid_t *pid, int *master, struct cbox_err **err)
{
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	enum cbox_tier_status s;
	CBOX_AUTO(cbox_oci_config) *cfg = NULL;
	struct cbox_oci_process p = {0};
	CBOX_AUTOCLOSE int console = -1;
	if (cbox_oci_container_open(g, id, &st, &tier, &c, &s, err) < 0)
		return -1;
	/* The config the container was created with (create saved a copy), not the bundle's
	 * current one: its seccomp filter and namespaces are the container's. */
	int r = cbox_oci_config_load(st.dir, &cfg, err);
	if (r == 0 && o->process_file)
		r = read_process(o->process_file, &p, err);
	else if (r == 0 && !n_cmd)
		r = cbox_err_set(err, 0, "no command given (cbox exec ID CMD [ARGS...])");
	else if (r == 0)
		r = process_from_config(cfg, o, cmd, n_cmd, &p, err);
	if (r == 0)
		r = check(o, &p, tier, s, id, err);
	int relay[2] = {-1, -1};
	if (r == 0 && o->console_socket &&
	    (console = cbox_oci_console_connect(o->console_socket, err)) < 0)
		r = -1;
	else if (r == 0 && p.terminal && !o->console_socket) {
		/* No console socket: cbox is the other end of the terminal itself, as runc is. */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, relay) < 0)
			r = cbox_err_set(err, errno, "exec: socketpair");
		console = relay[1];
	}
	if (r == 0) {
		struct cbox_tier_exec x = {.process = &p, .console_sock = console};
		c.config = cfg;
		r = tier->exec(&c, &x, pid, err);
	}
	if (r == 0 && relay[0] >= 0 && (*master = cbox_oci_console_recv(relay[0], err)) < 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		r = -1;
	}
	if (relay[0] >= 0)
		close(relay[0]);
	cbox_oci_process_release(&p);
	cbox_oci_state_release(&st);
	return r;
}

/* runc's exec options into *o (env must hold argc entries); the index of ID, or -1. */
static int parse_opts(int argc, char **argv, struct exec_opts *o)
{
	static const struct option opts[] = {{"process", required_argument, NULL, 'p'},
	                                     {"detach", no_argument, NULL, 'd'},
	                                     {"pid-file", required_argument, NULL, 'P'},
	                                     {"console-socket", required_argument, NULL, 'C'},
	                                     {"tty", no_argument, NULL, 't'},
	                                     {"cwd", required_argument, NULL, 'w'},
	                                     {"env", required_argument, NULL, 'e'},
	                                     {"user", required_argument, NULL, 'u'},
	                                     {"additional-gids", required_argument, NULL, 'g'},
	                                     {"cap", required_argument, NULL, 'c'},
	                                     {"no-new-privs", no_argument, NULL, 'n'},
	                                     {"apparmor", required_argument, NULL, 'a'},
	                                     {"process-label", required_argument, NULL, 'l'},
	                                     {"preserve-fds", required_argument, NULL, 'f'},
	                                     {0}};
	optind = 0;
	for (int c; (c = getopt_long_only(argc, argv, "+p:dtw:e:u:g:c:", opts, NULL)) != -1;) {
		int cap;
		uint32_t gid;
		switch (c) {
		case 'p':
			o->process_file = optarg;
			break;
		case 'd':
			o->detach = true;
			break;
		case 'P':
			o->pid_file = optarg;
			break;
		case 'C':
			o->console_socket = optarg;
			break;
		case 't':
			o->tty = true;
			break;
		case 'w':
			o->cwd = optarg;
			break;
		case 'e':
			o->env[o->n_env++] = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'n':
			o->no_new_privs = true;
			break;
		case 'a':
		case 'l':
			break; /* AppArmor and SELinux labels: not applied by cbox */
		case 'g':
			if (parse_id(optarg, &gid) < 0 || o->n_gids == CBOX_ARRAY_SIZE(o->gids)) {
				cbox_error("exec: --additional-gids: '%s' is not a group id",
				           optarg);
				return -1;
			}
			o->gids[o->n_gids++] = gid;
			break;
		case 'c':
			if ((cap = cbox_oci_cap_from_name(optarg)) < 0) {
				cbox_error("exec: --cap: unknown capability '%s'", optarg);
				return -1;
			}
			o->caps |= 1ULL << cap;
			break;
		case 'f':
			if (strcmp(optarg, "0") != 0) {
				cbox_error("exec: --preserve-fds is not supported yet");
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind >= argc) {
		cbox_error("usage: cbox exec [--process FILE] [--detach] [--pid-file F] "
		           "[--console-socket S] [--tty] [--cwd D] [--env K=V]... [--user "
		           "UID[:GID]] [--no-new-privs] ID [CMD [ARGS...]]");
		return -1;
	}
	return optind;
}

int cbox_oci_exec(const struct cbox_oci_global *g, int argc, char **argv)
{
	struct exec_opts o = {0};
	CBOX_AUTOFREE char **env = calloc((size_t)argc + 1, sizeof(char *));
	if (!env)
		return 1;
	o.env = env;
	int i = parse_opts(argc, argv, &o);
	if (i < 0)
		return 1;
	const char *id = argv[i++];
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	struct cbox_err *err = NULL;
	pid_t pid = 0;
	int master = -1;
	if (do_exec(g, &o, id, argv + i, (size_t)(argc - i), &pid, &master, &err) < 0) {
		cbox_err_report(&err, "exec");
		return 1;
	}
	if (o.pid_file && cbox_oci_write_pid_file(o.pid_file, pid, &err) < 0) {
		cbox_err_report(&err, "exec");
		kill(pid, SIGKILL);
		return 1;
	}
	if (master >= 0)
		return cbox_oci_console_relay(master, pid);
	return o.detach ? 0 : wait_process(pid);
}
