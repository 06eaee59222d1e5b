/* `cbox`: the front door. Global options (runc's), then one verb from the table. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/log.h"
#include "oci_cli.h"
#include "verbs.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: cbox [GLOBAL OPTIONS] VERB [OPTIONS]\n\n"
	    "OCI runtime verbs (runc's command line):\n"
	    "  create [--bundle DIR] [--pid-file F] ID   set up a container; it waits for start\n"
	    "  start ID                                  run the created container's process\n"
	    "  state ID                                  its OCI state as JSON\n"
	    "  kill [--all] ID [SIGNAL]                  signal it (default TERM)\n"
	    "  delete [--force] ID                       release it (--force: kill first)\n"
	    "  run [--bundle DIR] [--detach] ID          create, start, wait, delete\n"
	    "  list [--format table|json] [--quiet]      the containers under --root\n"
	    "  ps [--format table|json] ID [PS-OPTIONS]  its processes (json: host pids)\n"
	    "  pause ID / resume ID                      freeze / thaw its processes\n"
	    "  update [--resources FILE|-] [--memory N] [--memory-swap N] [--cpu-quota N]\n"
	    "         [--cpu-period N] [--cpu-shares N] [--pids-limit N] ID\n"
	    "                                            new limits for a running container\n"
	    "  exec [--process FILE] [--detach] [--pid-file F] [--console-socket S] [--tty]\n"
	    "       [--cwd D] [--env K=V]... [--user UID[:GID]] [--no-new-privs] ID [CMD...]\n"
	    "                                            run a process in a running container\n"
	    "  spec [--bundle DIR] [--rootless]          write a default config.json\n"
	    "  features                                  what this runtime supports (JSON)\n"
	    "Other verbs:\n"
	    "  tiers                                     the tiers and whether this host runs "
	    "them\n"
	    "  syscalls [--json] [--host-surface]        the sentry's syscall table\n"
	    "  install [--dry-run] [--daemon-json PATH] [--runtime-path PATH]\n"
	    "          [--runtime-name NAME] [--tier T]  add cbox to Docker's daemon.json\n"
	    "  --version\n\n"
	    "Global options: --root DIR (default /run/cbox), --log FILE, --log-format "
	    "text|json,\n"
	    "  --debug, --systemd-cgroup (accepted; cgroupfs is used), --tier NAME (sentry, "
	    "ns, ...;\n"
	    "  also the annotation dev.cbox.tier),\n"
	    "  --cgroup-manager cgroupfs|systemd|disabled (disabled: no cgroup of the "
	    "container's own,\n"
	    "  its config may set no limit; cleaned up by its pid namespace),\n"
	    "  --allow-dangerous-mounts (let a sentry container bind a container engine's socket\n"
	    "  or /dev/kvm: either hands it the host; e.g. in daemon.json's runtimeArgs)\n\n"
	    "To run a program in a sandbox: cbox-run -- PROGRAM [ARGS...]\n");
}

typedef int (*verb_fn)(const struct cbox_oci_global *g, int argc, char **argv);

static int syscalls_verb(const struct cbox_oci_global *g, int argc, char **argv)
{
	(void)g;
	return cbox_verb_syscalls(argc, argv);
}

static const struct {
	const char *name;
	verb_fn fn;
} verbs[] = {
    {"create", cbox_oci_create}, {"start", cbox_oci_start},   {"state", cbox_oci_state_verb},
    {"kill", cbox_oci_kill},     {"delete", cbox_oci_delete}, {"run", cbox_oci_run},
    {"list", cbox_oci_list},     {"spec", cbox_oci_spec},     {"features", cbox_oci_features},
    {"tiers", cbox_oci_tiers},   {"syscalls", syscalls_verb}, {"install", cbox_oci_install},
    {"ps", cbox_oci_ps},         {"pause", cbox_oci_pause},   {"resume", cbox_oci_resume},
    {"update", cbox_oci_update}, {"exec", cbox_oci_exec},
};

/* "--opt=value" or "--opt value" (one or two dashes, as runc accepts). */
static const char *opt_value(const char *name, int argc, char **argv, int *i)
{
	const char *a = argv[*i] + (argv[*i][1] == '-' ? 2 : 1);
	size_t len = strlen(name);
	if (strncmp(a, name, len) != 0)
		return NULL;
	if (a[len] == '=')
		return a + len + 1;
	if (a[len] != '\0' || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

int main(int argc, char **argv)
{
	struct cbox_oci_global g = {.root = "/run/cbox"};
	const char *log = NULL, *fmt = "text", *v;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-v")) {
			printf("cbox version %s\nspec: %s\n", CBOX_VERSION, CBOX_OCI_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--debug"))
			g.debug = true;
		else if (!strcmp(argv[i], "--systemd-cgroup"))
			g.systemd_cgroup = true;
		else if (!strcmp(argv[i], "--allow-dangerous-mounts"))
			g.allow_dangerous_mounts = true;
		else if ((v = opt_value("cgroup-manager", argc, argv, &i))) {
			/* crun's option: cgroupfs (the default) or systemd (accepted, as
			 * --systemd-cgroup), or disabled (struct cbox_tier_container) */
			if (!strcmp(v, "disabled"))
				g.no_cgroup = true;
			else if (!strcmp(v, "systemd"))
				g.systemd_cgroup = true;
			else if (strcmp(v, "cgroupfs") != 0) {
				fprintf(stderr,
				        "cbox: --cgroup-manager must be cgroupfs, systemd or "
				        "disabled, not '%s'\n",
				        v);
				return 1;
			}
		} else if ((v = opt_value("root", argc, argv, &i)))
			g.root = v;
		else if ((v = opt_value("log-format", argc, argv, &i)))
			fmt = v;
		else if ((v = opt_value("log", argc, argv, &i)))
			log = v;
		else if ((v = opt_value("tier", argc, argv, &i)))
			g.tier = v;
		else {
			fprintf(stderr, "cbox: unknown global option '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	int format = cbox_log_format_parse(fmt);
	if (format < 0) {
		fprintf(stderr, "cbox: --log-format must be text or json, not '%s'\n", fmt);
		return 1;
	}
	int fd = 2;
	if (log && (fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "cbox: cannot open the log file %s\n", log);
		return 1;
	}
	cbox_log_init(fd, (enum cbox_log_format)format, g.debug ? CBOX_LOG_DEBUG : CBOX_LOG_INFO,
	              "cbox");
	if (i >= argc) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[i], "version")) {
		printf("cbox version %s\nspec: %s\n", CBOX_VERSION, CBOX_OCI_VERSION);
		return 0;
	}
	/* The verbs whose processes enter a container before they exec its program: see
	 * oci_sealed.c. */
	if (!strcmp(argv[i], "create") || !strcmp(argv[i], "run") || !strcmp(argv[i], "exec")) {
		struct cbox_err *err = NULL;
		if (cbox_oci_reexec_sealed(argv, &err) < 0) {
			cbox_err_report(&err, argv[i]);
			return 1;
		}
	}
	for (size_t k = 0; k < CBOX_ARRAY_SIZE(verbs); k++)
		if (!strcmp(argv[i], verbs[k].name))
			return verbs[k].fn(&g, argc - i, argv + i);
	cbox_error("unknown verb '%s' (see cbox --help)", argv[i]);
	return 1;
}
