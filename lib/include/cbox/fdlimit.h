/* The fd limit of the host-side processes (gofer, sentry). */
#ifndef CBOX_FDLIMIT_H
#define CBOX_FDLIMIT_H

/*
 * Raise this process's RLIMIT_NOFILE soft limit to its hard limit. The gofer holds an fd for
 * every node the sentry caches and the sentry a copy of many open files, so they need many more
 * than the guest (a soft limit of 1024 is a common default: `find /usr` stopped at EMFILE); the
 * hard limit stays the caller's bound. Returns the new soft limit, or -errno.
 */
long cbox_fdlimit_raise(void);

#endif
