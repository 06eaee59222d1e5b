/* `cbox run [--bundle DIR] [--pid-file FILE] [--detach] ID`: create, start, wait, delete. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

static volatile sig_atomic_t forward_pid;

static void forward(int sig)
{
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

/* Wait for the container's init; its exit status, 128 + its signal, or -1. */
static int wait_init(pid_t pid)
{
	int status;
	for (;;) {
		pid_t r = waitpid(-1, &status, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r != pid)
			continue; /* an orphan of the container, adopted by us as subreaper */
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + WTERMSIG(status);
	}
}

/* Whether the bundle's process asks for a terminal (an unreadable config fails in create). */
static bool wants_terminal(const char *bundle)
{
	CBOX_AUTO(cbox_oci_config) *cfg = NULL;
	struct cbox_err *err = NULL;
	if (cbox_oci_config_load(bundle, &cfg, &err) < 0) {
		cbox_err_free(&err);
		return false;
	}
	return cfg->has_process && cfg->process.terminal;
}

static int run(const struct cbox_oci_global *g, const char *id, const char *bundle,
               const char *pid_file, bool detach, const char *console)
{
	struct cbox_err *err = NULL;
	struct cbox_oci_state st;
	/* Subreaper: the init's parent (stage 1) exits, so the init must come back to us. */
	if (!detach)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* A terminal: its master goes to --console-socket; without one, cbox holds it and relays
	 * the caller's terminal, as runc does (not with --detach: no one would hold it). */
	CBOX_AUTOCLOSE int sock = -1, relay = -1, master = -1;
	if (console && (sock = cbox_oci_console_connect(console, &err)) < 0) {
		cbox_err_report(&err, "run");
		return 1;
	}
	if (!console && !detach && wants_terminal(bundle)) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
			cbox_error("run: socketpair: %s", strerror(errno));
			return 1;
		}
		relay = sv[0];
		sock = sv[1];
	}
	if (cbox_oci_do_create(g, id, bundle, pid_file, sock, &err) < 0 ||
	    (relay >= 0 && (master = cbox_oci_console_recv(relay, &err)) < 0)) {
		cbox_err_report(&err, "run");
		if (master < 0 && relay >= 0)
			cbox_oci_do_delete(g, id, true, NULL);
		return 1;
	}
	if (cbox_oci_state_load(g->root, id, &st, &err) < 0 || cbox_oci_do_start(g, id, &err) < 0) {
		cbox_err_report(&err, "run");
		cbox_oci_state_release(&st); /* zeroed by a failed load: safe */
		cbox_oci_do_delete(g, id, true, NULL);
		return 1;
	}
	if (detach) {
		cbox_oci_state_release(&st);
		return 0;
	}
	forward_pid = st.pid;
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	int status = master >= 0 ? cbox_oci_console_relay(master, st.pid) : wait_init(st.pid);
	master = -1; /* the relay closed it */
	cbox_oci_state_release(&st);
	if (cbox_oci_do_delete(g, id, true, &err) < 0)
		cbox_err_report(&err, "run: delete");
	return status < 0 ? 1 : status;
}

int cbox_oci_run(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"bundle", required_argument, NULL, 'b'},
	                                     {"pid-file", required_argument, NULL, 'p'},
	                                     {"detach", no_argument, NULL, 'd'},
	                                     {"console-socket", required_argument, NULL, 'c'},
	                                     {"no-pivot", no_argument, NULL, 'n'},
	                                     {"no-new-keyring", no_argument, NULL, 'k'},
	                                     {0}};
	const char *bundle = ".", *pid_file = NULL, *console = NULL;
	bool detach = false;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+b:d", opts, NULL)) != -1;) {
		if (o == 'b')
			bundle = optarg;
		else if (o == 'p')
			pid_file = optarg;
		else if (o == 'd')
			detach = true;
		else if (o == 'c')
			console = optarg;
		else if (o == '?')
			return 1;
	}
	if (optind != argc - 1) {
		cbox_error("usage: cbox run [--bundle DIR] [--pid-file FILE] [--detach] "
		           "[--console-socket SOCK] ID");
		return 1;
	}
	return run(g, argv[optind], bundle, pid_file, detach, console);
}
