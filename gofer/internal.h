#pragma once
/* Private to gofer/: the server's state and single-step entry point (used by the fuzz target). */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cbox/compiler.h"
#include "cbox/gofer.h"

/* One file the session knows. Shared by every fid walked to it from the same parent; a parent
 * stays alive as long as a child does, because reopening a non-directory goes through it. */
struct cbox_gofer_node {
	int fd; /* O_PATH|O_NOFOLLOW */
	unsigned refs;
	struct cbox_gofer_node *parent; /* NULL for the root */
	dev_t dev;
	ino_t ino;
	mode_t mode; /* only the type bits are relied on: an inode never changes type */
	/* The mount the node is on (0: not known) and whether it is read-only (1, 0; -1 not asked
	 * yet): a node on its parent's mount has its parent's answer (serve.c, mark_mount). */
	uint64_t mnt_id;
	int8_t ro;
	/* A TMPFILE: no parent or name, and fd is the file opened (not O_PATH), since an unnamed
	 * file cannot be reopened; LINK names it through fd (see do_link). */
	bool anon;
	char name[];
};

/* The sockets this session bound (BIND), by identity: the only ones OPEN gives an O_PATH fd of
 * (see cbox_gofer_do_bind). A ring: when full, the oldest is forgotten. */
#define CBOX_GOFER_BOUND_MAX 1024u

struct cbox_gofer_server {
	int sock;
	bool readonly;
	struct cbox_gofer_node **fids; /* index = fid */
	uint32_t cap;
	uint32_t hint; /* where the search for a free fid starts */
	struct {
		dev_t dev;
		ino_t ino;
	} bound[CBOX_GOFER_BOUND_MAX];
	uint32_t n_bound, next_bound;
	char *xbuf; /* CBOX_GOFER_XVALUE_MAX bytes: a GETXATTR value or LISTXATTR list, or the
	             * records of a WALKDIR reply */
	/* CBOX_GOFER_MSG_MAX bytes each: the request being served (its names point into it) and
	 * the reply being sent. Not on the stack, where 136 KiB a request would make the gofer's
	 * depth depend on a stack limit (ulimit -s) it does not choose. */
	unsigned char *reqbuf, *replybuf;
	/* Where the last WALKDIR stopped reading (serve.c): its directory (a reference), an open
	 * descriptor of it (-1: none), and the offset of the entry after the last one it looked
	 * at. */
	struct cbox_gofer_node *wd_node;
	int wd_fd;
	int64_t wd_next;
	uint32_t cpu; /* the CPU the server waits on, + 1 (0: not pinned; session.c) */
	int view_fd;  /* the root seen through the sandbox's user namespace (VIEW), or -1 */
};

/* The node of fid, or NULL when fid is not in use. */
static inline struct cbox_gofer_node *cbox_gofer_server_lookup(const struct cbox_gofer_server *s,
                                                               uint32_t fid)
{
	return fid < s->cap ? s->fids[fid] : NULL;
}

/* Drop a reference to n (and to its parents, as they become unused). */
void cbox_gofer_node_unref(struct cbox_gofer_node *n);
/* serve.c: run q (decoded and checked). Returns 0 with r filled (and *fd_out set for
 * OPEN/CREATE/TMPFILE) or -errno for the peer. buf holds a READLINK target; in_fd is the fd a BIND,
 * CONNECT, SENDTO or INOTIFY carried, in_fd2 the memfd of a SENDTO's datagram
 * (CBOX_GOFER_SENDTO_MEMFD), else -1.
 */
int cbox_gofer_handle(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                      struct cbox_gofer_reply *r, int *fd_out, char *buf, size_t size, int in_fd,
                      int in_fd2);

/* serve.c, for the batched requests: a decoded name NUL-terminated into out (names are at most
 * 255 bytes, checked by the decoder); dir's node, -EBADF or -ENOTDIR; one name (NUL-terminated,
 * checked) of dir walked as a WALK: a new fid and its stat; fid released as a CLUNK. */
void cbox_gofer_cstr(char *out, const char *p, size_t len);
int cbox_gofer_lookup_dir(const struct cbox_gofer_server *s, uint32_t fid,
                          struct cbox_gofer_node **dir);
int cbox_gofer_walk_name(struct cbox_gofer_server *s, struct cbox_gofer_node *dir, const char *name,
                         uint32_t *fid, struct cbox_gofer_stat *out);
int cbox_gofer_clunk_one(struct cbox_gofer_server *s, uint32_t fid);

/* Whether a request that makes a node carries an owner for it (not -1/-1). */
static inline bool cbox_gofer_wants_owner(const struct cbox_gofer_req *q)
{
	return q->uid != (uint32_t)-1 || q->gid != (uint32_t)-1;
}
/* serve.c, for the handlers elsewhere: a fid for the O_PATH fd *fd (taken on success) named name
 * in parent, or for an unnamed file open at *fd (TMPFILE); the flags an OPEN or CREATE may carry
 * (-EINVAL, or -EROFS on a read-only server); fd is still the inode dev/ino (-ESTALE: the name
 * was replaced); n opened with flags, checked to be n's inode; whether n's name in its parent no
 * longer leads to its file st. */
int cbox_gofer_add_fid(struct cbox_gofer_server *s, struct cbox_gofer_node *parent,
                       const char *name, int *fd, const struct stat *st, uint32_t *fid);
int cbox_gofer_add_anon_fid(struct cbox_gofer_server *s, int *fd, const struct stat *st,
                            uint32_t *fid);
int cbox_gofer_check_open_flags(const struct cbox_gofer_server *s, uint32_t flags);
int cbox_gofer_check_same(int fd, dev_t dev, ino_t ino);
int cbox_gofer_reopen(const struct cbox_gofer_node *n, uint32_t flags);
bool cbox_gofer_name_moved(const struct cbox_gofer_node *n, const struct stat *st);

/* serve_mut.c: the requests that change the tree. Each returns 0 with r filled (and *fd_out
 * for CREATE and TMPFILE) or -errno for the peer; cbox_gofer_do_dir_op is MKDIR, UNLINK and
 * SYMLINK. Preconditions: q was decoded by cbox_gofer_decode_request and has the handler's
 * type, on a writable server. */
int cbox_gofer_do_create(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                         struct cbox_gofer_reply *r, int *fd_out);
int cbox_gofer_do_tmpfile(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, int *fd_out);
int cbox_gofer_do_link(struct cbox_gofer_server *s, const struct cbox_gofer_req *q);
int cbox_gofer_do_rename(struct cbox_gofer_server *s, const struct cbox_gofer_req *q);
int cbox_gofer_do_dir_op(struct cbox_gofer_server *s, const struct cbox_gofer_req *q);
int cbox_gofer_do_setattr(struct cbox_gofer_server *s, const struct cbox_gofer_req *q);
int cbox_gofer_do_mknod(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r);

/* serve_mut.c: give the node just made, open at fd (its own fd: an open file or O_PATH) and stat'ed
 * into *st, the owner q carries (nothing when it carries none or the node has it already), and
 * refresh *st after a chown. Returns 0 or the chown's -errno; the caller then removes the node
 * (why: see serve_mut.c). */
int cbox_gofer_own_new(int fd, const struct cbox_gofer_req *q, struct stat *st);
/* serve_mut.c: remove name (resolved from dirfd, not followed) when it still holds the node just
 * made: the inode *st, or when st is NULL any node of that type (S_IFDIR, S_IFLNK, ...). Anything
 * else there was put by someone else and is left alone. */
void cbox_gofer_unmake(int dirfd, const char *name, mode_t type, const struct stat *st);
/* serve_batch.c: WALKN into buf (at least CBOX_GOFER_WALKN_MAX entries), WALKDIR's records into
 * buf, CLUNKN. */
int cbox_gofer_do_walkn(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r, char *buf, size_t size);
int cbox_gofer_do_walkdir(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, char *buf, size_t size);
int cbox_gofer_do_clunkn(struct cbox_gofer_server *s, const struct cbox_gofer_req *q);

/*
 * The request handlers of serve_ext.c (AF_UNIX bind, extended attributes). Each returns 0 with r
 * filled, or -errno for the peer. cbox_gofer_do_bind takes sockfd (the fd the request carried):
 * it is always closed by the caller. Preconditions: q was decoded by cbox_gofer_decode_request
 * and has the handler's type.
 */
int cbox_gofer_do_bind(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int sockfd);
/* CONNECT, SENDTO: likewise sockfd, connected or sent to a socket node this session bound (a
 * SENDTO's datagram in the memfd mfd with CBOX_GOFER_SENDTO_MEMFD, else -1). */
int cbox_gofer_do_connect(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int sockfd);
int cbox_gofer_do_sendto(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                         struct cbox_gofer_reply *r, int sockfd, int mfd);
/* INOTIFY: add a watch for fid's file to the guest's inotify instance ifd; r->fid gets the wd. */
int cbox_gofer_do_inotify(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, int ifd);
int cbox_gofer_do_xattr(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r);
/* Whether (dev, ino) is a socket this session bound (O_PATH opens of sockets: see do_open). */
bool cbox_gofer_bound_has(const struct cbox_gofer_server *s, dev_t dev, ino_t ino);

/*
 * Create a server answering on sock (not owned: the caller closes it) for the tree at root_fd
 * (an O_PATH|O_DIRECTORY fd, consumed even on failure). Returns NULL on ENOMEM (errno set).
 */
struct cbox_gofer_server *cbox_gofer_server_new(int sock, int root_fd, bool readonly);

/* Close every fid's fd and free the server. NULL-safe. */
void cbox_gofer_server_free(struct cbox_gofer_server *s);

/*
 * Receive one request, act on it and send the reply. Returns 1 when a request was answered,
 * 0 when the peer closed the connection (or can no longer be written to), -1 after a malformed
 * request or a receive error (already logged with cbox_error: the session must end).
 * Blocks until a packet arrives.
 */
int cbox_gofer_serve_one(struct cbox_gofer_server *s);

/* The most fids a session can hold at once, the root included. */
#define CBOX_GOFER_FID_MAX 65536u

/*
 * Install the gofer's seccomp filter (cbox_gofer_allowed_syscalls, default kill-process) on the
 * calling thread. sendmsg/recvmsg are allowed only on sock, write only on log_fd.
 * Precondition: no_new_privs is set. Returns 0 or -errno (libseccomp's).
 */
int cbox_gofer_seccomp_install(int sock, int log_fd);

/*
 * In the gofer child, before the pivot, for each of n staged trees: cover every host
 * pseudo-filesystem mounted at or under prefix (proc, sysfs, devtmpfs, devpts, cgroup*, debugfs,
 * ..., and tmpfs at /run, /run/..., /dev, /dev/shm relative to prefix) with a read-only clone of
 * CBOX_GOFER_EMPTY_DIR (or _FILE), then make every mount under prefix nodev,nosuid (and
 * read-only when readonly). Reads /proc/self/mountinfo once for all (each read ~0.15 ms on this
 * VM). The prefixes must not nest. Dies (cbox_gofer_setup_fail) on any failure.
 */
struct cbox_gofer_staged {
	const char *prefix;
	bool readonly;
};
void cbox_gofer_mounts_restrict(const struct cbox_gofer_staged *trees, size_t n);

/* One mount of /proc/self/mountinfo. */
struct cbox_gofer_mount_point {
	char *line;          /* owns the strings below */
	uint64_t id, parent; /* the mount's id (as statx's STATX_MNT_ID) and its parent's */
	char *point;         /* unescaped mount point */
	char *fstype;        /* file system type */
	unsigned long flags; /* per-mount flags (MS_RDONLY, MS_NOSUID, ...) */
};
/* Every mount of the gofer's namespace (free with cbox_gofer_mount_points_free). Dies
 * (cbox_gofer_setup_fail) on failure. */
size_t cbox_gofer_mount_points(struct cbox_gofer_mount_point **out);
void cbox_gofer_mount_points_free(struct cbox_gofer_mount_point *p, size_t n);

/* In the gofer child, before the pivot: mount a read-only (and nodev, nosuid, noexec) clone of
 * CBOX_GOFER_EMPTY_DIR (dir) or CBOX_GOFER_EMPTY_FILE on top of the O_PATH fd at, hiding what
 * is there. Dies (cbox_gofer_setup_fail, naming what) on failure. */
void cbox_gofer_cover(int at, bool dir, const char *what);

/* Where the guest's tree is assembled before the pivot: a private tmpfs on STAGE_DIR holding the
 * rootfs at STAGE_ROOT, each bind at STAGE_DIR/m<index>, and the empty file and directory that
 * hidden files and host pseudo-filesystems are covered with (read-only clones of them). */
#define CBOX_GOFER_STAGE_DIR  "/tmp"
#define CBOX_GOFER_STAGE_ROOT "/tmp/root"
#define CBOX_GOFER_EMPTY_FILE CBOX_GOFER_STAGE_DIR "/empty"
#define CBOX_GOFER_EMPTY_DIR  CBOX_GOFER_STAGE_DIR "/empty.d"

/*
 * In the gofer child, in its own private mount namespace: build the guest's whole tree at
 * CBOX_GOFER_STAGE_ROOT as cbox_gofer_spawn documents (clone the bind sources and the rootfs,
 * restrict them, hide, mount, mkdirs, read-only pass). cfg was checked by
 * cbox_gofer_config_check. Dies (cbox_gofer_setup_fail, naming the path) on any failure.
 */
void cbox_gofer_tree_build(const struct cbox_gofer_config *cfg);

/* tree.c: path (a guest path) is at or below a path cfg hides or mounts over. */
bool cbox_gofer_covered_later(const struct cbox_gofer_config *cfg, const char *path);

/*
 * overlay.c: the writable root of --overlay at root (a directory of the staging tmpfs), over the
 * staged, restricted rootfs at lower, with its upper and work directories made in upper (a
 * directory of the sandbox's upper tmpfs). One overlay; or, when overlayfs cannot take the
 * rootfs as one lower layer (run by a user, the mounts below it are locked), one per directory
 * with no mount below it, in a skeleton of the directories that hold mount points (paths that
 * cfg hides or mounts over stay empty there). Returns the number of overlays and their devices
 * in *devs (malloc'd: the places the gofer may create mount points in). Dies
 * (cbox_gofer_setup_fail) on failure.
 */
size_t cbox_gofer_overlay_mount(const struct cbox_gofer_config *cfg, const char *lower,
                                const char *upper, const char *root, dev_t **devs);

/*
 * Check cfg's paths and kinds without touching the file system beyond stat of the rootfs and
 * bind sources. Returns 0 or a cbox_err naming the bad entry (EINVAL, ENOENT, ENOTDIR).
 */
int cbox_gofer_config_check(const struct cbox_gofer_config *cfg, struct cbox_err **err);

/*
 * The gofer child's fatal setup error: "gofer: <fmt>" (plus strerror(errnum) when errnum > 0)
 * is sent to the parent as the start-up packet (see cbox_gofer_setup_report_to), logged when it
 * cannot be sent, and the child _exits with status 1. Only in the child.
 */
CBOX_NORETURN void cbox_gofer_setup_fail(int errnum, const char *fmt, ...) CBOX_PRINTF(2, 3);

/* Tell cbox_gofer_setup_fail which socket carries the start-up packet (-1: none). */
void cbox_gofer_setup_report_to(int sock);
