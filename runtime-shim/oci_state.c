/* `cbox state ID`: the OCI state JSON (ociVersion, id, status, pid, bundle, annotations). */
#include <stdio.h>

#include "cbox/log.h"
#include "oci_cli.h"

int cbox_oci_state_verb(const struct cbox_oci_global *g, int argc, char **argv)
{
	if (argc != 2) {
		cbox_error("usage: cbox state ID");
		return 1;
	}
	struct cbox_err *err = NULL;
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	if (cbox_oci_state_load(g->root, argv[1], &st, &err) < 0) {
		cbox_err_report(&err, "state");
		return 1;
	}
	/* A container whose tier this build lacks is still reported: as stopped. */
	enum cbox_tier_status s = CBOX_TIER_STOPPED;
	if (cbox_oci_state_tier(&st, &tier, &c, &err) == 0)
		s = tier->status(&c);
	cbox_err_free(&err);
	json_object *j = cbox_oci_state_json(&st, cbox_tier_status_name(s));
	printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
	                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	cbox_oci_state_release(&st);
	return 0;
}
