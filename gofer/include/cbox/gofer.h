#pragma once
/*
 * The gofer: the process of a sandbox that opens, walks and changes the guest's files (the sentry
 * only looks names up itself, through directory fds the gofer gave it: sentry/fs_gofer_local.c). It
 * runs in a mount namespace that holds only the guest's tree (rootfs, hidden paths, tmpfs and bind
 * mounts); it serves it to the sentry over a SOCK_SEQPACKET socketpair with the protocol of
 * lib/include/cbox/gofer_wire.h and passes opened files with SCM_RIGHTS. This header has both ends:
 * spawning the server and the sentry's client calls.
 *
 * Files are named by fids (like 9P): 32-bit handles the gofer maps to O_PATH fds. Fid 0 is the
 * root of the guest's tree and always exists. A walk goes one component at a time and never follows
 * a symlink: the sentry resolves symlinks, "." and ".." itself.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "cbox/compiler.h"
#include "cbox/err.h"
#include "cbox/gofer_wire.h"

#define CBOX_GOFER_ROOT_FID 0u

enum cbox_gofer_mount_kind {
	CBOX_GOFER_MOUNT_BIND,  /* source: a host path (dir or file), bound at target */
	CBOX_GOFER_MOUNT_TMPFS, /* a fresh tmpfs at target (source unused); size bytes, 0 = 50% RAM
	                           as tmpfs's default */
	CBOX_GOFER_MOUNT_FILE,  /* a file of the sandbox's own holding content, at target (a file):
	                           /etc/hosts and /etc/hostname, as Docker writes them */
};

/* The most bytes a FILE mount's content may have (the gofer's staging tmpfs holds them). */
#define CBOX_GOFER_FILE_MAX 16384u

/* path is at or below dir (both absolute, no "." or ".." components; dir may end in "/"): what
 * a hide or a mount at dir covers. */
CBOX_API bool cbox_gofer_path_at_or_below(const char *path, const char *dir);

/* One mount of the guest's tree, on top of the rootfs. */
struct cbox_gofer_mount {
	enum cbox_gofer_mount_kind kind;
	const char
	    *source; /* BIND: absolute host path (symlinks in it are followed, on the host) */
	const char *target; /* absolute path in the guest's tree, not "/" and without ".." */
	bool readonly;
	uint64_t size; /* TMPFS only */
	/* TMPFS only: the permission bits of its root (at most 07777) when mode_set, else 01777
	 * (as /tmp) */
	bool mode_set;
	uint32_t mode;
	const char *content; /* FILE only: its bytes (a string, at most CBOX_GOFER_FILE_MAX) */
};

struct cbox_gofer_config {
	const char *rootfs; /* host path of the guest's root */
	bool readonly;      /* the rootfs (not the mounts) is read-only: writes fail with EROFS */
	const char *const *hide; /* absolute guest paths shown empty */
	size_t n_hide;
	const struct cbox_gofer_mount *mounts; /* applied in order, after hide */
	size_t n_mounts;
	const char *const *mkdirs; /* dirs (mode 0755, parents too) created after the mounts; each
	                              must lie in a writable mount */
	size_t n_mkdirs;
	/* A writable root: an overlay whose lower layer is the rootfs (read-only, never changed)
	 * and whose upper layer is a tmpfs of this sandbox (overlay_size bytes, 0 = tmpfs's
	 * default), gone with it. Copy-up and whiteouts are the host's overlayfs. Only the rootfs's
	 * own file system is seen through it, not mounts below it in the host's tree; unless they
	 * are locked (run by a user): then each directory beside them is an overlay of its own
	 * (gofer/overlay.c). */
	bool overlay;
	uint64_t overlay_size;
	/* The caller sends the sandbox's user namespace (cbox_gofer_spawn_view) between start and
	 * finish: the gofer then serves VIEW, its tree's root through that namespace. */
	bool view_userns;
	/* The sandbox's cgroup: fork_in makes the gofer's process instead of fork() (it returns as
	 * fork does), join_cgroup runs first thing in it, before its namespaces, and a negative
	 * errno from it ends the start-up with that error; both get cgroup_arg. Born in the cgroup
	 * and joining it by itself, the gofer skips the wait a move by another process costs
	 * (cbox_cgroup_fork, tiers/cgroup/cgroup.c). NULL: a plain fork, no cgroup. */
	pid_t (*fork_in)(void *arg);
	int (*join_cgroup)(void *arg);
	void *cgroup_arg;
};

/* The index of the last mount of cfg whose target holds hidden path hide strictly below it: the
 * hide is made right after that mount, on what it mounted (gofer/tree.c). -1 for none. */
CBOX_API ssize_t cbox_gofer_hide_after(const struct cbox_gofer_config *cfg, const char *hide);

/*
 * Start a gofer process for cfg. On success *sock is the sentry's end of the socketpair
 * (SOCK_SEQPACKET, close-on-exec) and *pid the gofer's pid; the gofer exits when the socket is
 * closed or its parent dies. The child: new mount (and, when not root, user) namespace holding
 * only the guest's tree, host pseudo-filesystems (/proc, /sys, /dev, cgroups, ...) covered, its
 * own seccomp allowlist (cbox_gofer_allowed_syscalls), no_new_privs. The tree it serves from fid 0
 * is built before the pivot, each piece a real mount with its own flags:
 *  1. every BIND source is cloned (recursively) first, then the rootfs; the rootfs's mounts and
 *     each bind's are made nodev,nosuid (read-only per cfg->readonly / mount->readonly), with
 *     host pseudo-filesystems covered by an empty read-only directory in both;
 *     Then, for each mount whose target the rootfs lacks, where the deepest existing directory
 *     of the target is a host one that no hide and no other mount covers: that directory is
 *     covered by a tmpfs holding a recursive bind of each of its entries (each symlink
 *     recreated), up to 256 entries, so that step 3 may create the target in it; that tmpfs
 *     becomes read-only in step 5;
 *  2. hide: each path that exists in the rootfs (resolved inside it, never through a symlink; a
 *     symlink or a missing path is skipped) is covered: a directory by an empty tmpfs (read-only,
 *     nodev, nosuid, noexec at the end), anything else (files, sockets, fifos) by an empty
 *     read-only file;
 *  3. mounts, in order: the target must exist (symlinks are followed inside the tree), or its
 *     missing part must lie in a tmpfs the gofer made (a hide, a TMPFS mount or room made in
 *     step 1), where the directories (and, for a file bind, the file) are created. Nothing is
 *     ever created in the rootfs or in a bind (both are host file systems). TMPFS: nodev,nosuid,
 *     mode 1777; FILE: a file (mode 0644) in the gofer's staging tmpfs, bound nodev,nosuid,
 *     noexec (and read-only when asked) on the target, which must be a file;
 *  4. mkdirs (like mkdir -p, 0755, never through a symlink);
 *  5. hide tmpfs mounts and read-only TMPFS mounts become read-only.
 * The server refuses every mutation itself (EROFS) only when cfg->readonly and no mount is
 * writable; otherwise the read-only parts answer EROFS from the kernel.
 * Start-up handshake: the child sends one packet before serving, the ready packet or the error
 * that ended it; cbox_gofer_spawn waits for it (up to 30 s), so a setup failure is returned here
 * (the child is then reaped) and the socket only ever carries the protocol afterwards.
 * Errors (the message names the path): the rootfs or a BIND source does not exist or has the
 * wrong type (ENOENT/ENOTDIR), a path is not absolute, is "/" or has a ".." (EINVAL), a mount
 * target is missing outside a gofer tmpfs (ENOENT), a target's type does not fit its source
 * (ENOTDIR/EISDIR), a mkdirs path cannot be made (EROFS, ELOOP, ...), a mount failed (its errno),
 * fork/socketpair failures, the child died during setup (ECHILD).
 */
CBOX_API int cbox_gofer_spawn(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                              struct cbox_err **err);
/* cbox_gofer_spawn in two halves, so that the caller can do other work (make the sentry's
 * namespaces) while the gofer builds its tree: start forks the child (the config is checked
 * first); finish waits for its start-up packet, with cbox_gofer_spawn's errors (on failure the
 * child is reaped and *sock closed and set to -1). Nothing may use *sock in between. */
CBOX_API int cbox_gofer_spawn_start(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                                    struct cbox_err **err);
CBOX_API int cbox_gofer_spawn_finish(int *sock, pid_t pid, struct cbox_err **err);

/*
 * For a gofer started with cfg->view_userns, between start and finish: send it userns_fd, a user
 * namespace that maps a single host id, into which the sentry's stat is to show owners. The
 * gofer makes from it the view VIEW serves: a recursive copy of its tree, read-only, whose root
 * mount is idmapped so that the files of the host id the guest's own files are (host root,
 * under cbox-run run as root) show as owned by that namespace's id (make_view in spawn.c). The
 * gofer waits for it after building its tree; where the kernel cannot make the view, VIEW says
 * EOPNOTSUPP. Returns 0 or -errno (the caller kills the gofer then).
 */
CBOX_API int cbox_gofer_spawn_view(int sock, int userns_fd);

/*
 * Serve requests on sock until it is closed or a malformed request arrives (logged, then the
 * session ends). root_fd is an O_PATH|O_DIRECTORY fd of the root; it is consumed. Returns 0 on
 * an orderly end, -1 after a protocol error. Used by cbox_gofer_spawn's child and by tests
 * (which run it in-process over a socketpair, without the namespace and seccomp steps).
 */
CBOX_API int cbox_gofer_serve(int sock, int root_fd, bool readonly);
/* As cbox_gofer_serve, serving VIEW from view_fd (consumed; -1 for none). */
CBOX_API int cbox_gofer_serve_view(int sock, int root_fd, int view_fd, bool readonly);

/* lstat of fd (an O_PATH fd of a node itself) and the id of the mount it is on (0 when the
 * kernel does not say): one statx. Returns 0 or -errno. The gofer's walks use it, and so do the
 * sentry's own lookups on read-only mounts (sentry/fs_gofer_local.c), which must see what a walk
 * sees. */
CBOX_API int cbox_gofer_stat_node(int fd, struct stat *st, uint64_t *mnt_id);
/* st as it travels in a reply (not the read-only mark, which is the caller's). */
CBOX_API void cbox_gofer_fill_stat(struct cbox_gofer_stat *o, const struct stat *st);

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
/* With on, each request tells the gofer the CPU it is sent from, and the gofer waits for the
 * next one there (gofer/session.c): for a caller that stays on its guest's CPU, the seccomp
 * platform's sentry. Off by default. */
CBOX_API void cbox_gofer_client_hint_cpu(struct cbox_gofer_client *c, bool on);
/* How many requests that may change a file (create, remove, rename, link, set attributes or
 * xattrs, open for writing or truncating) the client has sent: while it stays the same, nothing
 * in the tree changed through this client. */
CBOX_API uint64_t cbox_gofer_changes(const struct cbox_gofer_client *c);

/* Walk one component name (no '/', not "." or "..", 1..255 bytes) from dir fid; on success
 * *newfid is a new fid and *st the stat of the entry (lstat: symlinks are not followed). */
CBOX_API int cbox_gofer_walk(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                             uint32_t *newfid, struct cbox_gofer_stat *st);
/* cbox_gofer_walk for a name about to be opened for reading (WALKOPEN): *fd is also an fd of
 * the entry opened read-only when the gofer could give one (a regular file or a directory on a
 * read-only mount), -1 otherwise; st is required. */
CBOX_API int cbox_gofer_walk_open(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                                  uint32_t *newfid, struct cbox_gofer_stat *st, int *fd);
/*
 * Walk the names of path (WALKN: 1..CBOX_GOFER_WALKN_MAX names joined by '/', each as for
 * cbox_gofer_walk) from dir fid in one round trip. Returns the number of names walked (>= 1),
 * with out[i] the new fid and stat of name i; the walk stops after a name that is not a
 * directory, and at a name that fails, whose errno goes to *walk_error (0 when none failed).
 * Returns -errno when the first name fails. The reply is checked against the request: no more
 * entries than names, only directories before the last, an error only when names were left.
 * With fd not NULL (WALKNOPEN, for a path about to be opened for reading), *fd is an fd of the
 * path's last name opened read-only when the walk reached it and the gofer could give one (as
 * cbox_gofer_walk_open), -1 otherwise.
 */
CBOX_API int cbox_gofer_walk_many(struct cbox_gofer_client *c, uint32_t dir, const char *path,
                                  size_t len, struct cbox_gofer_walked *out, int *walk_error,
                                  int *fd);
/* One entry of a WALKDIR answer: its new fid, stat and name (NUL-terminated). */
struct cbox_gofer_dirent {
	uint32_t fid;
	struct cbox_gofer_stat stat;
	char name[CBOX_GOFER_NAME_MAX + 1];
};
/*
 * Walk name in dir fid and up to count - 1 (count: 1..CBOX_GOFER_WALKDIR_MAX) of the entries
 * that follow it in the directory's listing, in one round trip (WALKDIR); count or'd with
 * CBOX_GOFER_WALKDIR_WRAP goes on from the listing's start after its end, up to name (the whole
 * of a directory of fewer than count entries, wherever name is). Returns the number of
 * entries (>= 1) in out, the first being name; -errno when name itself fails. The reply is
 * checked against the request: no more entries than count, the first one name, no other entry
 * of that name.
 */
CBOX_API int cbox_gofer_walk_dir(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                                 unsigned count, struct cbox_gofer_dirent *out);
/* Release a fid (not the root). */
CBOX_API int cbox_gofer_clunk(struct cbox_gofer_client *c, uint32_t fid);
/* Release n fids, CBOX_GOFER_CLUNKN_MAX to a round trip. Returns 0, or the error of the first
 * that failed (the others are released all the same). */
CBOX_API int cbox_gofer_clunk_many(struct cbox_gofer_client *c, const uint32_t *fids, size_t n);
/* Stat a fid. */
CBOX_API int cbox_gofer_stat(struct cbox_gofer_client *c, uint32_t fid, struct cbox_gofer_stat *st);
/* Open a fid with open(2) flags (O_ACCMODE, O_APPEND, O_NONBLOCK, O_DIRECTORY, O_TRUNC, O_NOATIME
 * and O_CLOEXEC are honoured; O_CREAT/O_EXCL are not: use create). Returns a new host fd or -errno
 * (EROFS for writes on a read-only mount, ELOOP for a symlink, ENXIO for sockets).
 * O_PATH (alone, or with O_CLOEXEC) is for sockets only: an O_PATH fd of a socket node that a
 * BIND of this session made, for connecting to it; -ECONNREFUSED for any other socket (one that
 * was in the tree already belongs to a host service), -EINVAL for other types or flags. */
CBOX_API int cbox_gofer_open(struct cbox_gofer_client *c, uint32_t fid, int flags);
/*
 * The session's first requests, sent ahead: the root's STAT and, with view, VIEW (an O_PATH fd
 * of the root of the gofer's view, cbox_gofer_spawn_view; -EOPNOTSUPP: it has none), then a WALK
 * from the root to each of the n_walks names (at most CBOX_GOFER_EARLY_WALKS). The gofer
 * answers them as soon as it serves, so a client that starts while the gofer still builds its
 * tree does not wait, when it needs them, for the gofer to be woken up for each (0.06 to 1.4
 * ms for the first round trip at the sentry's start on this VM, by which CPU the gofer woke
 * on). cbox_gofer_early_recv takes the answers, the root's as cbox_gofer_stat would return it
 * (*view_fd: the fd or -errno; -EOPNOTSUPP when not asked) and the walks'; any other request in
 * between is refused (-EIO, the client is then broken: it would take a reply not its own).
 */
#define CBOX_GOFER_EARLY_WALKS 4
/* A walk's answer, as cbox_gofer_walk would give it: err 0 (fid and stat set) or -errno. */
struct cbox_gofer_early_walk {
	int err;
	uint32_t fid;
	struct cbox_gofer_stat stat;
};
CBOX_API int cbox_gofer_early_send(struct cbox_gofer_client *c, bool view, const char *const *walks,
                                   size_t n_walks);
/* walks: room for the n_walks answers, in the order sent. */
CBOX_API int cbox_gofer_early_recv(struct cbox_gofer_client *c, struct cbox_gofer_stat *root,
                                   int *view_fd, struct cbox_gofer_early_walk *walks);
/* Read a symlink's target into buf (NUL-terminated). Returns the length or -errno. */
CBOX_API int cbox_gofer_readlink(struct cbox_gofer_client *c, uint32_t fid, char *buf, size_t size);
/* statfs of the file system holding fid. */
CBOX_API int cbox_gofer_statfs(struct cbox_gofer_client *c, uint32_t fid,
                               struct cbox_gofer_statfs *st);
/*
 * Mutations; all -EROFS on a read-only mount.
 * The calls that make a node (create, tmpfile, mkdir, symlink, mknod, bind) take its owner: uid
 * and gid are the host ids the gofer gives the new node; (uint32_t)-1 for either leaves that id
 * as the gofer made the node (its own id; for the group, the one the kernel chose, which is the
 * directory's when it is set-group-ID). The owner is set before the reply, or the node is removed
 * again: a chown that fails (-EPERM when the gofer may not give that id, -EINVAL for an id its
 * user namespace does not map, ...) is the call's error and leaves no node behind, as Linux's
 * creation is atomic. The stat a call returns shows the owner given. The permission bits never
 * keep setuid/setgid (dropped by the gofer), so the chown cannot change the mode.
 */
/* A new regular file name in dir (O_CREAT|O_EXCL, never opening an existing entry): returns an
 * opened host fd and sets *newfid and *st (when not NULL). */
CBOX_API int cbox_gofer_create(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                               int flags, uint32_t mode, uint32_t uid, uint32_t gid,
                               uint32_t *newfid, struct cbox_gofer_stat *st);
/* An unnamed file in dir (O_TMPFILE; flags: the access mode, O_EXCL and file flags): an open host
 * fd; *newfid names it for cbox_gofer_link (which fails with ENOENT after O_EXCL). */
CBOX_API int cbox_gofer_tmpfile(struct cbox_gofer_client *c, uint32_t dir, int flags, uint32_t mode,
                                uint32_t uid, uint32_t gid, uint32_t *newfid,
                                struct cbox_gofer_stat *st);
CBOX_API int cbox_gofer_mkdir(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                              uint32_t mode, uint32_t uid, uint32_t gid);
CBOX_API int cbox_gofer_unlink(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                               bool is_dir);
CBOX_API int cbox_gofer_symlink(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                                const char *target, uint32_t uid, uint32_t gid);
/* flags: 0, RENAME_NOREPLACE or RENAME_EXCHANGE (renameat2's). */
CBOX_API int cbox_gofer_rename(struct cbox_gofer_client *c, uint32_t olddir, const char *oldname,
                               uint32_t newdir, const char *newname, uint32_t flags);
CBOX_API int cbox_gofer_link(struct cbox_gofer_client *c, uint32_t target, uint32_t dir,
                             const char *name);

/*
 * Change the attributes of fid (SETATTR): a->valid says which, applied in the order mode
 * (a->mode & 07777, setuid/setgid always dropped), owner (a->uid/a->gid, (uint32_t)-1 =
 * unchanged), size (regular files only), times (nsec may be UTIME_NOW/UTIME_OMIT); the first
 * error is returned and the later fields are not applied. Never follows a symlink: a mode change
 * on one is -EOPNOTSUPP, as on Linux. Errors: -EINVAL for unknown valid bits, a negative size or
 * an out-of-range nsec (refused before sending); -EISDIR (size of a directory), -EINVAL (size of
 * anything else but a regular file), -EROFS, -EPERM, -EBADF (unknown fid), -EIO.
 */
CBOX_API int cbox_gofer_setattr(struct cbox_gofer_client *c, uint32_t fid,
                                const struct cbox_gofer_setattr *a);

/*
 * Make a node name in dir (MKNOD) with mode = type | permissions: S_IFIFO, S_IFSOCK (what bind(2)
 * of an AF_UNIX path makes) or S_IFREG (type 0 means S_IFREG, as in mknod(2)); setuid/setgid
 * are dropped. uid, gid: its owner (see the mutations above). On success *newfid is a fid of the
 * new node and *st (when not NULL) its stat (like WALK).
 * Errors: -EPERM for S_IFCHR/S_IFBLK (the tree is served without devices), -EINVAL for any other
 * type or bits beyond type and 07777, -EEXIST, -EROFS, -ENOTDIR, -EBADF, the chown's error, -EIO.
 */
CBOX_API int cbox_gofer_mknod(struct cbox_gofer_client *c, uint32_t dir, const char *name,
                              uint32_t mode, uint32_t uid, uint32_t gid, uint32_t *newfid,
                              struct cbox_gofer_stat *st);

/*
 * Bind the AF_UNIX socket sockfd (borrowed: the caller keeps and closes it) to path (len bytes,
 * 1..108, no NUL: the sun_path the guest gave), resolved by the gofer's kernel from directory fid
 * cwd inside the guest's tree (an absolute path from the tree's root). getsockname then returns
 * exactly that path. mode: the node's permission bits (0777 less the guest's umask, as bind(2)
 * gives them; above 0777: -EINVAL). uid, gid: the socket node's owner (see the mutations above).
 * When that chown fails the node is removed, but sockfd stays bound to the removed name (a socket
 * cannot be unbound): the caller should give the guest the error and treat sockfd as spent for
 * bind. Errors: as bind(2) in the tree (EADDRINUSE, ENOENT, ENOTDIR, EROFS, ...), -EINVAL/
 * -ENAMETOOLONG for a bad path (refused before sending), -EAFNOSUPPORT when sockfd is not an
 * AF_UNIX socket, -ENOTSOCK, -EBADF (fid or fd), the chown's error, -EIO.
 */
CBOX_API int cbox_gofer_bind(struct cbox_gofer_client *c, uint32_t cwd, const char *path,
                             size_t len, int sockfd, uint32_t mode, uint32_t uid, uint32_t gid);
/* Connect sockfd (an AF_UNIX socket, borrowed) to the socket node fid, named by path (<= 108
 * bytes: its name) from the directory dir: only a socket a guest of this session bound, and only
 * when path leads to fid's node (else -ECONNREFUSED). Errors: as connect(2) (ECONNREFUSED,
 * EACCES, EAGAIN where it would wait), -EBADF (a fid or the fd), -ENOTDIR, -EAFNOSUPPORT,
 * -ENOTSOCK, -EIO. */
CBOX_API int cbox_gofer_connect(struct cbox_gofer_client *c, uint32_t fid, uint32_t dir,
                                const char *path, size_t len, int sockfd);
/* Send buf (n bytes, 65536 at most, else -EMSGSIZE) as one datagram from sockfd (an AF_UNIX
 * datagram socket, borrowed) to the socket node fid, named as for cbox_gofer_connect; flags:
 * MSG_EOR and MSG_CONFIRM at most (-EINVAL), never waiting (EAGAIN). Returns the bytes sent. */
CBOX_API ssize_t cbox_gofer_sendto(struct cbox_gofer_client *c, uint32_t fid, uint32_t dir,
                                   const char *name, size_t len, int sockfd, const void *buf,
                                   size_t n, int flags);
/* Add a watch with mask for fid's file to the inotify instance ifd (borrowed; the guest's, as
 * a duplicate). Returns the watch descriptor or -errno (ENOENT, ENOSPC, EINVAL...). */
CBOX_API int cbox_gofer_inotify(struct cbox_gofer_client *c, uint32_t fid, uint32_t mask, int ifd);

/*
 * Extended attributes of fid (never following a symlink: a symlink fid names the link itself).
 * Only names in the user.* namespace are served: a set or remove of security.*, system.* or
 * trusted.* is -EPERM, a get of one -ENODATA, a name with no known prefix -EOPNOTSUPP; a list
 * shows only user.* names. name: 1..255 bytes (-ERANGE otherwise, refused before sending).
 * getxattr/listxattr copy the value (list: NUL-terminated names) into buf and return its length;
 * with size 0 they only return the length; -ERANGE when size is too small. setxattr: flags 0,
 * XATTR_CREATE or XATTR_REPLACE (-EINVAL otherwise), len <= 65536 (-E2BIG). Other errors as
 * the host's *xattr calls: -ENODATA, -EEXIST, -EROFS, -EPERM (user.* on a symlink or special
 * file), -EOPNOTSUPP, -EBADF (fid), -EIO.
 */
CBOX_API int cbox_gofer_getxattr(struct cbox_gofer_client *c, uint32_t fid, const char *name,
                                 void *buf, size_t size);
CBOX_API int cbox_gofer_setxattr(struct cbox_gofer_client *c, uint32_t fid, const char *name,
                                 const void *value, size_t len, int flags);
CBOX_API int cbox_gofer_listxattr(struct cbox_gofer_client *c, uint32_t fid, char *buf,
                                  size_t size);
CBOX_API int cbox_gofer_removexattr(struct cbox_gofer_client *c, uint32_t fid, const char *name);
