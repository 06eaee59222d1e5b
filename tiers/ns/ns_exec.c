/* placeholder */
#include <errno.h>

#include "internal.h"

int ns_exec(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
            struct cbox_err **err)
{
	(void)x;
	(void)pid;
	return cbox_err_set(err, ENOTSUP, "exec into %s: not yet", c->id);
}
