/* uname, host names, and the socket calls that take an address. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
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

/*
 * Sockets live in the sandbox's own network namespace (loopback only). Families beyond
 * local, IP and IPv6 would reach host kernel code the sandbox does not need (packet sockets,
 * netlink beyond route, vsock...), so they are answered as a kernel without them would.
 */
int64_t sys_socket(struct cbox_sysctx *c)
{
	int family = IARG(0);
	if (family == AF_UNIX || family == AF_INET || family == AF_INET6)
		return CBOX_SYSRET_CONTINUE;
	if (family == AF_NETLINK && IARG(2) == 0 /* NETLINK_ROUTE */)
		return CBOX_SYSRET_CONTINUE;
	return -EAFNOSUPPORT;
}

/*
 * bind and connect read their address from guest memory, which the guest could change after a
 * check. They are let through anyway because the only name the host kernel could resolve from
 * them is a path in the guest's real mount namespace, which is an empty directory (plus the
 * loader): there is nothing there to reach. Paths inside the guest's tree are not served yet.
 */
int64_t sys_bind(struct cbox_sysctx *c)
{
	(void)c;
	return CBOX_SYSRET_CONTINUE;
}

int64_t sys_connect(struct cbox_sysctx *c)
{
	(void)c;
	return CBOX_SYSRET_CONTINUE;
}
