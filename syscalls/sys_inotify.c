/*
 * inotify. The instance (inotify_init1) and the event stream (read) are the host kernel's, on
 * the guest's own fd. Only adding a watch names a path, which the host cannot resolve in the
 * guest's empty mount namespace: the sentry resolves it in the guest's tree, opens the file
 * through the VFS, and adds the watch itself on a duplicate of the guest's inotify fd (the same
 * instance) through the magic link /proc/self/fd/N of its own procfs, which names exactly that
 * inode. The guest gains no path: the watch is on a file it could open anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

int64_t sys_inotify_add_watch(struct cbox_sysctx *c)
{
	uint32_t mask = (uint32_t)ARG(2);
	/* Linux checks the mask first: no event at all is EINVAL. */
	if (!(mask & IN_ALL_EVENTS))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, ARG(1), path);
	if (r < 0)
		return r;
	/* The instance first: a bad fd is EBADF before the path is looked at. */
	int ifd = cbox_fd_get(c->s, c->task, IARG(0));
	if (ifd < 0)
		return ifd;
	struct cbox_dentry *d = NULL;
	int wf = (mask & IN_DONT_FOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (mask & IN_ONLYDIR)
		wf |= CBOX_WALK_DIRECTORY;
	r = cbox_vfs_walk(c->s, c->task, AT_FDCWD, path, wf, &d, NULL);
	int host = -1;
	if (r == 0)
		r = cbox_vfs_may(c->task, d, R_OK); /* Linux: read access to the file is needed */
	if (r == 0 && S_ISLNK(d->mode))
		r = -EACCES; /* IN_DONT_FOLLOW on a symlink: not offered */
	if (r == 0 && d->mnt->ops == cbox_vfs_gofer_ops()) {
		/* A file of the tree: the gofer adds the watch (it may read what the sentry's
		 * unprivileged host identity cannot). */
		uint32_t fid;
		r = cbox_dentry_fid(c->s, d, &fid);
		if (r == 0)
			r = cbox_gofer_inotify(cbox_sentry_gofer(c->s), fid,
			                       mask & ~(uint32_t)IN_DONT_FOLLOW, ifd);
		cbox_dentry_put(c->s, d);
		close(ifd);
		return r;
	}
	if (r == 0) {
		host = cbox_vfs_open(c->s, c->task, d, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		r = host < 0 ? host : 0;
	}
	if (r == 0) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", host);
		r = inotify_add_watch(ifd, link, mask & ~(uint32_t)IN_DONT_FOLLOW);
		if (r < 0)
			r = -errno;
	}
	if (host >= 0)
		close(host);
	if (d)
		cbox_dentry_put(c->s, d);
	close(ifd);
	return r;
}
