/* cbox-bench-baseline: the bare cost of one trapped syscall, with no sandbox logic at all.
 *
 * These are the floors the sentry is compared against: an emulated getppid under cbox should cost
 * little more than the raw mechanism it is built on. Each mode traps getppid in a child and
 * answers it with a fixed value (4242) that the child checks, so a broken answer path shows up as
 * an error instead of a fast, meaningless number.
 *   sysemu  N  a tracer (PTRACE_TRACEME) stops the child at each syscall with PTRACE_SYSEMU, pokes
 *              the return value into rax and resumes: ns per round trip, timed in the tracer.
 *   unotify N  the child's seccomp filter returns SECCOMP_RET_USER_NOTIF for getppid; the parent
 *              answers each notification by value: ns per round trip, timed in the parent.
 *   sigsys  N  the filter returns SECCOMP_RET_TRAP; an in-process SIGSYS handler sets rax.
 * Output: one line "mode ns_per_op".
 */
#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The answer every mode gives to getppid; the child exits with CHILD_BAD_ANSWER if it sees
 * anything else. */
#define ANSWER           4242
#define CHILD_BAD_ANSWER 3

/* A broken answer path would otherwise block the parent forever in NOTIF_RECV or waitpid. */
#define WATCHDOG_SECONDS 300

/* The benchmark child, killed by the watchdog (never the process group: that is the caller's). */
static volatile pid_t child_pid;

static void watchdog(int sig)
{
	static const char msg[] = "cbox-bench-baseline: watchdog: no progress, giving up\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	_exit(1);
}

/* fork() that remembers the child for the watchdog. */
static pid_t fork_child(void)
{
	pid_t pid = fork();

	if (pid > 0)
		child_pid = pid;
	return pid;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void print_result(const char *mode, long long ns, long n)
{
	printf("%s %.1f\n", mode, (double)ns / (double)n);
	fflush(stdout);
}

/* Child side of every mode: count getppid calls, each of which must return ANSWER. */
static void child_loop(long count)
{
	for (long i = 0; i < count; i++)
		if (syscall(SYS_getppid) != ANSWER)
			syscall(SYS_exit_group, CHILD_BAD_ANSWER);
}

/* Waits for pid and reports whether it exited with status 0. */
static int reap(pid_t pid, const char *mode)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_BAD_ANSWER)
		fprintf(stderr, "cbox-bench-baseline: %s: child got a wrong getppid answer\n",
		        mode);
	else
		fprintf(stderr, "cbox-bench-baseline: %s: child failed (status 0x%x)\n", mode, st);
	return -1;
}

/* Installs a filter that returns `action` for getppid and allows everything else. The benchmark
 * child is our own code, so allowing the rest is fine: this measures the mechanism, not a policy.
 * Another architecture's getppid number is not matched, hence the arch check. */
static int install_filter(unsigned int action, unsigned int flags)
{
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, action),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* Tracer loop for sysemu: answers getppid stops until the child's exit_group stop. */
static int sysemu_trace(pid_t pid, long warm, long n)
{
	long count = 0;
	long long t0 = 0;
	int st;

	for (;;) {
		if (ptrace(PTRACE_SYSEMU, pid, 0, 0) < 0 || waitpid(pid, &st, 0) < 0) {
			perror("sysemu: ptrace/waitpid");
			return -1;
		}
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			fprintf(stderr, "sysemu: unexpected child state 0x%x\n", st);
			return -1;
		}
		long nr =
		    ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user_regs_struct, orig_rax), 0);
		if (nr == SYS_exit_group || nr == SYS_exit)
			break;
		if (nr != SYS_getppid) {
			/* A libc call between the SIGSTOP and the loop (raise() restores the
			 * signal mask): skipped by SYSEMU, answered with success. */
			ptrace(PTRACE_POKEUSER, pid, offsetof(struct user_regs_struct, rax), 0);
			continue;
		}
		if (count == warm)
			t0 = now_ns();
		count++;
		ptrace(PTRACE_POKEUSER, pid, offsetof(struct user_regs_struct, rax), ANSWER);
	}
	long long t1 = now_ns();
	if (count != warm + n) {
		fprintf(stderr, "sysemu: child stopped after %ld of %ld calls (wrong answer?)\n",
		        count, warm + n);
		return -1;
	}
	print_result("sysemu", t1 - t0, n);
	return 0;
}

static int bench_sysemu(long warm, long n)
{
	pid_t pid = fork_child();
	int ret;

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0) {
			perror("PTRACE_TRACEME");
			_exit(1);
		}
		raise(SIGSTOP);
		child_loop(warm + n);
		syscall(SYS_exit_group, 0); /* the tracer ends the benchmark at this stop */
		_exit(0);
	}
	if (waitpid(pid, &ret, 0) < 0 || !WIFSTOPPED(ret)) {
		fprintf(stderr, "sysemu: child did not stop (ptrace not permitted?)\n");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	/* EXITKILL: if this tracer dies mid-benchmark, the child must not run on untraced. */
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL);
	ret = sysemu_trace(pid, warm, n);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return ret;
}

static int send_fd(int sock, int fd)
{
	char byte = 'f';
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	int fd;

	if (r == 0)
		errno = EPIPE; /* the child died before sending its listener */
	if (r != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c == NULL || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) {
		errno = EPROTO;
		return -1;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Supervisor loop for unotify: answers warm + n + 1 notifications, timing the middle n. */
static int unotify_answer(int lfd, long warm, long n)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	long long t0 = 0, t1 = 0;

	for (long i = 0; i <= warm + n; i++) {
		memset(&req, 0, sizeof(req)); /* RECV fails with EINVAL on a dirty buffer */
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			perror("SECCOMP_IOCTL_NOTIF_RECV");
			return -1;
		}
		if (i == warm)
			t0 = now_ns();
		else if (i == warm + n)
			t1 = now_ns();
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.val = ANSWER;
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0) {
			perror("SECCOMP_IOCTL_NOTIF_SEND");
			return -1;
		}
	}
	print_result("unotify", t1 - t0, n);
	return 0;
}

static int bench_unotify(long warm, long n)
{
	int sv[2], lfd, ret;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return -1;
	}
	pid = fork_child();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		lfd = install_filter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		if (lfd < 0 || send_fd(sv[1], lfd) < 0) {
			perror("unotify: install filter / send listener");
			_exit(1);
		}
		close(lfd);
		child_loop(warm + n + 1);
		_exit(0);
	}
	close(sv[1]);
	lfd = recv_fd(sv[0]);
	close(sv[0]);
	if (lfd < 0) {
		perror("unotify: receive listener");
		reap(pid, "unotify");
		return -1;
	}
	ret = unotify_answer(lfd, warm, n);
	close(lfd); /* a child still waiting for an answer now gets ENOSYS and exits */
	if (reap(pid, "unotify") < 0)
		ret = -1;
	return ret;
}

static void sigsys_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_RAX] = ANSWER;
}

static int bench_sigsys(long warm, long n)
{
	pid_t pid = fork_child();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		struct sigaction sa = {.sa_sigaction = sigsys_handler, .sa_flags = SA_SIGINFO};
		long long t0;

		if (sigaction(SIGSYS, &sa, NULL) < 0 || install_filter(SECCOMP_RET_TRAP, 0) < 0) {
			perror("sigsys: install handler / filter");
			_exit(1);
		}
		child_loop(warm);
		t0 = now_ns();
		child_loop(n);
		print_result("sigsys", now_ns() - t0, n);
		_exit(0);
	}
	return reap(pid, "sigsys");
}

static long parse_count(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > LONG_MAX / 4)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: cbox-bench-baseline sysemu|unotify|sigsys [N]\n"
	                            "Prints \"mode ns_per_round_trip\" for N trapped getppid calls "
	                            "(default 10000) after a warm-up of N/10.\n";
	long n = 10000, warm;
	int ret;

	if (argc < 2 || argc > 3) {
		fputs(usage, stderr);
		return 2;
	}
	if (argc == 3 && (n = parse_count(argv[2])) < 0) {
		fprintf(stderr, "cbox-bench-baseline: N must be a positive integer, got '%s'\n",
		        argv[2]);
		return 2;
	}
	warm = n / 10 > 0 ? n / 10 : 1;
	signal(SIGALRM, watchdog);
	alarm(WATCHDOG_SECONDS);
	if (strcmp(argv[1], "sysemu") == 0)
		ret = bench_sysemu(warm, n);
	else if (strcmp(argv[1], "unotify") == 0)
		ret = bench_unotify(warm, n);
	else if (strcmp(argv[1], "sigsys") == 0)
		ret = bench_sigsys(warm, n);
	else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	} else {
		fprintf(stderr, "cbox-bench-baseline: unknown mode '%s'\n%s", argv[1], usage);
		return 2;
	}
	return ret < 0 ? 1 : 0;
}
