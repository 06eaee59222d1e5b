/* cbox-run: run one program in a new sentry sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/crash.h"
#include "cbox/fdpass.h"
#include "cbox/cred.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "cbox/sentry.h"
#include "cbox_run.h"

/*
 * The guest's root holds Docker's default capabilities, of those the sentry emulates (chown,
 * dac_override, fowner, fsetid, kill, setgid, setuid), as a container's root does: `tar xf`
 * gives files their owners, `chown`, `su` and `setpriv` work. They are the sentry's alone: the
 * host sees one unprivileged id whatever the guest's ids are (no capability of the host's, no
 * file given to another host user: sentry/owners.c), so a capability reaches no further than
 * what that id may do on the host, and none applies to another host user's file (cbox/cred.h).
 */
#define CBOX_RUN_ROOT_CAPS                                                                         \
	(CBOX_CAP_BIT(CAP_CHOWN) | CBOX_CAP_BIT(CAP_DAC_OVERRIDE) | CBOX_CAP_BIT(CAP_FOWNER) |     \
	 CBOX_CAP_BIT(CAP_FSETID) | CBOX_CAP_BIT(CAP_KILL) | CBOX_CAP_BIT(CAP_SETGID) |            \
	 CBOX_CAP_BIT(CAP_SETUID))

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -e;
}

/*
 * The sandbox's user namespace maps its uid 0 to an unprivileged host uid: nobody (65534) when
 * cbox-run runs as root, else the caller's own uid. Whatever the sentry or a guest holds, the
 * host sees it as that uid.
 */
/* The host uid and gid the sandbox's uid 0 is: nobody when cbox-run runs as root, else the
 * caller's own (see map_ids). */
static uid_t sandbox_uid(void)
{
	return geteuid() == 0 ? 65534 : geteuid();
}

static int map_ids(pid_t pid)
{
	char path[64], map[64];
	uid_t uid = sandbox_uid();
	gid_t gid = geteuid() == 0 ? 65534 : getegid();
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	int r = write_str(path, "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1\n", gid);
	if ((r = write_str(path, map)) < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	return write_str(path, map);
}

/* The sandbox's user namespace (pid's, its maps written) to the gofer: cbox_gofer_spawn_view. */
static int sandbox_view(int gsock, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	int ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return -errno;
	int r = cbox_gofer_spawn_view(gsock, ns);
	close(ns);
	return r;
}

/*
 * The sentry reports the guest's exit status before its own teardown (about 0.35 ms of mount
 * namespace release), and cbox-run returns on it: what is left then runs no guest code and dies
 * on its own (the sentry exiting, the gofer killed below).
 */
static pid_t sentry_pid;
static volatile sig_atomic_t timed_out;

/*
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT to cbox-run are passed on to the guest's first program, as
 * `docker run` passes them to its container: a program may clean up (python's
 * KeyboardInterrupt, a shell's trap). That program is the init of the guest's pid namespace,
 * which as on Linux gets only the signals it handles; so a second such signal, or any while no
 * program runs, ends the sandbox at once (the whole of it: SIGKILL of the sentry). --timeout
 * (SIGALRM) always ends it at once. The sentry and the gofer are in process groups of their
 * own, so a terminal's ^C reaches cbox-run only, and only once.
 */
static volatile sig_atomic_t forwarded, forced;
static bool run_init; /* --init: the sentry's child is the tiny init, which passes signals on */
static unsigned closed_stdio; /* which of fds 0-2 the caller had closed (hold_closed_stdio) */

/* A signal for the program, whose pid is init: under --init to the tiny init, which passes it
 * on (a SIGSTOP as SIGTSTP, which it turns back); else to the program's process group when
 * group (it leads one), or to the program. Async-signal-safe. */
static int signal_program(pid_t init, int sig, bool group)
{
	if (run_init)
		return kill(init, sig == SIGSTOP ? SIGTSTP : sig);
	if (group && kill(-init, sig) == 0)
		return 0;
	return kill(init, sig);
}

static void on_signal(int sig)
{
	if (sentry_pid <= 0)
		return;
	if (sig == SIGALRM) {
		timed_out = 1;
	} else if (!forwarded) {
		pid_t init = cbox_sentry_guest_init(sentry_pid);
		/* ^C and ^\ go to the program's whole process group, as a terminal sends them:
		 * a shell's foreground child gets them too. */
		if (init > 0 && signal_program(init, sig, sig == SIGINT || sig == SIGQUIT) == 0) {
			forwarded = sig;
			return;
		}
		forced = sig;
	} else {
		forced = sig;
	}
	kill(sentry_pid, SIGKILL);
}

/*
 * ^Z: a terminal stops its foreground job, which is cbox-run alone (the sentry and the gofer
 * have groups of their own); the program would run on in the background. So cbox-run stops the
 * program's process group first (SIGSTOP: as its namespace's init the program would ignore a
 * SIGTSTP it does not handle) and then itself; when the shell continues cbox-run (fg, bg), the
 * program continues too. Only the program's group: a job it put in the background stays as it
 * is, as under a terminal.
 */
static void on_stop(int sig)
{
	(void)sig;
	int saved = errno;
	pid_t init = sentry_pid > 0 ? cbox_sentry_guest_init(sentry_pid) : 0;
	if (init > 0)
		signal_program(init, SIGSTOP, true);
	cbox_run_stop_self(on_stop); /* until SIGCONT */
	if (init > 0)
		signal_program(init, SIGCONT, true);
	errno = saved;
}

/* Arm --timeout: the whole sandbox (the sentry, and with it every guest task) is killed. */
static void arm_timeout(unsigned ms)
{
	if (ms == 0)
		return;
	struct itimerval it = {.it_value = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000}};
	signal(SIGALRM, on_signal);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* The sandbox's cgroup, when a limit was asked for; destroyed by main. */
static struct cbox_cgroup *sandbox_cg;

static int apply_limits(const struct cbox_run_opts *o, struct cbox_err **err)
{
	struct cbox_cgroup_limits lim = {.memory = o->memory,
	                                 .memory_swap = o->memory_swap,
	                                 .cpu_quota = o->cpu_quota,
	                                 .cpu_period = o->cpu_quota ? 100000 : 0,
	                                 .pids = o->pids};
	if (o->memory && !o->memory_swap) {
		/* No swap unless asked for: a box that outgrows --memory dies rather than swaps,
		 * so the limit means what it says. Without swap accounting there is no swap
		 * limit to set. */
		lim.memory_swap = o->memory;
		struct cbox_err *e = NULL;
		if (cbox_cgroup_apply(sandbox_cg, &lim, &e) == 0)
			return 0;
		bool no_accounting = e->errno_ == ENOTSUP;
		if (!no_accounting) {
			*err = e;
			return -1;
		}
		cbox_err_free(&e);
		lim.memory_swap = 0;
	}
	return cbox_cgroup_apply(sandbox_cg, &lim, err);
}

/*
 * With --memory, --cpus or --pids: the sandbox's cgroup (cbox/run-PID), with its limits. The
 * gofer, the proxy and the sentry, and so every guest task, are born in it and join it by
 * themselves (cbox_cgroup_fork); cbox-run itself stays outside, so that the limits cannot kill
 * the process that reports on them.
 */
static int make_cgroup(const struct cbox_run_opts *o)
{
	if (!cbox_run_has_limits(o))
		return 0;
	struct cbox_err *err = NULL;
	CBOX_AUTO(cbox_cgroup_layout) *l = NULL;
	char id[32];
	snprintf(id, sizeof(id), "run-%d", (int)getpid());
	if (cbox_cgroup_layout_detect(&l, &err) < 0 ||
	    cbox_cgroup_create(l, NULL, id, &sandbox_cg, &err) < 0) {
		cbox_err_report(&err,
		                "cbox-run: creating the sandbox's cgroup for --memory, --cpus "
		                "or --pids (they need root and a mounted cgroup file system)");
		return -1;
	}
	if (apply_limits(o, &err) < 0) {
		cbox_err_report(&err, "cbox-run: setting the sandbox's limits");
		return -1;
	}
	return 0;
}

/* The gofer is born in the sandbox's cgroup and joins the rest of it by itself
 * (cbox_gofer_config.fork_in and join_cgroup; cbox_cgroup_fork says why). */
static pid_t fork_in_sandbox_cgroup(void *cg)
{
	return cbox_cgroup_fork(cg, 0);
}

static int join_sandbox_cgroup(void *cg)
{
	struct cbox_err *e = NULL;
	if (cbox_cgroup_join(cg, &e) == 0)
		return 0;
	int r = -cbox_err_code(e);
	cbox_err_report(&e, "cbox-run: the gofer joining the sandbox's cgroup");
	return r < 0 ? r : -EIO;
}

/* The guest (or the sentry) was killed by the kernel because of --memory. */
static bool killed_by_memory_limit(const struct cbox_run_opts *o, int status)
{
	uint64_t kills = 0;
	if (!sandbox_cg || !o->memory || cbox_cgroup_oom_kills(sandbox_cg, &kills, NULL) < 0 ||
	    kills == 0)
		return false;
	return (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* The sentry ended during its set-up (it logged why): nothing is left running. */
/*
 * Wait for the sandbox's end: the exit status the sentry reports on status_fd once the guest is
 * gone (as a wait status; returns 1), else, when the sentry died before saying it, its own wait
 * status (returns 0). Interrupted waits (a forwarded signal, the timeout) go on. -1 on error.
 */
static int wait_sandbox(pid_t sentry, int status_fd, int *status)
{
	for (;;) {
		int code;
		ssize_t n = read(status_fd, &code, sizeof(code));
		if (n == (ssize_t)sizeof(code)) {
			*status = W_EXITCODE(code & 0xff, 0);
			return 1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break; /* EOF: the sentry is gone without a word */
	}
	while (waitpid(sentry, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* --network slirp4netns: its process, stopped when cbox-run is done (main). */
static struct cbox_run_slirp slirp = {.pid = -1, .exit_fd = -1, .ready_fd = -1, .log_fd = -1};

static int sentry_failed(pid_t sentry, pid_t gofer)
{
	kill(gofer, SIGKILL);
	waitpid(sentry, NULL, 0);
	waitpid(gofer, NULL, 0);
	return 125;
}

static int run(struct cbox_run_opts *o, char **argv)
{
	const struct cbox_platform_ops *platform = cbox_platform_find(o->platform);
	if (!platform) {
		fprintf(stderr, "cbox-run: unknown platform '%s' (use seccomp or ptrace)\n",
		        o->platform);
		return 125;
	}
	struct cbox_gofer_config gc;
	const char *cwd;
	if (cbox_run_tree(o, &gc, &cwd) < 0)
		return 125;
	char **envp = cbox_run_env(o);
	if (!envp) {
		cbox_error("out of memory");
		return 125;
	}
	struct cbox_err *err = NULL;
	int gsock;
	pid_t gpid;
	if (make_cgroup(o) < 0)
		return 125;
	if (sandbox_cg) {
		gc.fork_in = fork_in_sandbox_cgroup;
		gc.join_cgroup = join_sandbox_cgroup;
		gc.cgroup_arg = sandbox_cg;
	}
	/* Run by root, the sandbox's host id (nobody) is not the one whose files are the guest's
	 * own (host root's): the gofer is given the sandbox's user namespace to show the sentry its
	 * tree through (sandbox_view), so that the sentry's own lookups see the owners. Not with
	 * --overlay: the view serves lookups on a read-only root only. */
	gc.view_userns = geteuid() == 0 && !gc.overlay;
	/* The gofer builds its tree while the sentry's namespaces are made (both take a few
	 * milliseconds); its start-up answer is awaited before the sentry may go on. */
	if (cbox_gofer_spawn_start(&gc, &gsock, &gpid, &err) < 0) {
		cbox_err_report(&err, "cbox-run: starting the gofer");
		return 125;
	}
	setpgid(gpid, gpid); /* out of reach of the terminal's ^C, as the sentry */
	/* --allow-net: cbox-proxy, whose listening socket will come out of the sandbox's network
	 * namespace through proxy_feed (cbox_run_proxy.c): started now, its exec overlaps the rest
	 * of the set-up, and it may accept once the listener comes (a connection made before
	 * waits in the listener's backlog). */
	int proxy_feed = -1;
	if (o->net.n_allow) {
		proxy_feed = cbox_run_proxy_start(&o->net, o->level >= CBOX_LOG_INFO, sandbox_cg);
		if (proxy_feed < 0) {
			kill(gpid, SIGKILL);
			waitpid(gpid, NULL, 0);
			return 125;
		}
	}
	struct cbox_run_tty tty = {.master = -1, .slave = -1};
	if (o->tty && cbox_run_tty_open(&tty, sandbox_uid()) < 0)
		return 125;
	/* A socketpair, not a pipe: a sentry that died during its set-up (it said why) makes the
	 * send below fail with EPIPE instead of killing cbox-run with SIGPIPE (exit 141). */
	int sync[2], report[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0)
		return 125;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report) < 0)
		return 125;
	/* The guest's /sys/fs/cgroup shows the sandbox's cgroup (sentry/fs_sys_cgroup.c). */
	struct cbox_sentry_cgroup cg_view;
	if (sandbox_cg) {
		int r = cbox_cgroup_open_dirs(sandbox_cg, &cg_view.v2, &cg_view.memory,
		                              &cg_view.cpu, &cg_view.pids, &cg_view.unified);
		if (r < 0) {
			cbox_error("opening the sandbox's cgroup: %s", strerror(-r));
			kill(gpid, SIGKILL);
			waitpid(gpid, NULL, 0);
			return 125;
		}
	}
	struct cbox_sentry_config cfg = {.platform = platform,
	                                 .strict = o->strict,
	                                 .strace = o->strace,
	                                 .gofer_sock = gsock,
	                                 .argv = argv,
	                                 .envp = envp,
	                                 .cwd = cwd,
	                                 .hostname = CBOX_RUN_HOSTNAME,
	                                 .owner_uid = geteuid(),
	                                 .cap_bset = CBOX_RUN_ROOT_CAPS,
	                                 .uid = o->uid,
	                                 .gid = o->gid,
	                                 .groups = o->groups,
	                                 .ngroups = o->ngroups,
	                                 .low_ports = true,
	                                 .owner_gid = getegid(),
	                                 .tree_writable = true,
	                                 .dev_shm = o->dev_shm ? "/dev/shm" : NULL,
	                                 .tty = o->tty,
	                                 .init = o->init > 0,
	                                 .closed_stdio = o->tty ? 0 : closed_stdio,
	                                 .tty_fd = tty.slave,
	                                 .report_status = true,
	                                 .status_fd = report[0],
	                                 .gofer_pending = true,
	                                 .gofer_ready_fd = sync[0],
	                                 .cgroup = sandbox_cg ? &cg_view : NULL};
	/*
	 * The sentry's user and pid namespaces come with the clone; its mount, network, IPC and UTS
	 * namespaces it makes itself, first thing, while this process writes its id maps: the
	 * clone with all six took ~1.7 ms here, all of it before the maps. (It holds every
	 * capability in its new user namespace from the start, mapped or not; each namespace is
	 * owned by that user namespace either way.) With --network slirp4netns the network
	 * namespace comes with the clone, so that slirp4netns can be started on it at once.
	 */
	int net_flag = o->net.slirp ? CLONE_NEWNET : 0;
	pid_t pid = cbox_cgroup_fork(sandbox_cg, CLONE_NEWUSER | CLONE_NEWPID | net_flag);
	if (pid < 0) {
		cbox_error("creating the sandbox's namespaces: %s", strerror(errno));
		return 125;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(sync[1]);
		close(report[1]);
		cbox_log_set_who("sentry");
		/* Into the rest of the sandbox's cgroup first, by itself (cbox_cgroup_fork says
		 * why), so that every guest task is born inside. */
		struct cbox_err *e = NULL;
		if (cbox_cgroup_join(sandbox_cg, &e) < 0) {
			cbox_err_report(&e, "cbox-run: the sentry joining the sandbox's cgroup");
			_exit(125);
		}
		if (unshare(CLONE_NEWNS | (CLONE_NEWNET & ~net_flag) | CLONE_NEWIPC |
		            CLONE_NEWUTS) < 0)
			cbox_die(125, "creating the sandbox's namespaces: %s", strerror(errno));
		if (proxy_feed >= 0) {
			int l = cbox_run_proxy_listener();
			if (l < 0)
				cbox_die(125, "--allow-net: the proxy's port in the sandbox: %s",
				         strerror(-l));
			if (cbox_send_fds(proxy_feed, "l", 1, &l, 1) < 0)
				_exit(125);
			close(l);
			close(proxy_feed);
		}
		char c;
		if (read(sync[0], &c, 1) != 1)
			_exit(125);
		/* -t: the guest's stdin, stdout and stderr are the sandbox's pseudo-terminal. */
		if (o->tty &&
		    (dup2(tty.slave, 0) < 0 || dup2(tty.slave, 1) < 0 || dup2(tty.slave, 2) < 0))
			cbox_die(125, "-t: the pseudo-terminal as stdin/stdout/stderr: %s",
			         strerror(errno));
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			cbox_die(125, "becoming root in the sandbox's user namespace: %s",
			         strerror(errno));
		_exit(cbox_sentry_main(&cfg));
	}
	close(sync[0]);
	close(report[0]);
	if (proxy_feed >= 0)
		close(proxy_feed);
	setpgid(pid, pid); /* (also done by the child: whichever runs first) */
	sentry_pid = pid;
	int r = map_ids(pid);
	if (r < 0) {
		cbox_error("writing the sandbox's uid/gid maps: %s", strerror(-r));
		kill(pid, SIGKILL);
		return 125;
	}
	if (gc.view_userns && (r = sandbox_view(gsock, pid)) < 0) {
		cbox_error("giving the gofer the sandbox's user namespace: %s", strerror(-r));
		kill(pid, SIGKILL);
		kill(gpid, SIGKILL);
		return 125;
	}
	if (o->net.slirp && cbox_run_net_start(&o->net, pid, &slirp) < 0) {
		kill(pid, SIGKILL);
		kill(gpid, SIGKILL);
		return 125;
	}
	/* The sentry sets itself and the guest task up while the gofer may still be building its
	 * tree (the second byte says it is ready), and slirp4netns brings the sandbox's tap0 up:
	 * the set-ups overlap. */
	if (send(sync[1], "g", 1, MSG_NOSIGNAL) != 1)
		return sentry_failed(pid, gpid);
	if (cbox_gofer_spawn_finish(&gsock, gpid, &err) < 0) {
		cbox_err_report(&err, "cbox-run: starting the gofer");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 125;
	}
	close(gsock);
	/* The program starts with its way out up. */
	if (o->net.slirp && cbox_run_net_ready(&o->net, &slirp) < 0) {
		kill(pid, SIGKILL);
		return sentry_failed(pid, gpid);
	}
	if (send(sync[1], "r", 1, MSG_NOSIGNAL) != 1)
		return sentry_failed(pid, gpid);
	close(sync[1]);
	run_init = o->init > 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGQUIT, on_signal);
	signal(SIGTSTP, on_stop);
	arm_timeout(o->timeout_ms);
	int status, early = 0;
	if (o->tty) {
		if (cbox_run_tty_relay(&tty, pid, &status) < 0) {
			cbox_run_tty_restore();
			return 125;
		}
	} else if ((early = wait_sandbox(pid, report[1], &status)) < 0) {
		return 125;
	}
	close(report[1]);
	/* After an early status the gofer is not waited for either: its exit (its mount namespace's
	 * teardown) takes as long as the sentry's, and runs no guest code. */
	kill(gpid, SIGKILL);
	if (!early)
		waitpid(gpid, NULL, 0);
	if (timed_out) {
		fprintf(stderr, "cbox-run: killed after the --timeout of %u ms\n", o->timeout_ms);
		return 137;
	}
	if (killed_by_memory_limit(o, status)) {
		char size[64];
		cbox_cgroup_format_size(o->memory, size, sizeof(size));
		fprintf(stderr, "cbox-run: killed: the memory limit of %s was reached\n", size);
		return 137;
	}
	if (forced && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		fprintf(stderr, "cbox-run: the sandbox was killed on %s%s\n",
		        forwarded ? "a second " : "", strsignal(forced));
		return 128 + forced;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	cbox_error("the sentry died of signal %d", WTERMSIG(status));
	return 125;
}

/*
 * The caller may have started cbox-run with stdin, stdout or stderr closed (`cmd 0<&-`). The fds
 * cbox-run then opens would land there and be the program's: its stdin was the gofer's socket,
 * and `cat` waited on it forever. So each closed one holds /dev/null while cbox-run runs, and
 * the guest closes it again before its program starts, which then finds it closed, as it would
 * outside (EBADF). Returns the mask of fds that were closed.
 */
static unsigned hold_closed_stdio(void)
{
	unsigned mask = 0;
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDWR);
		if (n == fd)
			mask |= 1u << fd;
		else if (n >= 0)
			close(n); /* (cannot be: fd was the lowest free one) */
	}
	return mask;
}

int main(int argc, char **argv)
{
	closed_stdio = hold_closed_stdio();
	struct cbox_run_opts o;
	int first = cbox_run_parse(argc, argv, &o);
	if (first < 0) {
		cbox_run_opts_free(&o);
		return 125;
	}
	cbox_log_init(2, (enum cbox_log_format)o.format, (enum cbox_log_level)o.level, "cbox-run");
	cbox_crash_install();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int status =
	    strcmp(o.tier, "ns") == 0 ? cbox_run_ns(&o, argv + first) : run(&o, argv + first);
	cbox_run_net_stop(&slirp);
	cbox_run_proxy_stop();
	struct cbox_err *err = NULL;
	/* Whatever is left of the sandbox dies with its cgroup. */
	if (sandbox_cg && cbox_cgroup_destroy(sandbox_cg, &err) < 0)
		cbox_err_report(&err, "cbox-run: removing the sandbox's cgroup");
	cbox_cgroup_free(sandbox_cg);
	cbox_run_opts_free(&o);
	return status;
}
