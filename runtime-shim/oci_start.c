/* `cbox start ID`: let a created container's process run, then the poststart hooks. */
#include <errno.h>
#include <stdio.h>

#include "cbox/log.h"
#include "oci_cli.h"

int cbox_oci_do_start(const struct cbox_oci_global *g, const char *id, struct cbox_err **err)
{
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	if (cbox_oci_state_load(g->root, id, &st, err) < 0)
		return -1;
	int r = cbox_oci_state_tier(&st, &tier, &c, err);
	enum cbox_tier_status s = r < 0 ? CBOX_TIER_STOPPED : tier->status(&c);
	if (r == 0 && s != CBOX_TIER_CREATED)
		r = cbox_err_set(err, EINVAL, "container %s is %s, not created: cannot start it",
		                 id, cbox_tier_status_name(s));
	if (r == 0)
		r = tier->start(&c, err);
	if (r == 0)
		cbox_oci_post_hooks_run(&st, CBOX_OCI_HOOK_POSTSTART, "running");
	cbox_oci_state_release(&st);
	return r;
}

int cbox_oci_start(const struct cbox_oci_global *g, int argc, char **argv)
{
	if (argc != 2) {
		cbox_error("usage: cbox start ID");
		return 1;
	}
	struct cbox_err *err = NULL;
	if (cbox_oci_do_start(g, argv[1], &err) < 0) {
		cbox_err_report(&err, "start");
		return 1;
	}
	return 0;
}
