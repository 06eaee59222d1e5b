/*
 * The guest's first task, between the sentry's clone and its first exec: it drops into the
 * empty root, gives up every privilege, installs the guest filter and execs the program (which
 * the sentry turns into an exec of the loader).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/exec_req.h"
#include "cbox/log.h"
#include "cbox/sanitizer.h"
#include "cbox/seccomp_allow.h"
#include "internal.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* (the task is cloned before the sentry pivots into its tmpfs: sentry.c, setup_guest_dir) */
#define GUEST_DIR CBOX_SENTRY_ROOT "/guest"

static int enter_empty_root(void)
{
	/* The guest's root is the sentry's guest/ directory, read-only: the host kernel resolves
	 * no path for the guest except the loader's (every path syscall goes to the sentry). */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(GUEST_DIR, GUEST_DIR, NULL, MS_BIND, NULL) < 0 || chdir(GUEST_DIR) < 0 ||
	    syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		return -errno;
	return 0;
}

/*
 * No capabilities, now or after exec: an empty bounding set and inheritable set mean an exec
 * (even by uid 0) grants none, and the locked securebits keep uid 0 from being special.
 */
static int drop_privileges(void)
{
	/* (capabilities are numbered without gaps: the first EINVAL is past the last one the
	 * kernel knows, and the 23 calls after it were EINVAL too) */
	for (int cap = 0; cap <= 63; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		return -errno;
	}
	if (prctl(PR_SET_SECUREBITS,
	          SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
	              SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
	          0, 0, 0) < 0)
		return -errno;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The guest filter, built before the task tells the sentry it is ready (cbox_guest_prepare) and
 * installed once it has said so: every call the filter traps must find the sentry listening,
 * which takes the listener from the task's first execve. So between the install and that
 * execve the task makes only fast-path calls (read, close, write and _exit on an error); under
 * --strict every call traps, and the filter is installed after the go (cbox_guest_exec). */
static struct sock_fprog guest_filter;

static int build_filter(struct cbox_sentry *s)
{
	struct sock_filter *prog;
	unsigned short len;
	int r = cbox_platform_build_filter(s->cfg->platform, s->cfg->strict, &prog, &len);
	if (r < 0)
		return r;
	guest_filter = (struct sock_fprog){.len = len, .filter = prog};
	return 0;
}

static CBOX_NORETURN void fail(int status, const char *what, int err)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "cbox-run: %s: %s\n", what, strerror(err));
	if (n > 0)
		(void)!write(2, msg, (size_t)n);
	_exit(status);
}

/* The listener's fd, or -1 on a platform without one. A failure ends the task: it must never
 * run the guest's program unfiltered (an -errno return would have let EPERM, -1, pass for the
 * ptrace platform's "no listener"). */
static int install_filter(struct cbox_sentry *s)
{
	unsigned long flags = 0;
	if (s->cfg->platform->trap_action == SECCOMP_RET_USER_NOTIF)
		flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	int r = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &guest_filter);
	if (r < 0)
		fail(125, "installing the guest filter", errno);
	return flags ? r : -1;
}

/*
 * The ptrace platform's install socket sits at CBOX_PTRACE_INSTALL_FD (1022), which the guest's
 * filter names. dup2 refuses an fd at or past the soft RLIMIT_NOFILE (EBADF), so under a lower
 * soft limit that is raised for the dup2 and put back (the fd stays, as any fd made before a
 * limit was lowered does on Linux); under a lower hard limit the platform cannot run.
 */
_Static_assert(CBOX_PTRACE_INSTALL_FD == 1022, "the message below names it");

static void reserve_install_fd(int install_fd)
{
	struct rlimit rl;
	bool raised = false;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= CBOX_PTRACE_INSTALL_FD) {
		if (rl.rlim_max <= CBOX_PTRACE_INSTALL_FD)
			fail(125,
			     "--platform=ptrace needs a hard fd limit above 1022 (ulimit -Hn), or "
			     "use "
			     "--platform=seccomp",
			     EMFILE);
		struct rlimit need = {.rlim_cur = CBOX_PTRACE_INSTALL_FD + 1,
		                      .rlim_max = rl.rlim_max};
		raised = setrlimit(RLIMIT_NOFILE, &need) == 0;
	}
	if (dup2(install_fd, CBOX_PTRACE_INSTALL_FD) < 0)
		fail(125, "reserving the install fd", errno);
	if (raised)
		setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * Every signal unblocked and at its default disposition. Only the ones ignored or caught need a
 * call (the rest are at their default already): /proc/self/status lists them (SigIgn, SigCgt),
 * two or three of 64, which saved ~60 rt_sigaction calls (~0.06 ms) of every start. Without
 * /proc (a `cbox exec` task, in the guest's empty root) every signal is set.
 */
static void default_signals(void)
{
	uint64_t set = ~0ULL;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		const char *ign = NULL, *cgt = NULL;
		if (n > 0) {
			buf[n] = '\0';
			ign = strstr(buf, "\nSigIgn:");
			cgt = strstr(buf, "\nSigCgt:");
		}
		if (ign && cgt)
			set = strtoull(ign + 8, NULL, 16) | strtoull(cgt + 8, NULL, 16);
	}
	for (int sig = 1; sig < NSIG; sig++)
		if (set & (1ULL << (sig - 1)))
			signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

CBOX_NORETURN void cbox_guest_init(struct cbox_sentry *s, int sync_fd, int install_fd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The sentry changed uid after it was exec'd, which made it (and this copy of it)
	 * non-dumpable, and so not traceable by the sentry. Only this task becomes dumpable; the
	 * sentry stays out of reach of other processes of its uid (and the tiny init, whose memory
	 * this task shares until its exec, clears the flag again: start_program). */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	/* The sentry blocks SIGCHLD for its signalfd; the guest starts as a fresh process would,
	 * with no signal blocked and every disposition at its default. */
	default_signals();
	int r = enter_empty_root();
	if (r < 0)
		fail(125, "entering the guest's root", -r);
	if (install_fd >= 0) {
		reserve_install_fd(install_fd);
		close(install_fd);
	}
	/* Nothing of the sentry's may survive into the guest: everything but stdio and the
	 * install socket closes at exec. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (install_fd >= 0)
		fcntl(CBOX_PTRACE_INSTALL_FD, F_SETFD, 0);
	cbox_guest_prepare(s, s->cfg->tty);
	/* The caller's closed stdio, held by /dev/null until now (cbox-run's hold_closed_stdio) */
	for (int fd = 0; fd < 3; fd++)
		if (s->cfg->closed_stdio & (1u << fd))
			close(fd);
	char go = 'r';
	if (write(sync_fd, &go, 1) != 1)
		_exit(125);
	/* Installed while the sentry traces the task and looks its working folder and program
	 * up (~0.25 ms each on this VM), instead of after the go. */
	int listener = s->cfg->strict ? -2 : install_filter(s);
	/* The go: "g", or "p" and the program's path with its NUL (cbox_guest_resolve). */
	char msg[PATH_MAX + 2];
	size_t got = 0;
	do {
		ssize_t k = read(sync_fd, msg + got, sizeof(msg) - 1 - got);
		if (k <= 0)
			_exit(125); /* the sentry gave up */
		got += (size_t)k;
	} while (msg[0] == 'p' && !memchr(msg, '\0', got) && got < sizeof(msg) - 1);
	close(sync_fd);
	bool path = msg[0] == 'p' && memchr(msg, '\0', got);
	cbox_guest_exec(s, s->cfg->argv, s->cfg->envp, path && msg[1] ? msg + 1 : NULL, listener);
}

/*
 * --init: pid 1 of the guest's pid namespace is this tiny init and the program is its child, pid
 * 2, as with `docker run --init` (tini). The program then gets signals with their default
 * actions (a ^C or `kill $$` ends a script without a trap; `yes | head -1` ends quietly on
 * SIGPIPE), the init passes on the signals it is sent, and orphans are reaped.
 *
 * Security: the init is a copy of the sentry that never runs guest code, but it lives in the
 * guest's pid namespace holding the sentry's memory (cbox-run's environment among it) and fds.
 * So before it waits it closes every fd, wipes the environment strings, stays non-dumpable (the
 * guest can neither trace it nor read its memory; the guest's /proc is the sentry's and does not
 * show it) and locks itself into wait4, kill and exit. As its namespace's init, it takes from
 * the guest only the signals it handles, the ones it passes on: `kill -9 1` does nothing.
 */
static volatile pid_t tiny_child;

static void tiny_forward(int sig)
{
	/* ^C, ^\ and ^Z (and the SIGCONT after it) go to the program's whole process group (it
	 * leads one), as a terminal sends them; the others to the program. */
	bool group = sig == SIGINT || sig == SIGQUIT || sig == SIGTSTP || sig == SIGCONT;
	/* The program leads a session of its own, so its group is orphaned and the kernel
	 * drops a SIGTSTP's default stop there: stop it with SIGSTOP. */
	if (sig == SIGTSTP)
		sig = SIGSTOP;
	if (tiny_child > 0 && (!group || kill(-tiny_child, sig) < 0))
		kill(tiny_child, sig);
}

/* Sorted by number; published by `cbox syscalls --host-surface` (init). */
static const int tiny_allowed[] = {
    SYS_rt_sigreturn,    /* 15: return from the forwarding handler */
    SYS_exit,            /* 60 */
    SYS_wait4,           /* 61: reaping */
    SYS_kill,            /* 62: passing signals on */
    SYS_restart_syscall, /* 219: wait4 after a stop */
    SYS_exit_group,      /* 231: _exit */
};

const int *cbox_guest_init_allowed_syscalls(size_t *n)
{
	*n = CBOX_ARRAY_SIZE(tiny_allowed);
	return tiny_allowed;
}

/* AddressSanitizer (the debug build) keeps the stack's bounds per thread, and the task below
 * runs as the init's thread would, on another stack: it is told of the switch there and back,
 * as for a coroutine's (else it warns, on the guest's stderr, at the task's first noreturn call).
 */
#ifdef CBOX_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#define PROGRAM_STACK (256 * 1024)

struct program_start {
	struct cbox_sentry *s;
	int sync_fd, install_fd;
	char *stack;            /* the task's (its lowest byte) */
	const void *init_stack; /* (AddressSanitizer: the init's stack, to switch back to) */
	size_t init_stack_size;
};

static int program_main(void *arg)
{
	struct program_start *p = arg;
#ifdef CBOX_ASAN
	void *fake_stack;
	__sanitizer_start_switch_fiber(&fake_stack, p->stack, PROGRAM_STACK);
	__sanitizer_finish_switch_fiber(fake_stack, &p->init_stack, &p->init_stack_size);
#endif
	cbox_guest_init(p->s, p->sync_fd, p->install_fd);
}

/*
 * The program's task shares the init's memory until its exec, and the init waits meanwhile
 * (CLONE_VM | CLONE_VFORK, as posix_spawn starts a program). A fork copied the init's page
 * tables (a copy of the sentry's) and the task then took a copy-on-write fault for each page it
 * wrote before the exec threw them all away: on this nested VM the fork took ~1 ms and the
 * task's set-up ~0.5 ms more than it does now, all on the way to the program's start. The task
 * runs only cbox_guest_init, on a stack of its own below which a page stays unmapped, and the
 * init resumes once the exec has given the task memory of its own (or it died).
 *
 * Security: the dumpable flag belongs to the memory, and the task sets it so that the sentry
 * may trace it (cbox_guest_init). The init clears it again as soon as it resumes: it must stay
 * out of reach of the guest's processes and of the sandbox's host user (see above). Until then
 * the memory is the task's too, which was just as exposed as a fork's copy of it.
 */
static pid_t start_program(struct cbox_sentry *s, int sync_fd, int install_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	char *stack = mmap(NULL, PROGRAM_STACK + (size_t)page, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	if (mprotect(stack, (size_t)page, PROT_NONE) < 0) {
		munmap(stack, PROGRAM_STACK + (size_t)page);
		return -1;
	}
	struct program_start p = {
	    .s = s, .sync_fd = sync_fd, .install_fd = install_fd, .stack = stack + page};
	pid_t child =
	    clone(program_main, p.stack + PROGRAM_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &p);
	int saved = errno;
#ifdef CBOX_ASAN
	if (p.init_stack) { /* (the task ran, and switched) */
		void *fake_stack;
		__sanitizer_start_switch_fiber(&fake_stack, p.init_stack, p.init_stack_size);
		__sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
	}
#endif
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	munmap(stack, PROGRAM_STACK + (size_t)page);
	errno = saved;
	return child;
}

CBOX_NORETURN void cbox_guest_tiny_init(struct cbox_sentry *s, int sync_fd, int install_fd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "cbox-init");
	static const int passed[] = {SIGINT,  SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1,
	                             SIGUSR2, SIGWINCH, SIGTSTP, SIGCONT};
	/* Held until the handlers below pass them on: the init waits for the program's exec
	 * first (start_program), and cbox-run may send one meanwhile. The program's task unblocks
	 * every signal (default_signals). */
	sigset_t held;
	sigemptyset(&held);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(passed); i++)
		sigaddset(&held, passed[i]);
	sigprocmask(SIG_BLOCK, &held, NULL);
	pid_t child = start_program(s, sync_fd, install_fd);
	if (child < 0)
		fail(125, "starting the program under --init", errno);
	tiny_child = child;
	struct sigaction sa = {.sa_handler = tiny_forward, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(passed); i++)
		sigaction(passed[i], &sa, NULL);
	for (char **e = environ; e && *e; e++)
		memset(*e, 0, strlen(*e));
	syscall(SYS_close_range, 0, ~0U, 0);
	/* The sentry blocks SIGCHLD (for its signalfd); the handlers above must run. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (cbox_allow_load_nrs(tiny_allowed, CBOX_ARRAY_SIZE(tiny_allowed)) < 0) {
		kill(child, SIGKILL);
		_exit(125);
	}
	for (;;) {
		int st;
		pid_t w = (pid_t)syscall(SYS_wait4, -1, &st, 0, NULL);
		if (w == child)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (w < 0 && errno == ECHILD)
			_exit(0);
	}
}

void cbox_guest_prepare(struct cbox_sentry *s, bool tty)
{
	/* Its own session and process group, as a container's init has (pgid = sid = pid 1). */
	setsid();
	/* With a terminal (cbox-run -t, a terminal `cbox exec`), fd 0 is a pseudo-terminal of
	 * the sandbox's: it becomes the session's controlling terminal (job control, /dev/tty).
	 * Never the caller's terminal: without one the guest has no controlling terminal. */
	if (tty && ioctl(0, TIOCSCTTY, 0) < 0)
		fail(125, "taking the pseudo-terminal as controlling terminal", errno);
	int r = drop_privileges();
	if (r < 0)
		fail(125, "dropping privileges", -r);
	r = build_filter(s);
	if (r < 0)
		fail(125, "building the guest filter", -r);
}

/* The search path of envp (execvp's default without one). */
static const char *guest_path(char *const *envp)
{
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			return *e + 5;
	return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

/* The candidate for prog of the PATH entry at p into full (empty when too long); returns where
 * the next entry starts, or NULL when this was the last. An empty entry is the working
 * directory. */
static const char *next_candidate(const char *p, const char *prog, char *full, size_t size)
{
	const char *end = strchrnul(p, ':');
	int n = snprintf(full, size, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", prog);
	if (n <= 0 || (size_t)n >= size)
		full[0] = '\0';
	return *end ? end + 1 : NULL;
}

void cbox_guest_exec(struct cbox_sentry *s, char *const *argv, char *const *envp,
                     const char *resolved, int listener)
{
	if (listener == -2)
		listener = install_filter(s);

	const char *prog = argv[0];
	/* The listener's number rides in the fourth register of each attempt: the sentry takes the
	 * listener from the first execve stop (it is close-on-exec, so the guest never holds it).
	 */
	if (strchr(prog, '/')) {
		syscall(SYS_execve, prog, argv, envp, (long)listener);
		fail(errno == ENOENT ? 127 : 126, prog, errno);
	}
	/* The file the sentry found along PATH first: whatever happens to it, the search below
	 * comes to the same outcome (cbox_guest_resolve). */
	if (resolved)
		syscall(SYS_execve, resolved, argv, envp, (long)listener);
	const char *path = guest_path(envp);
	int saved = ENOENT;
	char full[PATH_MAX];
	for (const char *p = path; p;) {
		p = next_candidate(p, prog, full, sizeof(full));
		if (!full[0])
			continue;
		syscall(SYS_execve, full, argv, envp, (long)listener);
		if (errno == EACCES)
			saved = EACCES;
		else if (errno != ENOENT && errno != ENOTDIR)
			fail(126, prog, errno);
	}
	fail(saved == ENOENT ? 127 : 126, prog, saved);
}

/*
 * The first task's program along PATH, looked up by the sentry before the task's go: each
 * name the search below would try and fail was an execve stop and its walk (~0.1 ms on this
 * VM), and a caller's PATH often starts with folders cbox-run hides (~/.local/bin, ~/.cargo/bin).
 * The result is only the first attempt: the search must come to what execve alone would. So a
 * candidate is skipped only where execve says ENOENT, ENOTDIR or EACCES (no such file, a
 * directory, no execute permission: exec.c's own checks, open_checked), and on any other error
 * the sentry finds nothing and the guest searches as before.
 */
bool cbox_guest_resolve(struct cbox_sentry *s, struct cbox_task *t, char *const *argv,
                        char *const *envp, char *out, size_t size)
{
	const char *prog = argv[0];
	if (!prog || !*prog || strchr(prog, '/'))
		return false;
	char full[PATH_MAX];
	for (const char *p = guest_path(envp); p;) {
		p = next_candidate(p, prog, full, sizeof(full));
		if (!full[0])
			continue;
		struct cbox_dentry *d;
		int r = cbox_vfs_walk(s, t, AT_FDCWD, full, CBOX_WALK_FOLLOW, &d, NULL);
		if (r == -ENOENT || r == -ENOTDIR || r == -EACCES)
			continue;
		if (r < 0)
			return false;
		bool runs = S_ISREG(d->mode) && cbox_vfs_may(t, d, X_OK) == 0;
		cbox_dentry_put(s, d);
		if (!runs)
			continue; /* (execve's EACCES) */
		if (strlen(full) >= size)
			return false;
		strcpy(out, full);
		return true;
	}
	return false;
}

/*
 * A task of `cbox exec` (sentry/exec_ctl.c), forked by the spawner inside the guest's pid and
 * mount namespaces: the first task's start, on the request's stdio, once the sentry traces it.
 */
CBOX_NORETURN void cbox_guest_exec_task(struct cbox_sentry *s, const struct cbox_exec_req *req,
                                        const int stdio[3], int install_fd, int sync_fd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* traceable by the sentry, as the first task */
	default_signals();
	for (int i = 0; i < 3; i++)
		if (dup2(stdio[i], i) < 0)
			fail(125, "taking the exec's stdio", errno);
	if (install_fd >= 0)
		reserve_install_fd(install_fd);
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (install_fd >= 0)
		fcntl(CBOX_PTRACE_INSTALL_FD, F_SETFD, 0);
	cbox_guest_prepare(s, (req->flags & CBOX_EXEC_TTY) != 0);
	/* Dumpable now (above): the sentry may seize it. */
	char go = 'r';
	if (write(sync_fd, &go, 1) != 1 || read(sync_fd, &go, 1) != 1 || go != 'g')
		_exit(125); /* the sentry gave up */
	close(sync_fd);
	cbox_guest_exec(s, req->argv, req->envp, NULL, -2);
}
