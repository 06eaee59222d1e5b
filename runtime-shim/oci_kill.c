/* `cbox kill [--all] ID [SIGNAL]`: SIGNAL is a number or a name (TERM, SIGTERM); default TERM. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "cbox/log.h"
#include "oci_cli.h"

int cbox_oci_kill(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"all", no_argument, NULL, 'a'}, {0}};
	bool all = false;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+a", opts, NULL)) != -1;) {
		if (o == 'a')
			all = true;
		else
			return 1;
	}
	if (optind != argc - 1 && optind != argc - 2) {
		cbox_error("usage: cbox kill [--all] ID [SIGNAL]");
		return 1;
	}
	int sig = SIGTERM;
	if (optind == argc - 2 && (sig = cbox_oci_signal_parse(argv[argc - 1])) < 0) {
		cbox_error("kill: unknown signal '%s' (use a number or a name such as TERM)",
		           argv[argc - 1]);
		return 1;
	}
	struct cbox_err *err = NULL;
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	int r = cbox_oci_state_load(g->root, argv[optind], &st, &err);
	if (r == 0) {
		if ((r = cbox_oci_state_tier(&st, &tier, &c, &err)) == 0) {
			bool paused = tier->status(&c) == CBOX_TIER_PAUSED;
			r = tier->kill(&c, sig, all, &err);
			/* The v1 freezer holds even SIGKILL until a thaw (runc thaws too). */
			if (r == 0 && paused && sig == SIGKILL && tier->pause)
				tier->pause(&c, false, NULL);
		}
		cbox_oci_state_release(&st);
	}
	if (r < 0) {
		cbox_err_report(&err, "kill");
		return 1;
	}
	return 0;
}
