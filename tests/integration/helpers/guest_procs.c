/*
 * cbox-test-guest, the commands that reach into other processes (see guest.c for the program):
 * ptrace-guard (who may trace whom), cross-user (each call that reaches another process, from
 * its own user and from another), prio-user (the scheduler's calls on a user's processes),
 * signal-storm (queued signals to a process the sentry is busy in), kill-eintr (kill under a
 * handler without SA_RESTART), stop-hold (a stopped process stays stopped), open-loop,
 * exec-threads (an execve that kills threads the sentry is busy in). What a signal does to the
 * call it interrupts is guest_wake.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

/* A word the tracer tests read out of another process. */
static volatile long ptrace_secret = 0x5ec12e7L;

/* A child that pauses forever, after making itself not dumpable with nodump; it says it is
 * ready through a pipe. */
static pid_t paused_child(bool nodump)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (nodump)
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* PTRACE_ATTACH to pid (raw calls): "OK" once the stop is seen and the secret word read back,
 * then detached; else the errno's name. */
static const char *attach_and_peek(pid_t pid)
{
	if (syscall(SYS_ptrace, PTRACE_ATTACH, pid, 0, 0) < 0)
		return errname(errno);
	int st;
	if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		return "no-stop";
	long w = 0;
	long r = syscall(SYS_ptrace, PTRACE_PEEKDATA, pid, &ptrace_secret, &w);
	syscall(SYS_ptrace, PTRACE_DETACH, pid, 0, 0);
	return r == 0 && w == ptrace_secret ? "OK" : "bad-peek";
}

/*
 * `ptrace-guard`: who may trace whom (emulated ptrace). As the caller (root in the sandbox):
 * a process of its own user ("same-user"), one that made itself not dumpable ("nondumpable",
 * and its /proc/PID/environ: "nondumpable-environ");
 * then as nobody, the first one again ("other-user"); and a poke of its memory ("poke"). One
 * line each: NAME RESULT.
 */
int cmd_ptrace_guard(void)
{
	pid_t a = paused_child(false), b = paused_child(true);
	if (a < 0 || b < 0)
		return 1;
	printf("same-user %s\n", attach_and_peek(a));
	printf("nondumpable %s\n", attach_and_peek(b));
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)b);
	int efd = open(path, O_RDONLY);
	printf("nondumpable-environ %s\n", efd >= 0 ? "OK" : errname(errno));
	if (efd >= 0)
		close(efd);
	pid_t c = fork();
	if (c == 0) {
		if (syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
			_exit(1);
		printf("other-user %s\n", attach_and_peek(a));
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	const char *poke = "no-attach";
	if (syscall(SYS_ptrace, PTRACE_ATTACH, a, 0, 0) == 0 && waitpid(a, &st, __WALL) == a) {
		poke = syscall(SYS_ptrace, PTRACE_POKEDATA, a, &ptrace_secret, 1L) == 0
		           ? "OK"
		           : errname(errno);
		syscall(SYS_ptrace, PTRACE_DETACH, a, 0, 0);
	}
	printf("poke %s\n", poke);
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, &st, 0);
	waitpid(b, &st, 0);
	return 0;
}

/* One call on another process for cross-user: "OK" when it did what it asks of pid, else the
 * errno's name. */
static const char *xproc_call(const char *name, pid_t pid)
{
	long r = -1;
	if (!strcmp(name, "process_vm_readv")) {
		long w = 0;
		struct iovec l = {&w, sizeof(w)}, rv = {(void *)&ptrace_secret, sizeof(w)};
		r = syscall(SYS_process_vm_readv, pid, &l, 1, &rv, 1, 0);
		if (r == (long)sizeof(w) && w != ptrace_secret)
			return "bad-read";
	} else if (!strcmp(name, "process_vm_writev")) {
		long w = ptrace_secret; /* (the same word back: the target is unchanged) */
		struct iovec l = {&w, sizeof(w)}, rv = {(void *)&ptrace_secret, sizeof(w)};
		r = syscall(SYS_process_vm_writev, pid, &l, 1, &rv, 1, 0);
	} else if (!strcmp(name, "pidfd_getfd")) {
		int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0)
			return errname(errno);
		r = syscall(SYS_pidfd_getfd, pfd, 1, 0);
		int e = errno;
		if (r >= 0)
			close((int)r);
		close(pfd);
		errno = e;
	} else if (!strcmp(name, "kcmp")) {
		r = syscall(SYS_kcmp, getpid(), pid, 0 /* KCMP_FILE */, 1, 1);
	} else if (!strcmp(name, "get_robust_list")) {
		void *head;
		size_t len;
		r = syscall(SYS_get_robust_list, pid, &head, &len);
	} else if (!strcmp(name, "move_pages")) {
		void *page = (void *)((uintptr_t)&ptrace_secret & ~(uintptr_t)4095);
		int status = 0;
		r = syscall(SYS_move_pages, pid, 1, &page, NULL, &status, 0);
	} else if (!strcmp(name, "migrate_pages")) {
		unsigned long nodes = 1;
		r = syscall(SYS_migrate_pages, pid, 2, &nodes, &nodes);
	} else if (!strcmp(name, "prlimit64")) {
		struct rlimit old;
		r = syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, NULL, &old);
	} else if (!strcmp(name, "setpriority")) {
		r = syscall(SYS_setpriority, PRIO_PROCESS, pid, 0);
	} else if (!strcmp(name, "ioprio_set")) {
		r = syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, pid, (2 << 13) | 4);
	} else if (!strcmp(name, "sched_setscheduler")) {
		struct sched_param sp = {0};
		r = syscall(SYS_sched_setscheduler, pid, SCHED_OTHER, &sp);
	} else if (!strcmp(name, "sched_setparam")) {
		struct sched_param sp = {0};
		r = syscall(SYS_sched_setparam, pid, &sp);
	} else if (!strcmp(name, "sched_setattr")) {
		uint32_t attr[14] = {48, SCHED_OTHER}; /* size, policy; flags, nice, priority 0 */
		r = syscall(SYS_sched_setattr, pid, attr, 0);
	} else if (!strcmp(name, "sched_setaffinity")) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			return errname(errno);
		r = syscall(SYS_sched_setaffinity, pid, sizeof(set), &set);
	}
	return r >= 0 ? "OK" : errname(errno);
}

/*
 * `cross-user`: the calls that read or change another process (its memory, its fds, its limits,
 * its CPUs), on a paused process of the caller's own user (root in the sandbox): as that user
 * ("same-user"), then as nobody ("other-user"). One line each: CALL WHO RESULT.
 */
int cmd_cross_user(void)
{
	static const char *const calls[] = {
	    "process_vm_readv",  "process_vm_writev", "pidfd_getfd",   "kcmp",
	    "get_robust_list",   "move_pages",        "migrate_pages", "prlimit64",
	    "sched_setaffinity", "setpriority",       "ioprio_set",    "sched_setscheduler",
	    "sched_setparam",    "sched_setattr"};
	pid_t a = paused_child(false);
	if (a < 0)
		return 1;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		printf("%s same-user %s\n", calls[i], xproc_call(calls[i], a));
	pid_t c = fork();
	if (c == 0) {
		if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
		    syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
			_exit(1);
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			printf("%s other-user %s\n", calls[i], xproc_call(calls[i], a));
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
	return WIFEXITED(st) || WIFSIGNALED(st) ? 0 : 1;
}

/* Become nobody (ids and groups), or exit 1. */
static void become_nobody(void)
{
	if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
	    syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
		_exit(1);
}

/*
 * `prio-user`: a guest user's processes by its id (PRIO_USER, IOPRIO_WHO_USER), which the host
 * cannot tell apart (every guest task is one host id). nobody renices and moves to the idle I/O
 * class all of its own processes (a paused one and itself), which must leave root's alone; root
 * reads them by user, and may not renice them itself (no CAP_SYS_NICE). One line of results.
 */
int cmd_prio_user(void)
{
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t a = fork();
	if (a == 0) {
		become_nobody();
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char ch;
	if (a < 0 || read(p[0], &ch, 1) != 1)
		return 1;
	pid_t b = fork();
	if (b == 0) {
		become_nobody();
		long set = syscall(SYS_setpriority, PRIO_USER, 0, 5);
		long io = syscall(SYS_ioprio_set, 3 /* IOPRIO_WHO_USER */, 0, 3 << 13 /* idle */);
		_exit(set == 0 && io == 0 ? 0 : set != 0 ? 2 : 3);
	}
	int st;
	waitpid(b, &st, 0);
	long user = syscall(SYS_getpriority, PRIO_USER, 65534); /* 20 - nice */
	long child = syscall(SYS_getpriority, PRIO_PROCESS, a);
	long self = syscall(SYS_getpriority, PRIO_PROCESS, 0);
	long io_child = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, a);
	long io_self = syscall(SYS_ioprio_get, 1, 0);
	long root_set = syscall(SYS_setpriority, PRIO_USER, 65534, 6);
	const char *root_r = root_set == 0 ? "OK" : errname(errno);
	long none = syscall(SYS_getpriority, PRIO_USER, 4242);
	printf("nobody-sets %d user %ld child %ld self %ld child-class %ld self-class %ld "
	       "root-sets %s no-user %s\n",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1, user, child, self, io_child >> 13,
	       io_self >> 13, root_r, none < 0 ? errname(errno) : "found");
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	return 0;
}

/*
 * signal-storm N [LIMIT]: a child opens and closes a file over and over (every open an fd the
 * sentry installs; under a hard fd limit LIMIT below 1023, on the ptrace platform, several calls
 * the sentry runs in the child from user mode) while its parent sigqueue()s it N real-time
 * signals, each carrying its number. Every signal must reach the child's handler once, with its
 * value, SI_QUEUE and the parent's pid, whenever it arrived: a signal that came while the
 * sentry ran its calls was taken from the task and only the first queued again, by tkill
 * (another code, no value). Prints "signal-storm N got N bad 0 lost 0" on success.
 */
#define STORM_MAX 4096
static volatile sig_atomic_t storm_seen[STORM_MAX + 1];
static volatile sig_atomic_t storm_got, storm_bad;
static pid_t storm_sender;

static void storm_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int v = si->si_value.sival_int;
	if (si->si_code != SI_QUEUE || si->si_pid != storm_sender || v < 1 || v > STORM_MAX ||
	    storm_seen[v]) {
		storm_bad++;
		return;
	}
	storm_seen[v] = 1;
	storm_got++;
}

int cmd_signal_storm(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 0;
	if (n < 1 || n > STORM_MAX)
		return 2;
	int limit = argc > 1 ? atoi(argv[1]) : 0;
	int ready[2], result[2];
	if (pipe(ready) < 0 || pipe(result) < 0)
		return 1;
	storm_sender = getpid();
	struct sigaction sa = {.sa_sigaction = storm_handler, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL) < 0)
		return 1;
	/* (before the fork: the child is born under it, as the sentry sees at its first stop) */
	struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
	if (limit > 0 && setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 3;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* Until every signal came (or 20 s passed): opens, each an install. */
		for (long i = 0; storm_got + storm_bad < n && i < 2000000; i++) {
			int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				close(fd);
			if (i % 1000 == 0) {
				struct timespec ts;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				static time_t start;
				if (!start)
					start = ts.tv_sec;
				if (ts.tv_sec - start > 20)
					break;
			}
		}
		int out[2] = {storm_got, storm_bad};
		_exit(write(result[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(ready[1]);
	close(result[1]);
	char c;
	if (read(ready[0], &c, 1) != 1)
		return 1;
	for (int v = 1; v <= n; v++) {
		union sigval val = {.sival_int = v};
		while (sigqueue(pid, SIGRTMIN, val) < 0) {
			if (errno != EAGAIN)
				return 1;
			usleep(1000); /* the queue is full: the child takes some first */
		}
	}
	int got[2] = {0, 0};
	ssize_t k = read(result[0], got, sizeof(got));
	int st;
	waitpid(pid, &st, 0);
	if (k != sizeof(got) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("signal-storm child failed (status %#x)\n", st);
		return 1;
	}
	printf("signal-storm %d got %d bad %d lost %d\n", n, got[0], got[1], n - got[0] - got[1]);
	return 0;
}

/*
 * kill-eintr N: stops and continues a child of three threads N times with kill(2), under a
 * SIGCHLD handler without SA_RESTART (as Python installs its handlers), and counts the kills
 * that failed with EINTR, which Linux never gives (kill does not sleep). On the seccomp platform
 * the SIGCHLD of the child's stop can land while the next kill waits for the sentry to take it:
 * the call then ends in -ERESTARTSYS, which the sentry turns into a restart at the signal's
 * stop unless the host itself may have interrupted the call. Prints "kill-eintr N eintr 0".
 */
static volatile sig_atomic_t chld_seen;

static void on_chld(int sig)
{
	(void)sig;
	chld_seen++;
}

/* Starts n threads running fn (they end with the process); false when one cannot be made. */
static bool start_threads(void *(*fn)(void *), int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, fn, NULL) != 0)
			return false;
	}
	return true;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int cmd_kill_eintr(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 0;
	if (n < 1)
		return 2;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (!start_threads(spin_thread, 2))
			_exit(1);
		spin_thread(NULL);
	}
	struct sigaction sa = {.sa_handler = on_chld}; /* (no SA_RESTART) */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	int eintr = 0, other = 0;
	for (int i = 0; i < n; i++) {
		int sigs[2] = {SIGSTOP, SIGCONT};
		for (int k = 0; k < 2; k++)
			if (kill(pid, sigs[k]) < 0) {
				if (errno == EINTR)
					eintr++;
				else
					other++;
			}
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	printf("kill-eintr %d eintr %d%s\n", n, eintr, other ? " (other errors)" : "");
	return 0;
}

/*
 * stop-hold N [LIMIT]: a child of two threads opens and closes a file over and over (every open an
 * fd the sentry installs; under a hard fd limit LIMIT below 1023, on the ptrace platform, several
 * calls the sentry runs in the thread from user mode), counting its opens in memory it shares
 * with its parent, while the parent stops it (SIGSTOP) N times. Once waitpid says it stopped,
 * no thread of it may run: the count must not move in the 20 ms the parent watches it, as on
 * Linux. A group-stop that reached the thread while the sentry ran its calls was resumed past,
 * and the thread ran on in a stopped process. Right after each SIGCONT returns, /proc must no
 * longer show the child stopped (the sentry learns of the SIGCONT only later). Prints
 * "stop-hold N ran 0 stopped 0" (ran: the stops in which the count moved; stopped: the
 * SIGCONTs after which the child's state still read T).
 */

char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return '?';
	buf[r] = 0;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : '?';
}
static volatile long *hold_count;

static void *hold_opener(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		if (hold_count)
			__atomic_add_fetch(hold_count, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * open-loop [THREADS]: THREADS threads (default 1) open and close a file forever, every open an
 * fd the sentry installs: a process the sentry is always busy in, for the tests that kill it.
 */
int cmd_open_loop(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 1;
	if (!start_threads(hold_opener, n - 1))
		return 1;
	hold_opener(NULL);
	return 0;
}

int cmd_stop_hold(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 0;
	if (n < 1)
		return 2;
	int limit = argc > 1 ? atoi(argv[1]) : 0;
	struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
	if (limit > 0 && setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 3;
	hold_count = mmap(NULL, sizeof(*hold_count), PROT_READ | PROT_WRITE,
	                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (hold_count == MAP_FAILED)
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (!start_threads(hold_opener, 1))
			_exit(1);
		hold_opener(NULL);
	}
	int ran = 0, shown = 0, st;
	for (int i = 0; i < n; i++) {
		struct timespec run = {0, (1 + i % 5) * 1000000L}, watch = {0, 20000000L};
		nanosleep(&run, NULL);
		if (kill(pid, SIGSTOP) < 0 || waitpid(pid, &st, WUNTRACED) != pid ||
		    !WIFSTOPPED(st))
			return 1;
		long before = __atomic_load_n(hold_count, __ATOMIC_RELAXED);
		nanosleep(&watch, NULL);
		if (__atomic_load_n(hold_count, __ATOMIC_RELAXED) != before)
			ran++;
		if (kill(pid, SIGCONT) < 0)
			return 1;
		char state = proc_state(pid);
		shown += state == 'T' || state == 't';
		if (waitpid(pid, &st, WCONTINUED) != pid)
			return 1;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("stop-hold %d ran %d stopped %d\n", n, ran, shown);
	return 0;
}

/*
 * exec-threads N: N times, a child of three threads execs /bin/true while its two other threads
 * open and close a file in a loop (under an fd limit of 256, so that on the ptrace platform the
 * sentry runs several calls in them for each open). The execve kills them wherever they are,
 * in the middle of the sentry's calls too, which the sentry must take quietly: it printed
 * "installing an fd in task N failed: Bad address" about once in 150 execs. Prints
 * "exec-threads N bad 0" (bad: children that did not exit 0).
 */
int cmd_exec_threads(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 0;
	if (n < 1)
		return 2;
	struct rlimit rl = {256, 256};
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 3;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (!start_threads(hold_opener, 2))
				_exit(1);
			struct timespec ts = {0, (i % 7) * 300000L};
			nanosleep(&ts, NULL);
			execl("/bin/true", "true", (char *)NULL);
			_exit(9);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	printf("exec-threads %d bad %d\n", n, bad);
	return 0;
}
