/* uname and host names. */
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>
#include <stdio.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

int64_t sys_uname(struct cbox_sysctx *c)
{
	struct utsname u;
	if (uname(&u) < 0)
		return -EIO;
	/* The kernel release and machine are the host's (programs check them); the node name is
	 * the sandbox's. */
	snprintf(u.nodename, sizeof(u.nodename), "%s", cbox_sentry_hostname(c->s));
	snprintf(u.domainname, sizeof(u.domainname), "(none)");
	return cbox_sys_write(c, ARG(0), &u, sizeof(u));
}

static int64_t set_name(struct cbox_sysctx *c)
{
	(void)c;
	/* Linux checks CAP_SYS_ADMIN over the uts namespace before the length or the buffer; the
	 * guest has no capabilities. */
	return -EPERM;
}

int64_t sys_sethostname(struct cbox_sysctx *c)
{
	return set_name(c);
}

int64_t sys_setdomainname(struct cbox_sysctx *c)
{
	return set_name(c);
}
