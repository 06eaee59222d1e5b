/* `cbox create [--bundle DIR] [--pid-file FILE] [--console-socket SOCK] ID` */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

static void now_rfc3339(char *buf, size_t n)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t w = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + w, n - w, ".%09ldZ", ts.tv_nsec);
}

static int copy_file(const char *from, const char *to, struct cbox_err **err)
{
	char buf[65536];
	CBOX_AUTOCLOSE int in = open(from, O_RDONLY | O_CLOEXEC);
	CBOX_AUTOCLOSE int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (in < 0 || out < 0)
		return cbox_err_set(err, errno, "copy %s to %s", from, to);
	for (ssize_t n; (n = read(in, buf, sizeof(buf))) != 0;)
		if (n < 0 || write(out, buf, (size_t)n) != n)
			return cbox_err_set(err, errno, "copy %s to %s", from, to);
	return 0;
}

/* mkdir -p, as runc's MkdirAll: containerd's shim passes a --root whose parents may not exist
 * yet (<exec-root>/runtime-runc/moby). Each new directory is 0700: state files name pids. */
static int mkdir_parents(const char *path, struct cbox_err **err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return cbox_err_set(err, ENAMETOOLONG, "create the state root %s", path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return cbox_err_set(err, errno, "create the state root %s", buf);
		if (c == '\0')
			return 0;
		*p = c;
	}
}

struct create_ctx {
	struct cbox_oci_state *st;
	const struct cbox_oci_config *cfg;
};

/* The tier's callback: the namespaces exist, the root is not switched yet. */
static int on_created(void *data, const struct cbox_tier_container *c, struct cbox_err **err)
{
	struct create_ctx *x = data;
	x->st->pid = c->pid;
	x->st->start_time = c->start_time;
	json_object *j = cbox_oci_state_json(x->st, "creating");
	const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	int r = cbox_oci_hooks_run(x->cfg, CBOX_OCI_HOOK_PRESTART, s, err);
	if (r >= 0)
		r = cbox_oci_hooks_run(x->cfg, CBOX_OCI_HOOK_CREATE_RUNTIME, s, err);
	json_object_put(j);
	return r;
}

static int check_config(const struct cbox_oci_config *cfg, int console_sock, struct cbox_err **err)
{
	if (!cfg->has_process)
		return cbox_err_set(err, EINVAL,
		                    "config.json: process: missing (required to "
		                    "create a container)");
	/* runc's rules: the terminal's master has to go somewhere, and a socket without a
	 * terminal is a mistake of the caller's. */
	if (cfg->process.terminal && console_sock < 0)
		return cbox_err_set(
		    err, EINVAL,
		    "config.json: process.terminal needs --console-socket (or `cbox "
		    "run`, which holds the terminal itself)");
	if (!cfg->process.terminal && console_sock >= 0)
		return cbox_err_set(
		    err, EINVAL,
		    "--console-socket without process.terminal: there is no console "
		    "to send");
	if (cfg->n_hooks[CBOX_OCI_HOOK_CREATE_CONTAINER] ||
	    cfg->n_hooks[CBOX_OCI_HOOK_START_CONTAINER])
		return cbox_err_set(err, ENOTSUP,
		                    "config.json: hooks: createContainer and "
		                    "startContainer hooks are not supported yet");
	return 0;
}

static int create_in(const struct cbox_oci_global *g, struct cbox_oci_state *st,
                     const struct cbox_oci_config *cfg, const char *pid_file, int console_sock,
                     struct cbox_err **err)
{
	const struct cbox_tier_ops *tier;
	char src[PATH_MAX + 16], dst[sizeof(st->dir) + 16];
	if (cbox_tier_find(st->tier, &tier, err) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/config.json", st->bundle);
	snprintf(dst, sizeof(dst), "%s/config.json", st->dir);
	if (copy_file(src, dst, err) < 0)
		return -1;
	struct cbox_tier_container c = {.id = st->id,
	                                .bundle = st->bundle,
	                                .rootfs = st->rootfs,
	                                .state_dir = st->dir,
	                                .config = cfg,
	                                .has_console = console_sock >= 0,
	                                .console_sock = console_sock,
	                                .allow_dangerous_mounts = g->allow_dangerous_mounts,
	                                .no_cgroup = g->no_cgroup};
	struct create_ctx x = {.st = st, .cfg = cfg};
	if (tier->create(&c, on_created, &x, err) < 0)
		return -1;
	st->pid = c.pid;
	st->start_time = c.start_time;
	if (cbox_oci_state_save(st, err) < 0 ||
	    (pid_file && cbox_oci_write_pid_file(pid_file, c.pid, err) < 0)) {
		tier->kill(&c, SIGKILL, true, NULL);
		return -1;
	}
	return 0;
}

int cbox_oci_do_create(const struct cbox_oci_global *g, const char *id, const char *bundle,
                       const char *pid_file, int console_sock, struct cbox_err **err)
{
	CBOX_AUTO(cbox_oci_config) *cfg = NULL;
	char root_path[PATH_MAX], created[64];
	if (cbox_oci_id_check(id, err) < 0 || cbox_oci_config_load(bundle, &cfg, err) < 0 ||
	    check_config(cfg, console_sock, err) < 0)
		return -1;
	struct cbox_oci_state st = {0};
	st.bundle = realpath(bundle, NULL);
	if (!st.bundle)
		return cbox_err_set(err, errno, "bundle %s", bundle);
	snprintf(root_path, sizeof(root_path), "%s%s%s", cfg->root_path[0] == '/' ? "" : st.bundle,
	         cfg->root_path[0] == '/' ? "" : "/", cfg->root_path);
	st.rootfs = realpath(root_path, NULL);
	const char *tier =
	    g->tier ? g->tier : cbox_oci_config_annotation(cfg, CBOX_TIER_ANNOTATION);
	now_rfc3339(created, sizeof(created));
	st.id = strdup(id);
	st.tier = strdup(tier ? tier : CBOX_TIER_DEFAULT);
	st.created = strdup(created);
	st.annotations = json_object_new_object();
	for (size_t i = 0; i < cfg->n_annotations; i++)
		json_object_object_add(st.annotations, cfg->annotations[i].key,
		                       json_object_new_string(cfg->annotations[i].value));
	int r = 0;
	if (!st.rootfs)
		r = cbox_err_set(err, errno, "config.json: root.path: %s", root_path);
	else
		r = mkdir_parents(g->root, err);
	snprintf(st.dir, sizeof(st.dir), "%s/%s", g->root, id);
	if (r == 0 && mkdir(st.dir, 0700) < 0)
		r = errno == EEXIST ? cbox_err_set(err, EEXIST, "container %s already exists", id)
		                    : cbox_err_set(err, errno, "create %s", st.dir);
	else if (r == 0 && create_in(g, &st, cfg, pid_file, console_sock, err) < 0) {
		cbox_oci_state_remove(st.dir, NULL);
		r = -1;
	}
	cbox_oci_state_release(&st);
	return r;
}

int cbox_oci_create(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"bundle", required_argument, NULL, 'b'},
	                                     {"pid-file", required_argument, NULL, 'p'},
	                                     {"console-socket", required_argument, NULL, 'c'},
	                                     {"no-pivot", no_argument, NULL, 'n'},
	                                     {"no-new-keyring", no_argument, NULL, 'k'},
	                                     {"preserve-fds", required_argument, NULL, 'f'},
	                                     {0}};
	const char *bundle = ".", *pid_file = NULL, *console = NULL;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+b:", opts, NULL)) != -1;) {
		if (o == 'b')
			bundle = optarg;
		else if (o == 'p')
			pid_file = optarg;
		else if (o == 'c')
			console = optarg;
		else if (o == '?')
			return 1;
	}
	if (optind != argc - 1) {
		cbox_error("usage: cbox create [--bundle DIR] [--pid-file FILE] "
		           "[--console-socket SOCK] ID");
		return 1;
	}
	struct cbox_err *err = NULL;
	CBOX_AUTOCLOSE int sock = -1;
	if ((console && (sock = cbox_oci_console_connect(console, &err)) < 0) ||
	    cbox_oci_do_create(g, argv[optind], bundle, pid_file, sock, &err) < 0) {
		cbox_err_report(&err, "create");
		return 1;
	}
	return 0;
}
