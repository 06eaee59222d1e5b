/*
 * The socket calls that take an address: socket, bind, connect, sendto, sendmsg and sendmmsg.
 *
 * Sockets are host objects in the sandbox's own network namespace. An AF_UNIX *path* is the one
 * address that names a file, and the guest's real mount namespace is empty: a path the host
 * kernel resolved for the guest would find nothing. So pathname addresses are served here, on the
 * guest's tree: the sentry walks the guest's path and makes Linux's checks on its view, and the
 * gofer (the only process that touches a file of the tree) binds, connects or sends on a dup of
 * the guest's socket. Abstract names, autobind and inet addresses stay with the host kernel
 * (they name no file).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

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

/* An AF_UNIX path as the guest gave it: up to 108 bytes, NUL-terminated here. */
struct upath {
	char s[CBOX_GOFER_SOCKPATH_MAX + 1];
	size_t len;
};

/*
 * Read the guest's address. Returns 1 and fills p when it is an AF_UNIX pathname address; 0 for
 * anything the host may answer itself (another family, an abstract name, autobind, a bad length,
 * unreadable memory). Letting those through is safe even though the guest can change its memory
 * after this look: whatever the host kernel then reads, a path it resolves for the guest lands in
 * the guest's empty mount namespace, where there is nothing to reach.
 */
static int read_unix_path(struct cbox_sysctx *c, uint64_t uaddr, uint64_t alen, struct upath *p)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);
	struct sockaddr_un sa;
	if (uaddr == 0 || alen <= off || alen > sizeof(sa))
		return 0;
	memset(&sa, 0, sizeof(sa));
	if (cbox_sys_read(c, uaddr, &sa, (size_t)alen) < 0)
		return 0;
	if (sa.sun_family != AF_UNIX || sa.sun_path[0] == '\0')
		return 0;
	/* Linux uses the bytes up to the first NUL or the end of the address: so does the gofer. */
	p->len = strnlen(sa.sun_path, (size_t)alen - off);
	memcpy(p->s, sa.sun_path, p->len);
	p->s[p->len] = '\0';
	return 1;
}

/* A dup of the guest's fd when it is an AF_UNIX socket (*type gets its type); -EAFNOSUPPORT for
 * a socket of another family (the host answers those), -ENOTSOCK, -EBADF. */
static int unix_socket(struct cbox_sysctx *c, int fd, int *type)
{
	CBOX_AUTOCLOSE int dup = cbox_fd_get(c->s, c->task, fd);
	if (dup < 0)
		return dup == -EBADF ? -EBADF : dup;
	struct stat st;
	if (fstat(dup, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	int domain = 0;
	socklen_t len = sizeof(domain);
	if (getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		return -ENOTSOCK;
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	len = sizeof(*type);
	if (getsockopt(dup, SOL_SOCKET, SO_TYPE, type, &len) < 0)
		return -ENOTSOCK;
	return cbox_steal_fd(&dup);
}

static bool on_gofer(const struct cbox_dentry *d)
{
	return strcmp(d->mnt->ops->name, "gofer") == 0;
}

/* What Linux answers for making a socket node in one of the sentry's own file systems: /proc's
 * directories are not writable (EACCES), /dev is read-only here. */
static int not_gofer_answer(const struct cbox_dentry *d)
{
	return strcmp(d->mnt->ops->name, "proc") == 0 ? -EACCES : -EROFS;
}

/*
 * Linux's checks for making the socket node at path (filename_create, may_create), on the
 * sentry's view of the tree: the parent exists and is a searchable directory, the name is free
 * (EADDRINUSE, symlinks included: bind never follows the last component), the mount is
 * writable, the directory is writable. *cwd_fid gets the fid the gofer resolves a relative path
 * from. On success *dir is the parent (a reference) and last its name.
 */
static int bind_check(struct cbox_sysctx *c, const char *path, uint32_t *cwd_fid,
                      struct cbox_dentry **dir, char *last)
{
	struct cbox_dentry *d, *cwd = c->task->fs->cwd;
	int r = cbox_vfs_walk(c->s, c->task, AT_FDCWD, path, CBOX_WALK_PARENT, dir, last);
	if (r < 0)
		return r;
	if (last[0] == '\0' || !strcmp(last, ".") || !strcmp(last, ".."))
		r = -EADDRINUSE;
	else if ((r = cbox_vfs_walk(c->s, c->task, AT_FDCWD, path, 0, &d, NULL)) == 0) {
		cbox_dentry_put(c->s, d);
		r = -EADDRINUSE;
	} else if (r == -ENOENT)
		r = 0;
	if (r == 0 && !on_gofer(*dir))
		r = not_gofer_answer(*dir);
	/* The gofer resolves a relative path from the task's cwd; one in the sentry's own file
	 * systems cannot be named there. */
	if (r == 0 && path[0] != '/' && !on_gofer(cwd))
		r = not_gofer_answer(cwd);
	if (r == 0)
		r = cbox_vfs_writable(c->s, *dir);
	if (r == 0)
		r = cbox_vfs_may(c->task, *dir, W_OK | X_OK);
	*cwd_fid = CBOX_GOFER_ROOT_FID;
	if (r == 0 && path[0] != '/')
		r = cbox_dentry_fid(c->s, cwd, cwd_fid);
	if (r < 0)
		cbox_dentry_put(c->s, *dir);
	return r;
}

/*
 * bind(fd, {AF_UNIX, path}): the gofer binds the guest's socket to the guest's exact path, from
 * the guest's cwd, inside its own mount namespace, which is the guest's tree and nothing else: no
 * name the guest writes ("..", an absolute path, a symlink to "/../..") can reach beyond it.
 * Because the path is the guest's own string, getsockname/getpeername/accept/recvfrom report
 * exactly what Linux would, and stay on the fast path.
 */
int64_t sys_bind(struct cbox_sysctx *c)
{
	struct upath p;
	int type;
	if (read_unix_path(c, ARG(1), ARG(2), &p) <= 0)
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOCLOSE int sock = unix_socket(c, IARG(0), &type);
	if (sock == -EAFNOSUPPORT)
		return CBOX_SYSRET_CONTINUE;
	if (sock < 0)
		return sock;
	struct cbox_dentry *dir;
	char last[NAME_MAX + 1];
	uint32_t cwd_fid;
	int r = bind_check(c, p.s, &cwd_fid, &dir, last);
	if (r < 0)
		return r;
	uint32_t uid, gid;
	cbox_vfs_new_owner(c->s, c->task, dir, &uid, &gid);
	r = cbox_gofer_bind(cbox_sentry_gofer(c->s), cwd_fid, p.s, p.len, sock,
	                    0777 & ~c->task->fs->umask, uid, gid);
	if (r == 0) {
		cbox_vfs_forget(c->s, dir, last);
		cbox_vfs_note_new_owner(c->s, c->task, dir, last, NULL);
	} else if (r == -EEXIST)
		r = -EADDRINUSE;
	cbox_dentry_put(c->s, dir);
	return r;
}

/*
 * The peer named by path (a reference in *out), or -errno as Linux's unix_find_bsd answers: the
 * walk's errors, ECONNREFUSED for anything but a socket of the guest's tree, EACCES without
 * write permission for the guest's ids.
 */
static int find_peer(struct cbox_sysctx *c, const char *path, struct cbox_dentry **out)
{
	struct cbox_dentry *d;
	int r = cbox_vfs_walk(c->s, c->task, AT_FDCWD, path, CBOX_WALK_FOLLOW, &d, NULL);
	if (r < 0)
		return r;
	if (!S_ISSOCK(d->mode) || !on_gofer(d) || !d->parent || !on_gofer(d->parent) ||
	    strlen(d->name) > CBOX_GOFER_SOCKPATH_MAX)
		r = -ECONNREFUSED;
	else
		r = cbox_vfs_may(c->task, d, W_OK);
	if (r < 0) {
		cbox_dentry_put(c->s, d);
		return r;
	}
	*out = d;
	return 0;
}

/* The fids the gofer names the socket node d by: its own and its directory's (the gofer reaches
 * it from there, by its name). */
static int peer_fids(struct cbox_sentry *s, struct cbox_dentry *d, uint32_t *fid, uint32_t *dfid)
{
	int r = cbox_dentry_fid(s, d, fid);
	return r == 0 ? cbox_dentry_fid(s, d->parent, dfid) : r;
}

/* The gofer's connect of sock to the socket node d. */
static int gofer_connect(struct cbox_sentry *s, struct cbox_dentry *d, int sock)
{
	uint32_t fid, dfid;
	int r = peer_fids(s, d, &fid, &dfid);
	return r < 0 ? r
	             : cbox_gofer_connect(cbox_sentry_gofer(s), fid, dfid, d->name, strlen(d->name),
	                                  sock);
}

/* The gofer's sendto of len bytes of buf on sock to the socket node d: bytes sent or -errno. */
static ssize_t gofer_sendto(struct cbox_sentry *s, struct cbox_dentry *d, int sock, const void *buf,
                            size_t len, int flags)
{
	uint32_t fid, dfid;
	int r = peer_fids(s, d, &fid, &dfid);
	return r < 0 ? r
	             : cbox_gofer_sendto(cbox_sentry_gofer(s), fid, dfid, d->name, strlen(d->name),
	                                 sock, buf, len, flags);
}

/* A blocking connect or sendto waiting for room at its peer (wait_for_room). */
struct room_wait {
	struct cbox_sentry *s;
	struct cbox_dentry *peer;
	int sock;             /* the sentry's dup of the guest's socket */
	uint64_t deadline_ns; /* SO_SNDTIMEO's end, 0 for none */
	bool send;            /* sendto: the datagram, else connect */
	int flags;
	size_t len;
	unsigned char buf[];
};

static int64_t room_step(struct cbox_sysctx *c, void *arg)
{
	struct room_wait *w = arg;
	ssize_t r = w->send ? gofer_sendto(c->s, w->peer, w->sock, w->buf, w->len, w->flags)
	                    : gofer_connect(c->s, w->peer, w->sock);
	if (r != -EAGAIN)
		return r;
	return w->deadline_ns && cbox_vfs_now_ns() >= w->deadline_ns ? -EAGAIN : CBOX_SYSRET_DEFER;
}

static void room_drop(void *arg)
{
	struct room_wait *w = arg;
	cbox_dentry_put(w->s, w->peer);
	close(w->sock);
	free(w);
}

/* How often a waiting connect or sendto asks the gofer again. */
#define ROOM_RETRY_MS 5

/*
 * After the gofer's EAGAIN for a connect (a full listen backlog) or a datagram (a full receive
 * queue) on the guest's socket *sock: a blocking socket, and a sendto without MSG_DONTWAIT, wait
 * on Linux for room at the peer, up to the socket's SO_SNDTIMEO (then EAGAIN), and a signal ends
 * the wait as Linux's would. The gofer does not wait, so the sentry keeps the call (defer.c) and
 * asks again every ROOM_RETRY_MS: a server that accepts late, or a burst of clients on a short
 * backlog, connects as on Linux instead of failing. Takes the peer reference and *sock (left -1)
 * when it waits; returns the call's answer.
 */
static int64_t wait_for_room(struct cbox_sysctx *c, struct cbox_dentry *peer, int *sock, bool send,
                             const void *buf, size_t len, int flags)
{
	int fl = fcntl(*sock, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK)) {
		cbox_dentry_put(c->s, peer);
		return -EAGAIN;
	}
	struct timeval tv = {0, 0};
	socklen_t tl = sizeof(tv);
	if (getsockopt(*sock, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl) < 0)
		tv = (struct timeval){0, 0};
	struct room_wait *w = malloc(sizeof(*w) + (send ? len : 0));
	if (!w) {
		cbox_dentry_put(c->s, peer);
		return -ENOMEM;
	}
	*w = (struct room_wait){
	    .s = c->s, .peer = peer, .sock = *sock, .send = send, .flags = flags, .len = len};
	if (send && len)
		memcpy(w->buf, buf, len);
	*sock = -1;
	if (tv.tv_sec || tv.tv_usec)
		w->deadline_ns = cbox_vfs_now_ns() + (uint64_t)tv.tv_sec * 1000000000ULL +
		                 (uint64_t)tv.tv_usec * 1000ULL;
	return cbox_sys_defer(c, -1, 0, ROOM_RETRY_MS, room_step, room_drop, w);
}

/*
 * connect(fd, {AF_UNIX, path}): the sentry finds the peer and checks the guest's permission, the
 * gofer connects a dup of the guest's socket to it (from its directory, by its name): the host
 * then checks the gofer's identity, which owns what the guest made, not the sentry's (nobody
 * under cbox-run as root, which a socket the guest made 0600 refused). A full listen backlog:
 * wait_for_room.
 */
int64_t sys_connect(struct cbox_sysctx *c)
{
	struct upath p;
	int type;
	if (read_unix_path(c, ARG(1), ARG(2), &p) <= 0)
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOCLOSE int sock = unix_socket(c, IARG(0), &type);
	if (sock == -EAFNOSUPPORT)
		return CBOX_SYSRET_CONTINUE;
	if (sock < 0)
		return sock;
	struct cbox_dentry *d;
	int r = find_peer(c, p.s, &d);
	if (r < 0)
		return r;
	r = gofer_connect(c->s, d, sock);
	if (r == -EAGAIN && type != SOCK_DGRAM)
		return wait_for_room(c, d, &sock, false, NULL, 0, 0);
	cbox_dentry_put(c->s, d);
	return r;
}

/*
 * sendto(fd, buf, len, flags, {AF_UNIX, path}, alen): the guest filter lets sendto without an
 * address through on the fast path; one with an address comes here. Only a datagram socket
 * resolves the address (a stream socket refuses any address, a seqpacket socket ignores it,
 * before any lookup): those go to the host. The sentry finds the peer and checks the guest's
 * permission; the gofer sends the datagram (see sys_connect for why), without waiting: a full
 * receive queue is wait_for_room's. A datagram of more than 64 KiB goes to the gofer in a sealed
 * memfd (cbox_gofer_sendto), and the host then gives EMSGSIZE past the socket's send buffer as
 * Linux does (~208 KiB by default); the sentry copies at most CBOX_GOFER_DGRAM_MAX (4 MiB), and
 * refuses more with EMSGSIZE itself, which Linux would too unless net.core.wmem_max allowed a send
 * buffer that large.
 */
/* The flags a datagram to a path passes on to the gofer: those Linux ignores on a datagram
 * (MSG_DONTWAIT and MSG_NOSIGNAL are always added there) taken off, the rest refused as a
 * datagram socket refuses them. */
static int dgram_flags(int uflags)
{
	int flags = uflags & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE);
	if (flags & ~(MSG_EOR | MSG_CONFIRM))
		return flags & MSG_OOB ? -EOPNOTSUPP : -EINVAL;
	return flags;
}

/* len bytes of buf to the socket node at path from the guest's datagram socket *sock: the bytes
 * sent or -errno; a full receive queue is waited for (wait_for_room) when may_wait and the
 * socket and uflags allow it, which takes *sock. */
static int64_t dgram_to_path(struct cbox_sysctx *c, int *sock, const char *path, const void *buf,
                             size_t len, int uflags, bool may_wait)
{
	int flags = dgram_flags(uflags);
	if (flags < 0)
		return flags;
	struct cbox_dentry *d;
	int r = find_peer(c, path, &d);
	if (r < 0)
		return r;
	ssize_t n = gofer_sendto(c->s, d, *sock, buf, len, flags);
	if (n == -EAGAIN && may_wait && !(uflags & MSG_DONTWAIT))
		return wait_for_room(c, d, sock, true, buf, len, flags);
	cbox_dentry_put(c->s, d);
	return n;
}

/* A dup of the guest's fd in *sock when it is an AF_UNIX datagram socket, the one kind a path
 * address is resolved for (0); CBOX_SYSRET_CONTINUE for any other socket, whose address the host
 * answers for (a stream socket refuses one, a seqpacket socket ignores it); or -errno. */
static int64_t unix_dgram(struct cbox_sysctx *c, int fd, int *sock)
{
	int type;
	int dup = unix_socket(c, fd, &type);
	if (dup == -EAFNOSUPPORT)
		return CBOX_SYSRET_CONTINUE;
	if (dup < 0)
		return dup;
	if (type != SOCK_DGRAM) {
		close(dup);
		return CBOX_SYSRET_CONTINUE;
	}
	*sock = dup;
	return 0;
}

int64_t sys_sendto(struct cbox_sysctx *c)
{
	struct upath p;
	if (ARG(4) == 0 || read_unix_path(c, ARG(4), ARG(5), &p) <= 0)
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOCLOSE int sock = -1;
	int64_t r = unix_dgram(c, IARG(0), &sock);
	if (r != 0)
		return r;
	size_t len = (size_t)ARG(2);
	if (len > CBOX_GOFER_DGRAM_MAX)
		return -EMSGSIZE;
	int flags = dgram_flags(IARG(3));
	if (flags < 0)
		return flags;
	CBOX_AUTOFREE void *buf = malloc(len ? len : 1);
	if (buf == NULL)
		return -ENOMEM;
	if (len > 0 && cbox_sys_read(c, ARG(1), buf, len) < 0)
		return -EFAULT;
	return dgram_to_path(c, &sock, p.s, buf, len, IARG(3), true);
}

/* Linux's limits on a message's parts: UIO_MAXIOV iovecs, and control data of at most the
 * default net.core.optmem_max (ENOBUFS past it). */
#define MSG_IOV_MAX   1024
#define MSG_CTL_MAX   20480
#define MMSG_VLEN_MAX 1024

/*
 * The control data of a message to a path, checked as Linux's scm_send checks it: each header
 * whole (EINVAL), SOL_SOCKET's SCM_CREDENTIALS the sender's own ids and pid unless it holds
 * CAP_SETUID, CAP_SETGID and CAP_SYS_ADMIN (EPERM; an id its namespace does not map: EINVAL),
 * any other SOL_SOCKET type EINVAL, other levels ignored. The gofer sends the datagram with the
 * guest's ids and pid 0 whatever the credentials said (as for sendto). SCM_RIGHTS is not
 * carried to the gofer: EOPNOTSUPP, marked in the syscall table.
 */
static int check_control(struct cbox_sysctx *c, const void *ctl, size_t len)
{
	struct msghdr m = {.msg_control = (void *)ctl, .msg_controllen = len};
	const struct cbox_cred *cr = c->task->cred;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		size_t room = len - (size_t)((const char *)h - (const char *)ctl);
		if (h->cmsg_len < sizeof(*h) || h->cmsg_len > room)
			return -EINVAL;
		if (h->cmsg_level != SOL_SOCKET)
			continue;
		if (h->cmsg_type == SCM_RIGHTS)
			return -EOPNOTSUPP;
		if (h->cmsg_type != SCM_CREDENTIALS ||
		    h->cmsg_len != CMSG_LEN(sizeof(struct ucred)))
			return -EINVAL;
		struct ucred u;
		memcpy(&u, CMSG_DATA(h), sizeof(u));
		if (!cr || !cbox_cred_id_valid(cr, u.uid) || !cbox_cred_id_valid(cr, u.gid))
			return -EINVAL;
		bool pid_ok =
		    u.pid == cbox_task_vpid(c->s, c->task) || cbox_cred_capable(cr, CAP_SYS_ADMIN);
		bool uid_ok = u.uid == cr->uid || u.uid == cr->euid || u.uid == cr->suid ||
		              cbox_cred_capable(cr, CAP_SETUID);
		bool gid_ok = u.gid == cr->gid || u.gid == cr->egid || u.gid == cr->sgid ||
		              cbox_cred_capable(cr, CAP_SETGID);
		if (!pid_ok || !uid_ok || !gid_ok)
			return -EPERM;
	}
	return 0;
}

/* A message's data gathered from its iovecs into *out (malloc'd; *len its size), or -errno as
 * Linux's import of them answers. */
static int gather(struct cbox_sysctx *c, const struct msghdr *m, void **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (m->msg_iovlen > MSG_IOV_MAX)
		return -EMSGSIZE;
	size_t n = m->msg_iovlen;
	CBOX_AUTOFREE struct iovec *iov = calloc(n ? n : 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	if (n && cbox_sys_read(c, (uint64_t)(uintptr_t)m->msg_iov, iov, n * sizeof(*iov)) < 0)
		return -EFAULT;
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if ((ssize_t)iov[i].iov_len < 0)
			return -EINVAL;
		total += iov[i].iov_len;
		if (total > CBOX_GOFER_DGRAM_MAX)
			return -EMSGSIZE;
	}
	char *buf = malloc(total ? total : 1);
	if (!buf)
		return -ENOMEM;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (iov[i].iov_len && cbox_sys_read(c, (uint64_t)(uintptr_t)iov[i].iov_base,
		                                    buf + at, iov[i].iov_len) < 0) {
			free(buf);
			return -EFAULT;
		}
		at += iov[i].iov_len;
	}
	*out = buf;
	*len = total;
	return 0;
}

/* Whether message m names an AF_UNIX path (p gets it). */
static bool names_path(struct cbox_sysctx *c, const struct msghdr *m, struct upath *p)
{
	return m->msg_name && m->msg_namelen > 0 &&
	       read_unix_path(c, (uint64_t)(uintptr_t)m->msg_name, m->msg_namelen, p) > 0;
}

/* Message m to the path p from the guest's datagram socket *sock (see sys_sendmsg). */
static int64_t msg_to_path(struct cbox_sysctx *c, int *sock, const struct msghdr *m,
                           const struct upath *p, int uflags, bool may_wait)
{
	CBOX_AUTOFREE void *data = NULL;
	size_t len;
	int r = gather(c, m, &data, &len);
	if (r < 0)
		return r;
	if (m->msg_controllen > MSG_CTL_MAX)
		return -ENOBUFS;
	if (m->msg_controllen) {
		CBOX_AUTOFREE void *ctl = malloc(m->msg_controllen);
		if (!ctl)
			return -ENOMEM;
		if (cbox_sys_read(c, (uint64_t)(uintptr_t)m->msg_control, ctl, m->msg_controllen) <
		    0)
			return -EFAULT;
		if ((r = check_control(c, ctl, m->msg_controllen)) < 0)
			return r;
	}
	return dgram_to_path(c, sock, p->s, data, len, uflags, may_wait);
}

/*
 * sendmsg(fd, msg, flags) with an AF_UNIX path in msg_name, from a datagram socket: as sendto
 * (the peer found on the guest's tree, the datagram sent by the gofer, a full receive queue
 * waited for), its iovecs gathered first. The filter cannot look into the msghdr, so every
 * sendmsg comes here (a trap: a 64-byte sendmsg and its recv 21-23 us against 4.7 us natively,
 * bench/'s sendmsg row, where it was on the fast path); anything else (no name,
 * another family, an abstract name, a stream or seqpacket socket, a pointer the sentry cannot
 * read) goes on to the host, which answers as Linux: a path it resolved for the guest would land
 * in the guest's empty mount namespace, so the guest gains nothing by changing its memory after
 * this look.
 */
int64_t sys_sendmsg(struct cbox_sysctx *c)
{
	struct msghdr m;
	struct upath p;
	if (cbox_sys_read(c, ARG(1), &m, sizeof(m)) < 0 || !names_path(c, &m, &p))
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOCLOSE int sock = -1;
	int64_t r = unix_dgram(c, IARG(0), &sock);
	return r != 0 ? r : msg_to_path(c, &sock, &m, &p, IARG(2), true);
}

/* A message of a sendmmsg batch that names no path, sent by the sentry on its dup sock of the
 * guest's socket, without waiting: the bytes sent or -errno. Control data is refused
 * (EOPNOTSUPP): its credentials would be the sentry's, its fds the sentry's numbers. */
static int64_t send_here(struct cbox_sysctx *c, int sock, const struct msghdr *m, int uflags)
{
	if (m->msg_controllen)
		return -EOPNOTSUPP;
	struct sockaddr_storage name;
	socklen_t nlen = m->msg_namelen > sizeof(name) ? sizeof(name) : m->msg_namelen;
	if (nlen && cbox_sys_read(c, (uint64_t)(uintptr_t)m->msg_name, &name, nlen) < 0)
		return -EFAULT;
	CBOX_AUTOFREE void *data = NULL;
	size_t len;
	int r = gather(c, m, &data, &len);
	if (r < 0)
		return r;
	struct iovec iov = {data, len};
	struct msghdr hm = {
	    .msg_name = nlen ? &name : NULL, .msg_namelen = nlen, .msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n = sendmsg(sock, &hm, uflags | MSG_DONTWAIT | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/*
 * sendmmsg(fd, msgvec, vlen, flags): when one of the messages names an AF_UNIX path from a
 * datagram socket, the sentry sends them all, in order: those with a path as sendmsg does, the
 * others itself on its dup of the socket (the same socket, so the same source address; their
 * SCM_CREDENTIALS, if any, are the sentry's ids: control data there stops the batch). It writes
 * each msg_len and answers the number sent, or the first error when none was, as Linux does; a
 * full receive queue ends the batch (EAGAIN for its first message) instead of waiting. With no
 * path anywhere the host sends them.
 */
int64_t sys_sendmmsg(struct cbox_sysctx *c)
{
	unsigned vlen = (unsigned)ARG(2);
	if (vlen > MMSG_VLEN_MAX)
		vlen = MMSG_VLEN_MAX;
	if (vlen == 0)
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOFREE struct mmsghdr *v = calloc(vlen, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (cbox_sys_read(c, ARG(1), v, vlen * sizeof(*v)) < 0)
		return CBOX_SYSRET_CONTINUE;
	struct upath p;
	bool any = false;
	for (unsigned i = 0; i < vlen && !any; i++)
		any = names_path(c, &v[i].msg_hdr, &p);
	if (!any)
		return CBOX_SYSRET_CONTINUE;
	CBOX_AUTOCLOSE int sock = -1;
	int64_t r = unix_dgram(c, IARG(0), &sock);
	if (r != 0)
		return r;
	int uflags = IARG(3);
	unsigned sent = 0;
	for (; sent < vlen; sent++) {
		const struct msghdr *m = &v[sent].msg_hdr;
		if (names_path(c, m, &p)) {
			r = msg_to_path(c, &sock, m, &p, uflags, false);
		} else {
			r = send_here(c, sock, m, uflags);
		}
		if (r < 0)
			break;
		uint32_t done = (uint32_t)r;
		if (cbox_sys_write(
		        c, ARG(1) + (uint64_t)sent * sizeof(*v) + offsetof(struct mmsghdr, msg_len),
		        &done, sizeof(done)) < 0) {
			r = -EFAULT;
			break;
		}
	}
	return sent ? (int64_t)sent : r;
}
