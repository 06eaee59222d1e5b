/*
 * The sentry process: sets up the sandbox from inside its namespaces, starts the guest's first
 * task, and serves until that task exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cbox/fdlimit.h"
#include "cbox/loader_abi.h"
#include "cbox/log.h"
#include "cbox/netif.h"
#include "cbox/sanitizer.h"
#include "internal.h"

static const char *const dev_names[CBOX_DEV_COUNT] = {"/dev/null", "/dev/zero", "/dev/full",
                                                      "/dev/random", "/dev/urandom"};

struct cbox_gofer_client *cbox_sentry_gofer(struct cbox_sentry *s)
{
	return s->gofer;
}

const struct cbox_sentry_config *cbox_sentry_config(struct cbox_sentry *s)
{
	return s->cfg;
}

size_t cbox_sentry_ntasks(struct cbox_sentry *s)
{
	return s->ntasks;
}

const char *cbox_sentry_hostname(struct cbox_sentry *s)
{
	return s->hostname;
}

void cbox_sentry_set_hostname(struct cbox_sentry *s, const char *name, size_t len)
{
	if (len >= sizeof(s->hostname))
		len = sizeof(s->hostname) - 1;
	memcpy(s->hostname, name, len);
	s->hostname[len] = '\0';
}

struct cbox_platform *cbox_sentry_platform(struct cbox_sentry *s)
{
	return s->platform;
}

const char *cbox_sentry_loader_path(struct cbox_sentry *s)
{
	return s->loader_path;
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return close(fd) < 0 ? -errno : 0;
}

/*
 * The sentry's own mount namespace: a private tmpfs becomes its root, holding a procfs of the
 * sandbox's pid namespace (the sentry reads its tasks' state there) and guest/, the directory
 * that becomes the guest's root: empty but for the loader, which is the one file the host
 * kernel ever opens by path for the guest (see exec.c).
 *
 * In two steps: guest/ and the loader first, which is all the guest's first task needs of it
 * (guest_init.c, enter_empty_root); it is cloned then, and the rest (setup_mounts) overlaps its
 * own set-up. The mounts are private before the clone, so none made after it reaches the
 * task's copy of the namespace, which it leaves for guest/ anyway.
 */
static int setup_guest_dir(struct cbox_sentry *s)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	const char *opts = "mode=0755,size=16m";
	if (mount("cbox", CBOX_SENTRY_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return -errno;
	if (mkdir(CBOX_SENTRY_ROOT "/proc", 0555) < 0 || mkdir(CBOX_SENTRY_ROOT "/guest", 0755) < 0)
		return -errno;
	int r = write_file(CBOX_SENTRY_ROOT "/guest/cbox-loader", cbox_loader_image,
	                   cbox_loader_image_size, 0555);
	if (r < 0)
		return r;
	struct stat st;
	if (stat(CBOX_SENTRY_ROOT "/guest/cbox-loader", &st) < 0)
		return -errno;
	s->loader_ino = st.st_ino;
	snprintf(s->loader_path, sizeof(s->loader_path), "/cbox-loader");
	return 0;
}

static int setup_mounts(struct cbox_sentry *s)
{
	if (mount("proc", CBOX_SENTRY_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          NULL) < 0)
		return -errno;
	for (int i = 0; i < CBOX_DEV_COUNT; i++) {
		s->dev_fds[i] = open(dev_names[i], O_RDONLY | O_CLOEXEC);
		if (s->dev_fds[i] < 0)
			return -errno;
	}
	cbox_dev_pts_setup(s, CBOX_SENTRY_ROOT "/pts");
	if (chdir(CBOX_SENTRY_ROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	return 0;
}

/*
 * Ports below 1024 are a host's promise that a root process listens there; the sandbox's own
 * network namespace has only loopback and no route out, so the promise means nothing inside,
 * and a web server's image expects port 80. As Docker does for a container's namespace, any
 * user may bind them here (net.ipv4.ip_unprivileged_port_start=0, a per-namespace setting).
 */
static void low_ports_open(void)
{
	int fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		cbox_warn("ports below 1024 stay root's: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

int cbox_sentry_task_start(struct cbox_sentry *s, pid_t pid, const char *cwd,
                           struct cbox_cred *cred, bool no_new_privs, int install_sock)
{
	struct cbox_task *t = cred ? cbox_task_new(s, pid) : NULL;
	if (!t) {
		cbox_cred_put(cred);
		if (install_sock >= 0)
			close(install_sock);
		return -ENOMEM;
	}
	t->cred = cred;
	t->seen_first_stop = true;
	t->attached_parent = true;
	t->takes_listener = true;
	t->no_new_privs = no_new_privs;
	t->tg = calloc(1, sizeof(*t->tg));
	t->fs = calloc(1, sizeof(*t->fs));
	t->files = cbox_fdtable_new();
	if (!t->tg || !t->fs || !t->files) {
		if (install_sock >= 0)
			close(install_sock);
		return -ENOMEM;
	}
	cbox_fdtable_set_install_sock(t->files, install_sock);
	t->tg->refs = 1;
	t->tg->host_tgid = pid;
	/* Its fds are the caller's, not installed by the sentry: a stdout redirected to a file
	 * holds that file open for writing (busy text, task.c). */
	cbox_text_note_fds(s, pid);
	t->fs->refs = 1;
	t->fs->root = cbox_dentry_get(s->root);
	t->fs->umask = s->cfg->has_umask && t->tid == s->init_tid ? s->cfg->umask & 0777 : 022;
	int r = cbox_vfs_walk(s, t, AT_FDCWD, cwd, CBOX_WALK_FOLLOW | CBOX_WALK_DIRECTORY,
	                      &t->fs->cwd, NULL);
	/* chdir's own check: the user must be able to search the directory itself. */
	if (r == 0 && (r = cbox_vfs_may(t, t->fs->cwd, X_OK)) < 0) {
		cbox_dentry_put(s, t->fs->cwd);
		t->fs->cwd = NULL;
	}
	/* A container's user that may not enter its working directory does not start, as under
	 * runc ("chdir to cwd ... permission denied"). cbox-run's working folder may be hidden or
	 * outside the tree: the guest starts in / then. */
	if (r == -EACCES && s->cfg->all_ids) {
		cbox_error("working directory %s: %s for uid %u", cwd, strerror(-r), t->cred->uid);
		return r;
	}
	if (r < 0) {
		cbox_warn("working directory %s is not in the guest's tree (%s): starting in /",
		          cwd, strerror(-r));
		t->fs->cwd = cbox_dentry_get(s->root);
	}
	return 0;
}

/* The guest task's "ready" byte; its pid as the sentry sees it comes with it (SO_PASSCRED: with
 * --init the task is not the sentry's child, and its pid is known only this way). */
static int read_ready(int sock, pid_t *pid)
{
	char ready;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = {.iov_base = &ready, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = ctl.buf,
	                    .msg_controllen = sizeof(ctl)};
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -ECANCELED; /* the child failed before it could be traced: it said why */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			*pid = cr.pid;
			return 0;
		}
	return -EPROTO;
}

/* Wait until the gofer has answered its set-up (see gofer_pending), then read the root from it. */
static int gofer_ready(struct cbox_sentry *s)
{
	if (s->cfg->gofer_pending) {
		char c;
		ssize_t n;
		do
			n = read(s->cfg->gofer_ready_fd, &c, 1);
		while (n < 0 && errno == EINTR);
		close(s->cfg->gofer_ready_fd);
		if (n != 1)
			return -ECANCELED; /* the parent gave up on the gofer (it says why) */
	}
	int r = cbox_vfs_init(s);
	if (r < 0) {
		cbox_error("reading the root file system from the gofer: %s", strerror(-r));
		return -ECANCELED; /* (reported) */
	}
	return 0;
}

/*
 * The sentry's own limits and its seccomp filter: after every child that must not inherit them
 * was forked (the guest's first task, the spawner of `cbox exec` tasks), before the guest's
 * program runs. Reports its errors.
 */
static int confine(struct cbox_sentry *s)
{
	/* Only now: the guest's first task and the spawner of `cbox exec` tasks were forked with
	 * the limit the sandbox was given, which is the guest's. */
	long lim = cbox_fdlimit_raise();
	if (lim < 0)
		cbox_warn("raising the sentry's fd limit: %s", strerror((int)-lim));
	else
		cbox_fs_gofer_fd_budget(s, lim);
	int r = cbox_sentry_seccomp_install();
	if (r < 0) {
		cbox_error("installing the sentry's seccomp filter: %s", strerror(-r));
		return -ECANCELED;
	}
	return 0;
}

/* What the sentry sets up while the guest's first task sets itself up: its root (see
 * setup_guest_dir), the sandbox's network and hostname (the guest's too, made ready before its
 * go), and, without an exec service to fork first, its confinement. Reports its errors. */
static int finish_setup(struct cbox_sentry *s)
{
	/* (the host's /sys, before setup_mounts leaves the host's mounts behind) */
	cbox_fs_sys_init(s);
	int r = setup_mounts(s);
	if (r < 0) {
		cbox_error("setting up the sentry's mounts: %s", strerror(-r));
		return -ECANCELED;
	}
	/* The sandbox's network namespace has only loopback: up, so that local servers work
	 * (already up in one the sandbox joined, such as Docker's). */
	if ((r = cbox_loopback_up()) < 0)
		cbox_warn("bringing up loopback: %s", strerror(-r));
	if (s->cfg->low_ports)
		low_ports_open();
	if (sethostname(s->hostname, strlen(s->hostname)) < 0)
		cbox_warn("sethostname: %s", strerror(errno));
	return s->cfg->exec_service ? 0 : confine(s);
}

/* Start the guest's first task. Its own set-up (namespaces, session, capabilities, its seccomp
 * filter built) runs while the sentry finishes its own (finish_setup) and reads the root from
 * the gofer, which may still be building its tree; the task is traced once it says it is ready, and
 * starts its program on the go the sentry sends after cbox_sentry_task_start (which resolves the
 * working directory). */
static int start_guest(struct cbox_sentry *s, int install_sock, int install_peer)
{
	int sync[2], on = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0)
		return -errno;
	if (setsockopt(sync[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0) {
		close(sync[0]);
		close(sync[1]);
		return -errno;
	}
	/* The guest gets its own pid namespace (its first task is pid 1 there, as in a container,
	 * or pid 2 under a tiny init with --init) and its own mount namespace, whose root will be
	 * the empty guest/ directory. */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(sync[1]);
		if (s->cfg->init)
			cbox_guest_tiny_init(s, sync[0], install_peer);
		cbox_guest_init(s, sync[0], install_peer);
	}
	close(sync[0]);
	pid_t init = pid;
	/* The sentry's own set-up, then the root and the mount points from the gofer: all of it
	 * overlaps the task's own (its root, session, privileges, filter) instead of preceding or
	 * following it. */
	int r = finish_setup(s);
	if (r == 0)
		r = gofer_ready(s);
	if (r == 0)
		r = read_ready(sync[1], &pid);
	if (r == 0 && install_peer >= 0)
		close(install_peer);
	if (r == 0 && ptrace(PTRACE_SEIZE, pid, 0, CBOX_PTRACE_OPTIONS) < 0)
		r = -errno;
	if (r == 0) {
		s->init_tid = pid;
		const struct cbox_sentry_config *cfg = s->cfg;
		r = cbox_sentry_task_start(s, pid, cfg->cwd ? cfg->cwd : "/",
		                           cbox_cred_new(cfg->uid, cfg->gid, cfg->groups,
		                                         cfg->ngroups, cfg->cap_bset, cfg->all_ids),
		                           cfg->no_new_privs, install_sock);
		if (r == 0 && pid != init) {
			/* the tiny init, as /proc shows it: the program's user (fs_proc.c) */
			s->tiny_init.tid = init;
			s->tiny_init.vtid = 1;
			s->tiny_init.pidfd = -1;
			s->tiny_init.cred =
			    cbox_cred_new(cfg->uid, cfg->gid, cfg->groups, cfg->ngroups,
			                  cfg->cap_bset, cfg->all_ids);
		}
	}
	/* The go, with the program found along PATH when the sentry can tell (guest_init.c). */
	char go[PATH_MAX + 1] = "g";
	size_t len = 1;
	struct cbox_task *t = r == 0 ? cbox_task_find(s, pid) : NULL;
	if (t && cbox_guest_resolve(s, t, s->cfg->argv, s->cfg->envp, go + 1, sizeof(go) - 1)) {
		go[0] = 'p';
		len = strlen(go) + 1;
	}
	if (r == 0 && write(sync[1], go, len) != (ssize_t)len)
		r = -EIO;
	close(sync[1]);
	if (r < 0) {
		/* (with --init: the tiny init, which the guest task left, and with it the task) */
		kill(init, SIGKILL);
		if (pid != init)
			kill(pid, SIGKILL);
	}
	return r;
}

/* Async-signal-safe string building for cbox_sentry_guest_init: append s, or v in decimal. */
static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_uint(char *p, unsigned v)
{
	char digits[16];
	int k = 0;
	do
		digits[k++] = (char)('0' + v % 10);
	while (v /= 10);
	while (k)
		*p++ = digits[--k];
	return p;
}

pid_t cbox_sentry_guest_init(pid_t sentry)
{
	/* By hand, not snprintf/atoi: this runs in signal handlers. */
	char path[64], *p = put_str(path, "/proc/");
	p = put_str(put_uint(p, (unsigned)sentry), "/task/");
	p = put_str(put_uint(p, (unsigned)sentry), "/children");
	*p = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[32];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	pid_t pid = 0;
	for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		pid = pid * 10 + (buf[i] - '0');
	return pid;
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 125;
}

static void report_status(const struct cbox_sentry_config *cfg, int status)
{
	if (cfg->report_status && write(cfg->status_fd, &status, sizeof(status)) < 0)
		cbox_debug("reporting the exit status early: %s", strerror(errno));
}

int cbox_sentry_main(const struct cbox_sentry_config *cfg)
{
	static struct cbox_sentry sentry;
	struct cbox_sentry *s = &sentry;
	s->cfg = cfg;
	s->init_status = -1;
	s->pts_dir = s->pts_hold = -1;
	s->sys_fd = s->sysnet_fd = -1;
	s->lru_cap = CBOX_VFS_LRU_MAX;
	clock_gettime(CLOCK_REALTIME, &s->born);
	struct rlimit nofile;
	cbox_fs_gofer_fd_budget(s,
	                        getrlimit(RLIMIT_NOFILE, &nofile) == 0 ? (long)nofile.rlim_cur : 0);
	cbox_sentry_set_hostname(s, cfg->hostname ? cfg->hostname : "cbox",
	                         strlen(cfg->hostname ? cfg->hostname : "cbox"));
	prctl(PR_SET_NAME, "cbox-sentry");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	s->gofer = cbox_gofer_client_new(cfg->gofer_sock);
	if (!s->gofer)
		return 125;
	/* (under ptrace the hint made python's import json 10% slower: the sentry wanders) */
	cbox_gofer_client_hint_cpu(s->gofer, cfg->platform->runs_on_guest_cpu);
	int r = cbox_vfs_init_early(s);
	if (r < 0) {
		cbox_error("asking the gofer for the root: %s", strerror(-r));
		return 125;
	}
	r = setup_guest_dir(s);
	if (r < 0) {
		cbox_error("setting up the sentry's mounts: %s", strerror(-r));
		return 125;
	}
	/* The first task's install channel (ptrace platform): the sentry's end goes to its fd
	 * table, the other to the task's reserved fd (guest_init.c). */
	int pair[2] = {-1, -1};
	if (cfg->platform->needs_install_fd &&
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) < 0)
		return 125;
	s->platform = cbox_platform_new(cfg->platform);
	if (!s->platform)
		return 125;
	/* SIGCHLD is read from a signalfd; block it before the first child exists. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = start_guest(s, pair[0], pair[1]);
	if (r < 0) {
		if (r != -ECANCELED)
			cbox_error("starting the guest: %s", strerror(-r));
		return 125;
	}
	r = cbox_exec_ctl_init(s);
	if (r < 0) {
		cbox_error("starting the exec service: %s", strerror(-r));
		kill(s->init_tid, SIGKILL);
		return 125;
	}
	/* On the ptrace platform every guest process costs the sentry an fd (the sentry's end
	 * of its install channel: cbox_ptrace_new_channel), so the sentry takes its whole hard
	 * limit, now that every task that inherits its limits exists (the guest's first and the
	 * exec spawner: the guest keeps the limits it was given). Its caches were sized on the
	 * soft limit above. */
	if (cfg->platform->needs_install_fd && getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
	    nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (cfg->exec_service && confine(s) < 0) {
		kill(s->init_tid, SIGKILL);
		return 125;
	}
	cbox_tracer_loop(s);
	int status = s->init_status >= 0 ? exit_status(s->init_status) : 125;
	if (s->init_fault_sig && WIFSIGNALED(s->init_status) && WTERMSIG(s->init_status) == SIGKILL)
		status = 128 + s->init_fault_sig;
	/* The guest's pid 1 has been reaped, so every guest process is gone (the kernel empties a
	 * pid namespace before its init can be reaped): what is left is the sentry's own exit,
	 * which takes its mount namespace's teardown, about 0.35 ms. The caller may return now,
	 * except in a sanitizer build, whose leak check below can still change the status. */
	if (!CBOX_ASAN_BUILD)
		report_status(cfg, status);
	cbox_gofer_client_free(s->gofer);
	cbox_platform_free(s->platform);
	free(s->text);
	cbox_owners_free(s);
	cbox_fs_sys_free(s);
	/* The sentry's callers end it with _exit, where LeakSanitizer does not look: it looks
	 * here, so that every test's sandbox is also a leak check of the sentry. A leak fails
	 * the sandbox's status (125, the runtimes' own failure), not only its stderr. */
	if (CBOX_ASAN_BUILD) {
		if (cbox_leak_check()) {
			cbox_error("LeakSanitizer found leaks in the sentry (above)");
			status = 125;
		}
		report_status(cfg, status);
	}
	return status;
}
