/*
 * Starting the gofer: a child in its own mount namespace that sees only the rootfs (host
 * pseudo-filesystems detached, read-only when asked), pivoted into it, with every other fd
 * closed, no_new_privs and its own seccomp filter; then it serves until the socket closes.
 * Every step in the child that fails ends it with cbox_die: a half-confined gofer must not serve.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/crash.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "internal.h"

/* Where the rootfs is attached before the pivot, inside a private tmpfs. */
#define STAGE_DIR  "/tmp"
#define STAGE_ROOT "/tmp/root"

static void write_file(const char *path, const char *data)
{
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(data);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		cbox_die(1, "gofer: write %s: %s", path, strerror(errno));
}

/* A new mount namespace; when not root, a user namespace first that maps only the caller's own
 * uid and gid, so that the gofer gains mount rights over its copy and nothing else. */
static void enter_namespaces(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (uid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			cbox_die(1, "gofer: unshare(CLONE_NEWNS): %s", strerror(errno));
		return;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		cbox_die(1,
		         "gofer: unshare(CLONE_NEWUSER|CLONE_NEWNS): %s (are unprivileged user "
		         "namespaces enabled?)",
		         strerror(errno));
	char map[64];
	/* setgroups must be denied before an unprivileged gid_map write is accepted. */
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	write_file("/proc/self/gid_map", map);
}

/* Attach a recursive copy of the rootfs at STAGE_ROOT. */
static void stage_rootfs(const char *rootfs)
{
	/* Private first: nothing done below may propagate back to the host's mounts. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		cbox_die(1, "gofer: make / private: %s", strerror(errno));
	/* Cloned before the tmpfs hides STAGE_DIR, in case the rootfs lives under it. */
	CBOX_AUTOCLOSE int tree =
	    open_tree(AT_FDCWD, rootfs, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		cbox_die(1, "gofer: clone the mount tree of %s: %s", rootfs, strerror(errno));
	if (mount("cbox-gofer", STAGE_DIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "mode=0700,size=16k") < 0)
		cbox_die(1, "gofer: mount a tmpfs on %s: %s", STAGE_DIR, strerror(errno));
	if (mkdir(STAGE_ROOT, 0700) < 0)
		cbox_die(1, "gofer: mkdir %s: %s", STAGE_ROOT, strerror(errno));
	if (move_mount(tree, "", AT_FDCWD, STAGE_ROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		cbox_die(1, "gofer: attach %s at %s: %s", rootfs, STAGE_ROOT, strerror(errno));
}

/* Enter the staged root and drop the old one entirely. */
static void pivot(void)
{
	if (chdir(STAGE_ROOT) < 0)
		cbox_die(1, "gofer: chdir %s: %s", STAGE_ROOT, strerror(errno));
	/* pivot_root(".", "."): the old root ends up stacked on the new one and is then detached,
	 * so no path from the gofer leads back to the host's tree. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		cbox_die(1, "gofer: pivot_root: %s", strerror(errno));
	if (umount2(".", MNT_DETACH) < 0)
		cbox_die(1, "gofer: detach the old root: %s", strerror(errno));
	if (chdir("/") < 0)
		cbox_die(1, "gofer: chdir /: %s", strerror(errno));
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
			cbox_die(1, "gofer: close_range: %s", strerror(errno));
		lo = (unsigned)keep[i] + 1;
	}
	if (close_range(lo, ~0u, 0) < 0)
		cbox_die(1, "gofer: close_range: %s", strerror(errno));
}

static CBOX_NORETURN void child_main(const struct cbox_gofer_config *cfg, int sock, pid_t parent)
{
	cbox_log_set_who("gofer");
	/* Die with the sentry: a gofer outliving its sandbox would keep the rootfs open. */
	prctl(PR_SET_NAME, "cbox-gofer");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		cbox_die(1, "gofer: parent gone or PR_SET_PDEATHSIG failed");
	if (cbox_crash_install() < 0)
		cbox_warn("gofer: crash handler not installed");
	enter_namespaces();
	stage_rootfs(cfg->rootfs);
	cbox_gofer_mounts_restrict(STAGE_ROOT, cfg->readonly);
	pivot();
	int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		cbox_die(1, "gofer: open the new root: %s", strerror(errno));
	int log_fd = cbox_log_get_fd();
	int keep[] = {sock, root_fd, log_fd};
	close_all_except(keep, CBOX_ARRAY_SIZE(keep));
	/* The sentry applies the guest's umask; the gofer must not apply a second one. */
	umask(0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		cbox_die(1, "gofer: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	int rc = cbox_gofer_seccomp_install(sock, log_fd);
	if (rc < 0)
		cbox_die(1, "gofer: install the seccomp filter: %s", strerror(-rc));
	rc = cbox_gofer_serve(sock, root_fd, cfg->readonly);
	/* _exit: no atexit handlers, which could make calls the filter does not allow. */
	_exit(rc < 0 ? 1 : 0);
}

int cbox_gofer_spawn(const struct cbox_gofer_config *cfg, int *sock, pid_t *pid,
                     struct cbox_err **err)
{
	struct stat st;
	if (cfg == NULL || cfg->rootfs == NULL)
		return cbox_err_set(err, EINVAL, "gofer: no rootfs given");
	if (stat(cfg->rootfs, &st) < 0)
		return cbox_err_set(err, errno, "gofer: rootfs %s", cfg->rootfs);
	if (!S_ISDIR(st.st_mode))
		return cbox_err_set(err, ENOTDIR, "gofer: rootfs %s", cfg->rootfs);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cbox_err_set(err, errno, "gofer: socketpair");
	CBOX_AUTOCLOSE int mine = sv[0];
	CBOX_AUTOCLOSE int theirs = sv[1];
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0)
		return cbox_err_set(err, errno, "gofer: fork");
	if (child == 0) {
		close(cbox_steal_fd(&mine));
		child_main(cfg, cbox_steal_fd(&theirs), parent);
	}
	*sock = cbox_steal_fd(&mine);
	*pid = child;
	return 0;
}
