/*
 * Starting the gofer: a child in its own mount namespace that sees only the guest's tree (built
 * by tree.c), pivoted into it, with every other fd closed, no_new_privs and its own seccomp
 * filter; then it serves until the socket closes. Every step in the child that fails ends it
 * (cbox_gofer_setup_fail): a half-confined gofer must not serve. The child's first packet on the
 * socket says whether it got that far, so the parent can report a setup error itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/crash.h"
#include "cbox/fdlimit.h"
#include "cbox/fdpass.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "internal.h"

#define STAGE_ROOT CBOX_GOFER_STAGE_ROOT

/* The start-up packet: magic, then 0 (ready) or the errno of the failure, then the message. */
#define HELLO_MAGIC 0x47584243u /* "CBXG" */
#define HELLO_MAX   4096u
/* How long the parent waits for it: setup is a few hundred mount calls at most. */
#define HELLO_TIMEOUT_MS 30000

struct hello {
	uint32_t magic;
	int32_t errnum;
};

static int report_sock = -1;

void cbox_gofer_setup_report_to(int sock)
{
	report_sock = sock;
}

/* sendmsg, not send: the seccomp filter allows only sendmsg on the socket. */
static int send_hello(int sock, int errnum, const char *msg)
{
	struct hello h = {.magic = HELLO_MAGIC, .errnum = errnum};
	size_t len = msg ? strnlen(msg, HELLO_MAX - sizeof(h) - 1) : 0;
	struct iovec iov[2] = {{.iov_base = &h, .iov_len = sizeof(h)},
	                       {.iov_base = (void *)msg, .iov_len = len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

void cbox_gofer_setup_fail(int errnum, const char *fmt, ...)
{
	char msg[HELLO_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The parent prints it (with strerror); log it here only when it cannot be told. */
	if (report_sock < 0 || send_hello(report_sock, errnum > 0 ? errnum : 0, msg) < 0)
		cbox_error("%s%s%s", msg, errnum > 0 ? ": " : "",
		           errnum > 0 ? strerror(errnum) : "");
	_exit(1);
}

static void write_file(const char *path, const char *data)
{
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(data);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		cbox_gofer_setup_fail(errno, "gofer: write %s", path);
}

/* A new mount namespace; when not root, a user namespace first that maps only the caller's own
 * uid and gid, so that the gofer gains mount rights over its copy and nothing else. */
static void enter_namespaces(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (uid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			cbox_gofer_setup_fail(errno, "gofer: unshare(CLONE_NEWNS)");
		return;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		cbox_gofer_setup_fail(errno, "gofer: unshare(CLONE_NEWUSER|CLONE_NEWNS) (are "
		                             "unprivileged user namespaces enabled?)");
	char map[64];
	/* setgroups must be denied before an unprivileged gid_map write is accepted. */
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_file("/proc/self/gid_map", map);
}

/* Private first: nothing done while building the tree may propagate back to the host. */
static void make_private(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		cbox_gofer_setup_fail(errno, "gofer: make / private");
}

/* Enter the staged root and drop the old one entirely. */
static void pivot(void)
{
	if (chdir(STAGE_ROOT) < 0)
		cbox_gofer_setup_fail(errno, "gofer: chdir %s", STAGE_ROOT);
	/* pivot_root(".", "."): the old root ends up stacked on the new one and is then detached,
	 * so no path from the gofer leads back to the host's tree. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		cbox_gofer_setup_fail(errno, "gofer: pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		cbox_gofer_setup_fail(errno, "gofer: detach the old root");
	if (chdir("/") < 0)
		cbox_gofer_setup_fail(errno, "gofer: chdir /");
}

/*
 * The view VIEW serves (cbox_gofer_spawn_view): the parent's user namespace arrives on sock, and
 * root_fd's tree is copied (open_tree, recursively: every hide and cover comes along), made
 * read-only, nosuid and nodev throughout, and its root mount idmapped through that namespace.
 * A host id the namespace maps then owns, on that mount, the files of the host id its inside id
 * stands for (an idmapped mount reads the file's owner as an id inside the namespace): under
 * cbox-run run as root, files of host root show as the sandbox's root to the sentry, whose stat
 * shows every other host id as the overflow id, as the gofer's owners are shown to the guest
 * (sentry/fs_gofer_local.c). Made before the seccomp filter, which allows no mount calls:
 * the serving gofer can change no mount. Returns the view's fd, or -1 when the kernel or a file
 * system cannot make it (the sentry then asks the gofer for every name).
 */
static int make_view(int sock, int root_fd)
{
	char c;
	int ns = -1, n = 0;
	ssize_t len = cbox_recv_fds(sock, &c, 1, &ns, 1, &n, 0);
	if (len <= 0)
		_exit(0); /* the parent is gone */
	if (n != 1 || c != 'v') {
		if (n == 1)
			close(ns);
		cbox_gofer_setup_fail(EPROTO, "gofer: expected the sandbox's user namespace");
	}
	int tree = (int)syscall(SYS_open_tree, root_fd, "",
	                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	struct mount_attr ro = {.attr_set =
	                            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	struct mount_attr idmap = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)ns};
	if (tree < 0 ||
	    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) <
	        0 ||
	    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &idmap, sizeof(idmap)) < 0) {
		cbox_debug(
		    "gofer: no idmapped view of the tree (%s): the sentry asks for every name",
		    strerror(errno));
		if (tree >= 0)
			close(tree);
		tree = -1;
	}
	close(ns);
	return tree;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every fd but the ones in keep: the gofer must hold nothing of its parent's (a leaked fd
 * to a host directory would be a way out of the pivoted root). */
static void close_all_except(int *keep, size_t n)
{
	qsort(keep, n, sizeof(*keep), cmp_int);
	unsigned lo = 0;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0)
			continue;
		if ((unsigned)keep[i] > lo && close_range(lo, (unsigned)keep[i] - 1, 0) < 0)
			cbox_gofer_setup_fail(errno, "gofer: close_range");
		lo = (unsigned)keep[i] + 1;
	}
	if (close_range(lo, ~0u, 0) < 0)
		cbox_gofer_setup_fail(errno, "gofer: close_range");
}

/* The server refuses mutations itself only when no part of the tree is writable. */
static bool tree_readonly(const struct cbox_gofer_config *cfg)
{
	if (!cfg->readonly || cfg->overlay)
		return false;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (!cfg->mounts[i].readonly)
			return false;
	return true;
}

static CBOX_NORETURN void child_main(const struct cbox_gofer_config *cfg, int sock, pid_t parent)
{
	cbox_log_set_who("gofer");
	cbox_gofer_setup_report_to(sock);
	/* Die with the sentry: a gofer outliving its sandbox would keep the rootfs open. */
	prctl(PR_SET_NAME, "cbox-gofer");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		cbox_gofer_setup_fail(0, "gofer: parent gone or PR_SET_PDEATHSIG failed");
	int r = cfg->join_cgroup ? cfg->join_cgroup(cfg->cgroup_arg) : 0;
	if (r < 0)
		cbox_gofer_setup_fail(-r, "gofer: joining the sandbox's cgroup");
	if (cbox_crash_install() < 0)
		cbox_warn("gofer: crash handler not installed");
	/* The modes the tree is built with are exact, and the sentry applies the guest's umask:
	 * the gofer must not apply a second one. */
	umask(0);
	/* (an fd per node the sentry caches: see cbox/fdlimit.h) */
	long lim = cbox_fdlimit_raise();
	if (lim < 0)
		cbox_warn("gofer: raising the fd limit: %s", strerror((int)-lim));
	enter_namespaces();
	make_private();
	cbox_gofer_tree_build(cfg);
	pivot();
	int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		cbox_gofer_setup_fail(errno, "gofer: open the new root");
	int view_fd = cfg->view_userns ? make_view(sock, root_fd) : -1;
	int log_fd = cbox_log_get_fd();
	int keep[] = {sock, root_fd, log_fd, view_fd};
	close_all_except(keep, CBOX_ARRAY_SIZE(keep));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		cbox_gofer_setup_fail(errno, "gofer: PR_SET_NO_NEW_PRIVS");
	int rc = cbox_gofer_seccomp_install(sock, log_fd);
	if (rc < 0)
		cbox_gofer_setup_fail(-rc, "gofer: install the seccomp filter");
	cbox_gofer_setup_report_to(-1);
	if (send_hello(sock, 0, NULL) < 0)
		_exit(0); /* the parent is gone: nobody to serve */
	rc = cbox_gofer_serve_view(sock, root_fd, view_fd, tree_readonly(cfg));
	/* _exit: no atexit handlers, which could make calls the filter does not allow. */
	_exit(rc < 0 ? 1 : 0);
}

/* Reap a child that failed its setup (or is being given up on). */
static void reap(pid_t child, bool kill_it)
{
	if (kill_it)
		kill(child, SIGKILL);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Wait for the child's start-up packet. Returns 0 when it is ready, else a cbox_err with the
 * child's own errno and message (the child is reaped). */
static int wait_hello(int sock, pid_t child, struct cbox_err **err)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int n;
	do
		n = poll(&p, 1, HELLO_TIMEOUT_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		reap(child, true);
		return cbox_err_set(err, n == 0 ? ETIMEDOUT : errno,
		                    "gofer: no answer from the gofer process during its setup");
	}
	char buf[HELLO_MAX + 1];
	ssize_t len;
	do
		len = recv(sock, buf, HELLO_MAX, 0);
	while (len < 0 && errno == EINTR);
	struct hello h = {0};
	if (len >= (ssize_t)sizeof(h))
		memcpy(&h, buf, sizeof(h));
	if (len < (ssize_t)sizeof(h) || h.magic != HELLO_MAGIC || h.errnum < 0 || h.errnum > 4095) {
		reap(child, true);
		return cbox_err_set(err, ECHILD,
		                    "gofer: the gofer process ended during its setup "
		                    "(see its log above)");
	}
	if (h.errnum == 0 && len == (ssize_t)sizeof(h))
		return 0;
	buf[len] = '\0';
	reap(child, false);
	return cbox_err_set(err, h.errnum, "%s", buf + sizeof(h));
}

/*
 * A forked child waits on its parent's CPU until the parent blocks: on this 2-CPU VM the
 * scheduler did not hand it to the idle CPU (a fork's child first ran 1 ms later when the
 * parent kept busy, against 0.1 ms when it slept), and cbox-run, busy making the sentry's
 * namespaces, held the gofer back for all of that time instead of overlapping the two. Or the
 * other way round: a child placed on its parent's CPU may run first, and then kept cbox-run off
 * it until the gofer first blocked (1.3 ms, in about one start in three, seen with the sched
 * trace events; the other CPU idle meanwhile). So the set of the parent's other CPUs is taken
 * before the fork, and each side moves the gofer there as soon as it runs: the child first
 * thing, the parent right after the fork. The parent gives it back all of them once it has
 * said hello (cbox_gofer_spawn_finish), after both moves. Nothing depends on it: with one CPU,
 * or if a call fails, the child simply runs where the scheduler puts it.
 */
static bool other_cpus(cpu_set_t *set)
{
	int here = sched_getcpu();
	if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof(*set), set) < 0 ||
	    !CPU_ISSET(here, set))
		return false;
	CPU_CLR(here, set);
	return CPU_COUNT(set) > 0;
}

int cbox_gofer_spawn_start(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                           struct cbox_err **err)
{
	if (cbox_gofer_config_check(cfg, err) < 0)
		return cbox_err_code(*err);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cbox_err_set(err, errno, "gofer: socketpair");
	CBOX_AUTOCLOSE int mine = sv[0];
	CBOX_AUTOCLOSE int theirs = sv[1];
	cpu_set_t elsewhere;
	bool move = other_cpus(&elsewhere);
	pid_t parent = getpid();
	pid_t child = cfg->fork_in ? cfg->fork_in(cfg->cgroup_arg) : fork();
	if (child < 0)
		return cbox_err_set(err, errno, "gofer: fork");
	if (child == 0) {
		if (move)
			sched_setaffinity(0, sizeof(elsewhere), &elsewhere);
		close(cbox_steal_fd(&mine));
		child_main(cfg, cbox_steal_fd(&theirs), parent);
	}
	*sock = cbox_steal_fd(&mine);
	*pid = child;
	if (move)
		sched_setaffinity(child, sizeof(elsewhere), &elsewhere);
	return 0;
}

int cbox_gofer_spawn_finish(int *sock, pid_t pid, struct cbox_err **err)
{
	int rc = wait_hello(*sock, pid, err);
	/* (the child's own CPUs back, see to_another_cpu; whatever the outcome) */
	cpu_set_t all;
	if (sched_getaffinity(0, sizeof(all), &all) == 0)
		sched_setaffinity(pid, sizeof(all), &all);
	if (rc < 0) {
		close(*sock);
		*sock = -1;
		return cbox_err_code(*err);
	}
	return 0;
}

int cbox_gofer_spawn_view(int sock, int userns_fd)
{
	return cbox_send_fds(sock, "v", 1, &userns_fd, 1);
}

int cbox_gofer_spawn(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                     struct cbox_err **err)
{
	if (cfg->view_userns)
		return cbox_err_set(err, EINVAL, "gofer: a view needs spawn_start and spawn_view");
	int r = cbox_gofer_spawn_start(cfg, sock, pid, err);
	return r < 0 ? r : cbox_gofer_spawn_finish(sock, *pid, err);
}
