/* `cbox tiers`: each tier, whether this host (and this build) can run it, and why not. */
#include <stdio.h>

#include "oci_cli.h"

int cbox_oci_tiers(const struct cbox_oci_global *g, int argc, char **argv)
{
	size_t n;
	const struct cbox_tier_ops *const *t = cbox_tier_list(&n);
	(void)g, (void)argc, (void)argv;
	printf("%-8s %-11s %s\n", "TIER", "STATUS", "DETAILS");
	for (size_t i = 0; i < n; i++) {
		char why[256];
		int ok = t[i]->available(why, sizeof(why));
		const char *status = ok < 0         ? "unavailable"
		                     : t[i]->create ? "available"
		                                    : "cbox-run";
		printf("%-8s %-11s %s: %s\n", t[i]->name, status, t[i]->summary, why);
	}
	return 0;
}
