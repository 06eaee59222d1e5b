#pragma once
/*
 * The gofer: the only process of a sandbox that touches the guest's files. It runs in a mount
 * namespace that holds only the rootfs (read-only) and, later, the bind mounts; it serves them
 * to the sentry over a SOCK_SEQPACKET socketpair with the protocol of lib/include/cbox/gofer_wire.h
 * and passes opened files with SCM_RIGHTS. This header has both ends: spawning the server and
 * the sentry's client calls.
 *
 * Files are named by fids (like 9P): 32-bit handles the gofer maps to O_PATH fds. Fid 0 is the
 * root of the rootfs and always exists. A walk goes one component at a time and never follows a
 * symlink: the sentry resolves symlinks, "." and ".." itself.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cbox/compiler.h"
#include "cbox/err.h"
#include "cbox/gofer_wire.h"

#define CBOX_GOFER_ROOT_FID 0u

struct cbox_gofer_config {
	const char *rootfs; /* host path of the guest's root */
	bool readonly;      /* writes fail with EROFS (the default of issue 2) */
};

/*
 * Start a gofer process for cfg. On success *sock is the sentry's end of the socketpair
 * (SOCK_SEQPACKET, close-on-exec) and *pid the gofer's pid; the gofer exits when the socket is
 * closed or its parent dies. The child: new mount (and, when not root, user) namespace holding
 * only the rootfs, host pseudo-filesystems (/proc, /sys, /dev, cgroups, ...) detached, its own
 * seccomp allowlist (cbox_gofer_allowed_syscalls), no_new_privs.
 * Errors: the rootfs does not exist or is not a directory (ENOENT/ENOTDIR, message names it),
 * fork/socketpair failures.
 */
CBOX_API int cbox_gofer_spawn(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                              struct cbox_err **err);

/*
 * Serve requests on sock until it is closed or a malformed request arrives (logged, then the
 * session ends). root_fd is an O_PATH|O_DIRECTORY fd of the root; it is consumed. Returns 0 on
 * an orderly end, -1 after a protocol error. Used by cbox_gofer_spawn's child and by tests
 * (which run it in-process over a socketpair, without the namespace and seccomp steps).
 */
CBOX_API int cbox_gofer_serve(int sock, int root_fd, bool readonly);

/* The host syscalls the gofer's seccomp filter allows (sorted, unique). *n gets the count.
 * The same array builds the filter and prints `cbox syscalls --host-surface`. */
CBOX_API const int *cbox_gofer_allowed_syscalls(size_t *n);

/*
 * Client calls (the sentry's side). Each sends one request and waits for its reply. They return
 * 0 (or a non-negative value as documented) on success and -errno as the gofer answered it
 * (ENOENT, EROFS, ...) on failure; -EIO when the connection broke or the reply was malformed
 * (the gofer is then considered gone). All fds returned are owned by the caller.
 */
struct cbox_gofer_client;
CBOX_API struct cbox_gofer_client *cbox_gofer_client_new(int sock);
CBOX_API void cbox_gofer_client_free(struct cbox_gofer_client *c); /* NULL-safe, closes sock */

/* Walk one component name (no '/', not "." or "..", 1..255 bytes) from dir fid; on success
 * *newfid is a new fid and *st the stat of the entry (lstat: symlinks are not followed). */
CBOX_API int cbox_gofer_walk(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                             uint32_t *newfid, struct cbox_gofer_stat *st);
/* Release a fid (not the root). */
CBOX_API int cbox_gofer_clunk(struct cbox_gofer_client *c, uint32_t fid);
/* Stat a fid. */
CBOX_API int cbox_gofer_stat(struct cbox_gofer_client *c, uint32_t fid, struct cbox_gofer_stat *st);
/* Open a fid with open(2) flags (O_ACCMODE, O_APPEND, O_NONBLOCK, O_DIRECTORY, O_TRUNC, O_NOATIME
 * and O_CLOEXEC are honoured; O_CREAT/O_EXCL are not: use create). Returns a new host fd or -errno
 * (EROFS for writes on a read-only mount, ELOOP for a symlink, ENXIO for sockets). */
CBOX_API int cbox_gofer_open(struct cbox_gofer_client *c, uint32_t fid, int flags);
/* Read a symlink's target into buf (NUL-terminated). Returns the length or -errno. */
CBOX_API int cbox_gofer_readlink(struct cbox_gofer_client *c, uint32_t fid, char *buf, size_t size);
/* statfs of the file system holding fid. */
CBOX_API int cbox_gofer_statfs(struct cbox_gofer_client *c, uint32_t fid,
                               struct cbox_gofer_statfs *st);
/* Mutations; all -EROFS on a read-only mount. create returns an opened host fd and sets *newfid
 * and *st. */
CBOX_API int cbox_gofer_create(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                               int flags, uint32_t mode, uint32_t *newfid,
                               struct cbox_gofer_stat *st);
CBOX_API int cbox_gofer_mkdir(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                              uint32_t mode);
CBOX_API int cbox_gofer_unlink(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                               bool is_dir);
CBOX_API int cbox_gofer_symlink(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                                const char *target);
CBOX_API int cbox_gofer_rename(struct cbox_gofer_client *c, uint32_t olddir, const char *oldname,
                               uint32_t newdir, const char *newname);
CBOX_API int cbox_gofer_link(struct cbox_gofer_client *c, uint32_t target, uint32_t dir,
                             const char *name);
