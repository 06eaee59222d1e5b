/* The fd limit of the host-side processes (see cbox/fdlimit.h). */
#include <errno.h>
#include <limits.h>
#include <sys/resource.h>

#include "cbox/fdlimit.h"

long cbox_fdlimit_raise(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	return rl.rlim_cur > LONG_MAX ? LONG_MAX : (long)rl.rlim_cur;
}
