/* `cbox delete [--force] ID`: release a stopped container (--force: kill it first). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cbox/log.h"
#include "oci_cli.h"

static int stop(const struct cbox_tier_ops *tier, struct cbox_tier_container *c,
                struct cbox_err **err)
{
	bool paused = tier->status(c) == CBOX_TIER_PAUSED;
	if (tier->kill(c, SIGKILL, true, err) < 0 && tier->status(c) != CBOX_TIER_STOPPED)
		return -1;
	cbox_err_free(err);
	/* The v1 freezer keeps a frozen task from dying even of SIGKILL: thaw after the signal
	 * (as runc does), so that none of them runs another instruction before it dies. */
	if (paused && tier->pause)
		tier->pause(c, false, NULL);
	for (int i = 0; i < 1000 && tier->status(c) != CBOX_TIER_STOPPED; i++)
		usleep(5000);
	if (tier->status(c) != CBOX_TIER_STOPPED)
		return cbox_err_set(err, ETIMEDOUT, "container %s did not die after SIGKILL",
		                    c->id);
	return 0;
}

int cbox_oci_do_delete(const struct cbox_oci_global *g, const char *id, bool force,
                       struct cbox_err **err)
{
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	if (cbox_oci_state_load(g->root, id, &st, err) < 0)
		return -1;
	int r = cbox_oci_state_tier(&st, &tier, &c, err);
	if (r == 0) {
		enum cbox_tier_status s = tier->status(&c);
		if (s != CBOX_TIER_STOPPED && !force)
			r = cbox_err_set(err, EBUSY,
			                 "container %s is %s: stop it first or use --force", id,
			                 cbox_tier_status_name(s));
		else if (s != CBOX_TIER_STOPPED)
			r = stop(tier, &c, err);
	}
	if (r == 0)
		r = tier->delete (&c, err);
	if (r == 0) {
		cbox_oci_post_hooks_run(&st, CBOX_OCI_HOOK_POSTSTOP, "stopped");
		r = cbox_oci_state_remove(st.dir, err);
	}
	cbox_oci_state_release(&st);
	return r;
}

int cbox_oci_delete(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"force", no_argument, NULL, 'f'}, {0}};
	bool force = false;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+f", opts, NULL)) != -1;) {
		if (o == 'f')
			force = true;
		else
			return 1;
	}
	if (optind != argc - 1) {
		cbox_error("usage: cbox delete [--force] ID");
		return 1;
	}
	struct cbox_err *err = NULL;
	if (cbox_oci_do_delete(g, argv[optind], force, &err) < 0) {
		cbox_err_report(&err, "delete");
		return 1;
	}
	return 0;
}
