/*
 * The gofer's AF_UNIX bind and extended-attribute requests (the rest of the server is serve.c).
 * Both act on the guest's tree only: bind resolves the guest's own path in the gofer's mount
 * namespace, which holds nothing but that tree, and the xattr calls name a fid's inode.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "internal.h"

/* The *xattrat calls (Linux 6.13); glibc 2.36's headers number none of them. */
#ifndef __NR_setxattrat
#define __NR_setxattrat    463
#define __NR_getxattrat    464
#define __NR_listxattrat   465
#define __NR_removexattrat 466
#endif

struct xattr_args_v0 {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

bool cbox_gofer_bound_has(const struct cbox_gofer_server *s, dev_t dev, ino_t ino)
{
	for (uint32_t i = 0; i < s->n_bound; i++)
		if (s->bound[i].dev == dev && s->bound[i].ino == ino)
			return true;
	return false;
}

static void bound_add(struct cbox_gofer_server *s, dev_t dev, ino_t ino)
{
	if (cbox_gofer_bound_has(s, dev, ino))
		return;
	s->bound[s->next_bound].dev = dev;
	s->bound[s->next_bound].ino = ino;
	s->next_bound = (s->next_bound + 1) % CBOX_GOFER_BOUND_MAX;
	if (s->n_bound < CBOX_GOFER_BOUND_MAX)
		s->n_bound++;
}

/*
 * The socket node bind(2) just made at path, found again from the same cwd (the last component
 * not followed, and it must be a socket): given q's owner through an fd of that node (see
 * cbox_gofer_own_new), then recorded so that O_PATH opens of it are allowed. bind(2) gives no
 * handle on the node it made, so the path is resolved a second time; the gofer serves no other
 * request in between, so only someone on the host changing the guest's tree could make the name
 * lead elsewhere, and then only to a socket node (the type is checked on the fd that is chowned).
 * Without an owner to give, a failure only means a later connect to it is refused. When the node
 * cannot be given its owner it is removed, and the socket stays bound to the removed name:
 * bind(2) cannot be undone.
 */
static int own_bound(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, const char *path)
{
	struct stat st;
	bool want = cbox_gofer_wants_owner(q);
	CBOX_AUTOCLOSE int fd = openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && want && errno != ENOENT) {
		int e = errno; /* (out of fds or memory: not left behind with the gofer's ids) */
		cbox_gofer_unmake(AT_FDCWD, path, S_IFSOCK, NULL);
		return -e;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return want ? -EIO : 0; /* gone or replaced: not ours to change (as own_made) */
	int rc = cbox_gofer_own_new(fd, q, &st);
	if (rc < 0) {
		cbox_gofer_unmake(AT_FDCWD, path, S_IFSOCK, &st);
		return rc;
	}
	bound_add(s, st.st_dev, st.st_ino);
	return 0;
}

/* Only an AF_UNIX socket may come with BIND, CONNECT or SENDTO: any other fd (a file, an inet
 * socket) would make the call mean something the sentry did not check. */
static int unix_socket_only(int sockfd)
{
	int domain = 0;
	socklen_t dlen = sizeof(domain);
	if (getsockopt(sockfd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0)
		return errno == ENOTSOCK ? -ENOTSOCK : -EBADF;
	return domain == AF_UNIX ? 0 : -EAFNOSUPPORT;
}

/* What BIND, CONNECT and SENDTO share: dir (the fid the path is resolved from) must be a
 * directory and sockfd an AF_UNIX socket; *sa and path get q's sockpath. On success the gofer's
 * cwd is dir (the caller goes back with back_to_root). */
static int sock_path_at(const struct cbox_gofer_node *dir, const struct cbox_gofer_req *q,
                        int sockfd, struct sockaddr_un *sa, socklen_t *alen, char *path)
{
	if (dir == NULL)
		return -EBADF;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	int rc = unix_socket_only(sockfd);
	if (rc < 0)
		return rc;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, q->name2, q->name2_len); /* <= 108 bytes, no NUL: checked */
	*alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + q->name2_len);
	memcpy(path, q->name2, q->name2_len);
	path[q->name2_len] = '\0';
	return fchdir(dir->fd) < 0 ? -errno : 0;
}

static void back_to_root(struct cbox_gofer_server *s, const char *what)
{
	struct cbox_gofer_node *root = cbox_gofer_server_lookup(s, CBOX_GOFER_ROOT_FID);
	if (fchdir(root->fd) < 0)
		cbox_error("gofer: cannot return to the root after a %s: %s", what,
		           strerror(errno));
}

/*
 * BIND: bind the guest's AF_UNIX socket to the guest's own path, resolved from the guest's cwd.
 * The path is resolved by the host kernel in the gofer's mount namespace, which is the guest's
 * tree and nothing else (the gofer is pivoted into it; host paths are not mounted there), so
 * neither "..", an absolute path nor a symlink (even one to "/../..") can name a host file: ".."
 * stops at the gofer's root, which is the guest's root. The mounts' own flags apply (EROFS on the
 * read-only parts). The sentry made Linux's permission checks on its view of the same tree.
 */
int cbox_gofer_do_bind(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int sockfd)
{
	struct sockaddr_un sa;
	socklen_t alen;
	char path[CBOX_GOFER_SOCKPATH_MAX + 1];
	int rc = sock_path_at(cbox_gofer_server_lookup(s, q->fid), q, sockfd, &sa, &alen, path);
	if (rc == 0) {
		/* The node gets the mode the sentry computed (0777 less the guest's umask), as
		 * bind(2) gives it; the gofer's own umask is 0 otherwise. */
		umask(~q->mode & 0777);
		rc = bind(sockfd, (struct sockaddr *)&sa, alen) < 0 ? -errno : 0;
		umask(0);
		if (rc == 0)
			rc = own_bound(s, q, path);
	}
	/* Back to the root, so that no later relative name of the gofer's depends on a guest's
	 * cwd. */
	back_to_root(s, "bind");
	return rc;
}

/*
 * The listener learns who connected from the connecting task's effective ids (SO_PEERCRED:
 * ssh-agent refuses a peer that is not its own user), and the host checks the socket node's
 * permission on its fs ids. So while the gofer connects for the guest, its effective ids are the
 * guest's host ids (the owner of the guest's socket, which the guest made) and its fs ids stay
 * its own: the peer is the guest, as when the guest connects on Linux, and the node, which the
 * gofer owns for the guest, is reachable as the sentry's checks said. A gofer that cannot
 * switch (it has the guest's ids already, or no privilege to change them) connects as itself.
 */
struct as_guest {
	bool uid, gid, real;
	uid_t own_uid;
	gid_t own_gid;
};

/*
 * real: the real ids too, for a datagram. The receiver's SCM_CREDENTIALS (SO_PASSCRED) name the
 * sender's real ids, which stayed the gofer's: a guest reading them saw 65534 (host root is not
 * mapped in its namespace) where Linux shows the sender's own. The saved ids stay the gofer's,
 * so going back is allowed. Security: for that moment a process of the guest's host id could
 * signal the gofer, but no guest task can name it (the gofer is outside the sandbox's pid
 * namespace), and the gofer serves one request at a time and switches back before the next.
 */
static void as_guest_begin(struct as_guest *g, int sockfd, bool real)
{
	struct stat st;
	g->uid = g->gid = false;
	g->real = real;
	g->own_uid = geteuid();
	g->own_gid = getegid();
	if (fstat(sockfd, &st) < 0)
		return;
	if (st.st_gid != g->own_gid &&
	    setresgid(real ? st.st_gid : (gid_t)-1, st.st_gid, (gid_t)-1) == 0) {
		g->gid = true;
		setfsgid(g->own_gid);
	}
	if (st.st_uid != g->own_uid &&
	    setresuid(real ? st.st_uid : (uid_t)-1, st.st_uid, (uid_t)-1) == 0) {
		g->uid = true;
		setfsuid(g->own_uid);
	}
}

static void as_guest_end(const struct as_guest *g)
{
	/* (the saved ids stayed the gofer's own: going back is always allowed) */
	if (g->uid && setresuid(g->real ? g->own_uid : (uid_t)-1, g->own_uid, (uid_t)-1) < 0)
		cbox_die(1, "gofer: cannot take back its own uid: %s", strerror(errno));
	if (g->gid && setresgid(g->real ? g->own_gid : (gid_t)-1, g->own_gid, (gid_t)-1) < 0)
		cbox_die(1, "gofer: cannot take back its own gid: %s", strerror(errno));
}

/* The checks CONNECT and SENDTO share: fid's node is a socket bound in this session and the
 * path from the directory q->fid2 leads to it. On success the gofer's cwd is that directory
 * (the caller goes back with back_to_root) and sa names the node from there. */
static int peer_at(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int sockfd,
                   struct sockaddr_un *sa, socklen_t *alen)
{
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	if (n == NULL)
		return -EBADF;
	char path[CBOX_GOFER_SOCKPATH_MAX + 1];
	int rc = sock_path_at(cbox_gofer_server_lookup(s, q->fid2), q, sockfd, sa, alen, path);
	if (rc < 0)
		return rc;
	if (!S_ISSOCK(n->mode) || !cbox_gofer_bound_has(s, n->dev, n->ino))
		return -ECONNREFUSED;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return st.st_dev == n->dev && st.st_ino == n->ino ? 0 : -ECONNREFUSED;
}

/*
 * CONNECT: connect the guest's AF_UNIX socket to a socket node a guest of this session bound,
 * named by its name from its directory (connect(2) takes a path, and the gofer has no /proc to
 * name a node it holds). The sentry made Linux's checks on its view (the walk, write permission
 * for the guest's ids); here the host checks the gofer's identity, which owns what the guest
 * made. The sentry connected itself before, and as its host identity is nobody when cbox-run
 * runs as root, a socket the guest had made 0600 or 0700 (ssh-agent's umask, python's
 * forkserver) answered EACCES to its own owner.
 *
 * Security: the gofer connects only to the node the sentry's walk found (fid), and only when
 * that is a socket of this session (cbox_gofer_bound_has), never to a host service's socket
 * that was in the tree (docker.sock in the working folder): the path is resolved first and
 * compared with fid's node, and no other request runs before the connect resolves it again
 * (the gofer serves one request at a time; only the host could swap the name meanwhile). The
 * call is non-blocking, as the gofer must not wait: EAGAIN where Linux would wait for room in
 * the listener's backlog.
 */
int cbox_gofer_do_connect(struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int sockfd)
{
	struct sockaddr_un sa;
	socklen_t alen;
	int rc = peer_at(s, q, sockfd, &sa, &alen);
	int fl = rc == 0 ? fcntl(sockfd, F_GETFL) : 0;
	if (fl < 0)
		rc = -EBADF;
	if (rc == 0 && !(fl & O_NONBLOCK) && fcntl(sockfd, F_SETFL, fl | O_NONBLOCK) < 0)
		rc = -EBADF;
	if (rc == 0) {
		struct as_guest g;
		as_guest_begin(&g, sockfd, false);
		rc = connect(sockfd, (struct sockaddr *)&sa, alen) < 0 ? -errno : 0;
		as_guest_end(&g);
		if (!(fl & O_NONBLOCK) && fcntl(sockfd, F_SETFL, fl) < 0)
			cbox_error("gofer: cannot restore the flags of the guest's socket: %s",
			           strerror(errno));
	}
	back_to_root(s, "connect");
	return rc == -EINPROGRESS ? -EAGAIN : rc;
}

/*
 * The datagram of a SENDTO that came as a memfd (CBOX_GOFER_SENDTO_MEMFD), mapped read-only into
 * *data (NULL for an empty one) with its length in *len; unmap it with munmap(*data, *len). The
 * memfd must be a regular file of at most CBOX_GOFER_DGRAM_MAX bytes sealed against shrinking,
 * growing and writing, so that nothing can change or truncate the mapping while the gofer reads
 * it (a truncated mapping would kill the gofer with SIGBUS): else EINVAL, as for any malformed
 * request.
 */
static int map_dgram(int mfd, void **data, size_t *len)
{
	const int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	struct stat st;
	int seals = fcntl(mfd, F_GET_SEALS);
	if (seals < 0 || (seals & need) != need || fstat(mfd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 0 || (uint64_t)st.st_size > CBOX_GOFER_DGRAM_MAX)
		return -EINVAL;
	*len = (size_t)st.st_size;
	*data = NULL;
	if (*len == 0)
		return 0;
	void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, mfd, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	*data = p;
	return 0;
}

/* SENDTO: one datagram to a socket node this session bound, on CONNECT's terms (the sender's
 * credentials the guest's, see as_guest), from q's value or all of the memfd mfd
 * (CBOX_GOFER_SENDTO_MEMFD); r->fid gets the bytes sent. */
int cbox_gofer_do_sendto(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                         struct cbox_gofer_reply *r, int sockfd, int mfd)
{
	const void *data = q->value;
	size_t len = q->value_len;
	void *mapped = NULL;
	if (q->flags & CBOX_GOFER_SENDTO_MEMFD) {
		int mrc = map_dgram(mfd, &mapped, &len);
		if (mrc < 0)
			return mrc;
		data = mapped;
	}
	struct sockaddr_un sa;
	socklen_t alen;
	int rc = peer_at(s, q, sockfd, &sa, &alen);
	if (rc == 0) {
		struct as_guest g;
		as_guest_begin(&g, sockfd, true);
		ssize_t n =
		    sendto(sockfd, data, len,
		           (int)(q->flags & ~CBOX_GOFER_SENDTO_MEMFD) | MSG_DONTWAIT | MSG_NOSIGNAL,
		           (struct sockaddr *)&sa, alen);
		rc = n < 0 ? -errno : 0;
		as_guest_end(&g);
		r->fid = n < 0 ? 0 : (uint32_t)n;
	}
	back_to_root(s, "sendto");
	if (mapped)
		munmap(mapped, len);
	return rc;
}

/*
 * INOTIFY: watch the fid's file on the guest's inotify instance. inotify_add_watch takes a path;
 * the gofer names the file from its own directory fds (a directory as "." after fchdir into it,
 * anything else as its name in its parent), never following a symlink (IN_DONT_FOLLOW), and only
 * an inotify fd is accepted. A watch reports events; it grants no access to the file.
 */
int cbox_gofer_do_inotify(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                          struct cbox_gofer_reply *r, int ifd)
{
	struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	struct cbox_gofer_node *root = cbox_gofer_server_lookup(s, CBOX_GOFER_ROOT_FID);
	if (n == NULL)
		return -EBADF;
	uint32_t mask = q->flags | IN_DONT_FOLLOW;
	const char *name = ".";
	int dirfd = n->fd;
	if (!S_ISDIR(n->mode)) {
		if (n->parent == NULL)
			return -EINVAL;
		dirfd = n->parent->fd;
		name = n->name;
	}
	if (fchdir(dirfd) < 0)
		return -errno;
	int wd = inotify_add_watch(ifd, name, mask);
	int rc = wd < 0 ? -errno : 0;
	if (fchdir(root->fd) < 0)
		cbox_error("gofer: cannot return to the root after a watch: %s", strerror(errno));
	if (rc < 0)
		return rc == -EBADF ? -EINVAL : rc; /* an fd that is not an inotify instance */
	r->fid = (uint32_t)wd;
	return 0;
}

/*
 * Which names the guest may use. Only user.*: security.capability would be file capabilities
 * for whoever runs the file on the host later, security.* (SELinux, IMA) and trusted.* are
 * privileged on Linux (EPERM without CAP_SYS_ADMIN) and system.* holds ACLs the sentry does not
 * check. Reading them answers ENODATA (as trusted.* reads for an unprivileged caller); a name
 * without a known prefix is EOPNOTSUPP, as Linux answers.
 */
static int xattr_name_allowed(const char *name, bool write)
{
	static const char *const privileged[] = {"security.", "system.", "trusted."};
	if (strncmp(name, "user.", 5) == 0)
		return 0;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(privileged); i++)
		if (strncmp(name, privileged[i], strlen(privileged[i])) == 0)
			return write ? -EPERM : -ENODATA;
	return -EOPNOTSUPP;
}

/* What the *xattrat calls name for n: a directory as itself ("." from its own fd), anything
 * else as its name in its parent, not followed; the name must still hold n's inode. O_PATH fds
 * cannot be used directly (the xattr calls refuse them with EBADF). */
static int xattr_target(const struct cbox_gofer_node *n, int *dirfd, const char **path)
{
	struct stat st;
	if (S_ISDIR(n->mode)) {
		*dirfd = n->fd;
		*path = ".";
		return 0;
	}
	if (n->parent == NULL)
		return -EINVAL;
	if (fstatat(n->parent->fd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_dev != n->dev || st.st_ino != n->ino)
		return -ESTALE;
	*dirfd = n->parent->fd;
	*path = n->name;
	return 0;
}

/*
 * Without *xattrat (before 6.13) a symlink, a FIFO, a socket or a device node cannot be opened for
 * its xattrs without following or opening it. The names that get this far are user.* ones
 * (xattr_name_allowed), and for those Linux's answer does not depend on the node: only a regular
 * file or a directory has them (xattr_permission), so a write is EPERM, a read finds none
 * (ENODATA) and a list is empty - what the *xattrat calls give on a newer kernel.
 */
static int xattr_nonfile(const struct cbox_gofer_req *q)
{
	switch (q->type) {
	case CBOX_GOFER_GETXATTR:
		return -ENODATA;
	case CBOX_GOFER_LISTXATTR:
		return 0; /* (nothing to list) */
	default:
		return -EPERM;
	}
}

/* The fallback for kernels without *xattrat (before 6.13): a read-only fd of the file itself
 * (a regular file or a directory: xattr_nonfile answers for the others). */
static int xattr_fallback_fd(const struct cbox_gofer_node *n)
{
	int oflags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd =
	    S_ISDIR(n->mode) ? openat(n->fd, ".", oflags) : openat(n->parent->fd, n->name, oflags);
	return fd < 0 ? -errno : fd;
}

/* Keep only the user.* names of a NUL-separated list of len bytes; returns the new length. */
static size_t filter_list(char *list, size_t len)
{
	size_t out = 0;
	for (size_t i = 0; i < len;) {
		size_t n = strnlen(list + i, len - i);
		if (i + n == len)
			break; /* not NUL-terminated: drop the rest */
		if (xattr_name_allowed(list + i, false) == 0) {
			memmove(list + out, list + i, n + 1);
			out += n + 1;
		}
		i += n + 1;
	}
	return out;
}

static long xattr_call(const struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int dirfd,
                       const char *path, const char *name)
{
	struct xattr_args_v0 a = {0};
	int at = AT_SYMLINK_NOFOLLOW;
	switch (q->type) {
	case CBOX_GOFER_GETXATTR:
		a.value = (uintptr_t)s->xbuf;
		a.size = CBOX_GOFER_XVALUE_MAX;
		return syscall(__NR_getxattrat, dirfd, path, at, name, &a, sizeof(a));
	case CBOX_GOFER_SETXATTR:
		a.value = (uintptr_t)q->value;
		a.size = (uint32_t)q->value_len;
		a.flags = q->flags;
		return syscall(__NR_setxattrat, dirfd, path, at, name, &a, sizeof(a));
	case CBOX_GOFER_LISTXATTR:
		return syscall(__NR_listxattrat, dirfd, path, at, s->xbuf,
		               (size_t)CBOX_GOFER_XVALUE_MAX);
	default:
		return syscall(__NR_removexattrat, dirfd, path, at, name);
	}
}

static long xattr_call_fd(const struct cbox_gofer_server *s, const struct cbox_gofer_req *q, int fd,
                          const char *name)
{
	switch (q->type) {
	case CBOX_GOFER_GETXATTR:
		return fgetxattr(fd, name, s->xbuf, CBOX_GOFER_XVALUE_MAX);
	case CBOX_GOFER_SETXATTR:
		return fsetxattr(fd, name, q->value, q->value_len, (int)q->flags);
	case CBOX_GOFER_LISTXATTR:
		return flistxattr(fd, s->xbuf, CBOX_GOFER_XVALUE_MAX);
	default:
		return fremovexattr(fd, name);
	}
}

int cbox_gofer_do_xattr(struct cbox_gofer_server *s, const struct cbox_gofer_req *q,
                        struct cbox_gofer_reply *r)
{
	const struct cbox_gofer_node *n = cbox_gofer_server_lookup(s, q->fid);
	char name[CBOX_GOFER_XNAME_MAX + 1] = "";
	if (n == NULL)
		return -EBADF;
	if (q->type != CBOX_GOFER_LISTXATTR) {
		memcpy(name, q->name2, q->name2_len);
		name[q->name2_len] = '\0';
		/* Checked here as well as in the sentry: defence in depth. */
		bool write = q->type != CBOX_GOFER_GETXATTR;
		int rc = xattr_name_allowed(name, write);
		if (rc < 0)
			return rc;
	}
	int dirfd = -1;
	const char *path = NULL;
	long got;
	if (n->anon) {
		/* An unnamed file (TMPFILE): no name to give, but its fd is the open file. */
		got = xattr_call_fd(s, q, n->fd, name);
	} else {
		int rc = xattr_target(n, &dirfd, &path);
		if (rc < 0)
			return rc;
		got = xattr_call(s, q, dirfd, path, name);
	}
	if (got < 0 && errno == ENOSYS && !n->anon) {
		if (!S_ISREG(n->mode) && !S_ISDIR(n->mode)) {
			int rc = xattr_nonfile(q);
			if (rc < 0)
				return rc;
			got = 0; /* (an empty list) */
		} else {
			CBOX_AUTOCLOSE int fd = xattr_fallback_fd(n);
			if (fd < 0)
				return fd;
			got = xattr_call_fd(s, q, fd, name);
		}
	}
	if (got < 0)
		return -errno;
	if (q->type == CBOX_GOFER_GETXATTR || q->type == CBOX_GOFER_LISTXATTR) {
		size_t len = (size_t)got;
		if (q->type == CBOX_GOFER_LISTXATTR)
			len = filter_list(s->xbuf, len);
		r->value = s->xbuf;
		r->value_len = len;
	}
	return 0;
}
