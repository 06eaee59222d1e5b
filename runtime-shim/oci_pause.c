/* `cbox pause ID` and `cbox resume ID`: freeze and thaw the container's processes (its cgroup's
 * freezer); `state` then reports "paused". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cbox/log.h"
#include "oci_cli.h"

static int pause_resume(const struct cbox_oci_global *g, int argc, char **argv, bool frozen)
{
	const char *verb = frozen ? "pause" : "resume";
	if (argc != 2) {
		cbox_error("usage: cbox %s ID", verb);
		return 1;
	}
	struct cbox_err *err = NULL;
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	enum cbox_tier_status s;
	if (cbox_oci_container_open(g, argv[1], &st, &tier, &c, &s, &err) < 0) {
		cbox_err_report(&err, verb);
		return 1;
	}
	int r = 0;
	if (frozen && s == CBOX_TIER_PAUSED)
		r = cbox_err_set(&err, 0, "container %s is already paused", c.id);
	else if (frozen && s != CBOX_TIER_RUNNING && s != CBOX_TIER_CREATED)
		r = cbox_err_set(&err, 0, "container %s is not running (it is %s)", c.id,
		                 cbox_tier_status_name(s));
	else if (!frozen && s != CBOX_TIER_PAUSED)
		r = cbox_err_set(&err, 0, "container %s is not paused (it is %s)", c.id,
		                 cbox_tier_status_name(s));
	else if (!tier->pause)
		r = cbox_err_set(&err, ENOTSUP, "the %s tier cannot pause a container", tier->name);
	else
		r = tier->pause(&c, frozen, &err);
	cbox_oci_state_release(&st);
	if (r < 0) {
		cbox_err_report(&err, verb);
		return 1;
	}
	return 0;
}

int cbox_oci_pause(const struct cbox_oci_global *g, int argc, char **argv)
{
	return pause_resume(g, argc, argv, true);
}

int cbox_oci_resume(const struct cbox_oci_global *g, int argc, char **argv)
{
	return pause_resume(g, argc, argv, false);
}
