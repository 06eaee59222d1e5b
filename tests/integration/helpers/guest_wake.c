/*
 * cbox-test-guest, what a signal does to the call it interrupts (see guest.c for the program),
 * which the sentry's tracing changes and sentry/restart.c and defer.c put back: cont-term
 * (SIGCONT then SIGTERM to a sleeping child), ignored-wake (a child's exit during waits without
 * a limit), short-write (and during blocking transfers), short-write-end (writes that end short
 * themselves, sending their own SIGPIPE or SIGXFSZ).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

/*
 * cont-term N: N times, a child with a SIGTERM handler (no SA_RESTART) sleeps in one
 * clock_nanosleep of 20 s, and its parent, once the child is in it (state S), sends it SIGCONT,
 * then SIGTERM, as psutil's terminate does. On Linux the SIGCONT (ignored) is dropped as it is
 * sent and the SIGTERM ends the sleep with EINTR, after which the child exits 0. Under ptrace
 * the SIGCONT wakes the child, its call is restarted once the sentry resumes it, and a SIGTERM
 * that came just then ran its handler and slept on. Prints "cont-term N slept-on K" (K: children
 * still asleep 3 s after their SIGTERM).
 */
static void note_term(int sig)
{
	(void)sig;
}

static int cont_term_child(int ready, volatile int *sleeping)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = note_term; /* (no SA_RESTART: the sleep must end with EINTR) */
	if (sigaction(SIGTERM, &sa, NULL) < 0)
		return 2;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 20;
	if (write(ready, "r", 1) != 1)
		return 2;
	*sleeping = 1;
	int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
	return r == EINTR ? 0 : 1;
}

/* A step of cont-term that went wrong, on stderr (the test shows it), and its exit status. */
static int cont_term_fail(const char *what, pid_t pid, int detail)
{
	fprintf(stderr, "cont-term: child %d: %s %d (%s)\n", (int)pid, what, detail,
	        strerror(errno));
	return 1;
}

int cmd_cont_term(int argc, char **argv)
{
	int n = argc > 0 ? atoi(argv[0]) : 0;
	if (n < 1)
		return 2;
	int slept_on = 0;
	volatile int *sleeping =
	    mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sleeping == MAP_FAILED)
		return cont_term_fail("mmap", 0, 0);
	for (int i = 0; i < n; i++) {
		*sleeping = 0;
		int p[2];
		if (pipe(p) < 0)
			return cont_term_fail("pipe", 0, 0);
		pid_t pid = fork();
		if (pid < 0)
			return cont_term_fail("fork", 0, 0);
		if (pid == 0) {
			close(p[0]);
			_exit(cont_term_child(p[1], sleeping));
		}
		close(p[1]);
		char c;
		if (read(p[0], &c, 1) != 1)
			return cont_term_fail("the child's ready byte", pid, 0);
		close(p[0]);
		/* Into its sleep: state S once it has said it is about to sleep. A fixed 1 ms was
		 * not always enough on a loaded machine: a SIGTERM that came before the sleep began
		 * ran the handler, and the child then slept its 20 s as it would on Linux (a test
		 * race, counted as a sentry's). Its state alone is not enough either: the sentry
		 * shows a task held at a trap as sleeping (S), the ready byte's write under
		 * --strict too, and the state read again just after could be R (the task let go on
		 * its way to the sleep), which failed the run. */
		char state = 0;
		for (int t = 0; t < 5000; t++) {
			if (*sleeping && (state = proc_state(pid)) == 'S')
				break;
			struct timespec tick = {0, 200000L};
			nanosleep(&tick, NULL);
		}
		if (state != 'S')
			return cont_term_fail("the child asleep within 1 s: state", pid, state);
		if (kill(pid, SIGCONT) < 0)
			return cont_term_fail("kill SIGCONT", pid, 0);
		/* (between the two, as python's Popen.send_signal polls first: a wait the
		 * sentry sees, which puts the SIGTERM just after it resumed the child) */
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return cont_term_fail("waitpid WNOHANG 0 before the SIGTERM", pid, 0);
		if (kill(pid, SIGTERM) < 0)
			return cont_term_fail("kill SIGTERM", pid, 0);
		int st = 0;
		pid_t w = 0;
		for (int t = 0; t < 3000 && (w = waitpid(pid, &st, WNOHANG)) == 0; t++) {
			struct timespec tick = {0, 1000000L};
			nanosleep(&tick, NULL);
		}
		if (w == 0) {
			slept_on++;
			fprintf(stderr, "cont-term: child %d still asleep 3 s after its SIGTERM\n",
			        (int)pid);
			/* (seconds to look at it before it is killed) */
			const char *hold = getenv("CBOX_CONT_TERM_HOLD");
			if (hold)
				sleep((unsigned)atoi(hold));
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		} else if (w != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			return cont_term_fail("an exit of 0 by EINTR: wait status", pid, st);
		}
	}
	printf("cont-term %d slept-on %d\n", n, slept_on);
	return 0;
}

/*
 * ignored-wake: a child's exit (SIGCHLD, ignored by default) during an epoll_wait without a
 * time limit, then during a sigwaitinfo, each ended later by what it waits for (a byte in a
 * pipe, a SIGUSR1). On Linux neither call sees the SIGCHLD; under ptrace it is queued and woke
 * both with EINTR. Prints "ignored-wake epoll 1 sigwaitinfo 10".
 */
static void exit_after(long us)
{
	if (fork() == 0) {
		struct timespec d = {0, us * 1000L};
		nanosleep(&d, NULL);
		_exit(0);
	}
}

int cmd_ignored_wake(void)
{
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || pipe(p) < 0)
		return 1;
	struct epoll_event ev = {.events = EPOLLIN};
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) < 0)
		return 1;
	exit_after(30000);
	if (fork() == 0) {
		struct timespec d = {0, 150000000L};
		nanosleep(&d, NULL);
		_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
	}
	int e = epoll_wait(ep, &ev, 1, -1);
	int e_err = errno;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t me = getpid();
	exit_after(30000);
	if (fork() == 0) {
		struct timespec d = {0, 150000000L};
		nanosleep(&d, NULL);
		_exit(kill(me, SIGUSR1) == 0 ? 0 : 1);
	}
	int w = sigwaitinfo(&set, NULL);
	int w_err = errno;
	while (wait(NULL) > 0)
		;
	printf("ignored-wake epoll %d%s%s sigwaitinfo %d%s%s\n", e, e < 0 ? " " : "",
	       e < 0 ? strerror(e_err) : "", w, w < 0 ? " " : "", w < 0 ? strerror(w_err) : "");
	return 0;
}

/*
 * short-write: blocking transfers of 1 MiB while two other children exit (SIGCHLD, ignored by
 * default) at 50 and 120 ms, the second during the rest's pieces: write and writev to a pipe, send
 * and sendmsg to a stream socket, each read only after 200 ms (the vectors with an empty element
 * and a cut inside an element); and recv and recvmsg with MSG_WAITALL from a stream socket written
 * in 16 parts 20 ms apart. On Linux each waits until all went; under ptrace the queued SIGCHLD cut
 * them short (at the pipe's 64 KiB, the socket's buffer, what had come). Every byte's place is
 * checked (a rest moved twice or out of order shows), and the caller's iovecs and msghdr are
 * checked unchanged. Prints "short-write write 1048576 writev 1048576 send 1048576 sendmsg 1048576
 * recv 1048576 recvmsg 1048576 all".
 */
enum { SW_N = 1 << 20 };

static unsigned char sw_byte(long i)
{
	return (unsigned char)(i * 7 % 251);
}

/* The bytes read in order from fd until its end, or -1 at the first one out of place. */
static long sw_read_all(int fd)
{
	static unsigned char b[65536];
	long total = 0;
	ssize_t r;
	while ((r = read(fd, b, sizeof(b))) > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (b[i] != sw_byte(total + i))
				return -1;
		total += r;
	}
	return r < 0 ? -1 : total;
}

/* The iovecs of buf the vector kinds use (an empty one, a cut inside one); whether they are
 * still so. */
static void sw_vector(unsigned char *buf, struct iovec iov[4])
{
	iov[0] = (struct iovec){buf, 1000};
	iov[1] = (struct iovec){buf + 1000, 0};
	iov[2] = (struct iovec){buf + 1000, SW_N / 2 - 1000};
	iov[3] = (struct iovec){buf + SW_N / 2, SW_N / 2};
}

static bool sw_vector_kept(const unsigned char *buf, const struct iovec iov[4],
                           const struct msghdr *mh)
{
	return iov[0].iov_len == 1000 && iov[2].iov_base == buf + 1000 &&
	       iov[3].iov_len == SW_N / 2 && mh->msg_iov == iov && mh->msg_iovlen == 4;
}

/* One blocking write of kind k (0 write, 1 writev, 2 send, 3 sendmsg) of buf: what it
 * returned, and in *got what its reader read (-1: out of place; -2: the vector changed). */
static ssize_t sw_write(int k, unsigned char *buf, long *got)
{
	int p[2], back[2];
	if ((k < 2 ? pipe(p) : socketpair(AF_UNIX, SOCK_STREAM, 0, p)) < 0 || pipe(back) < 0)
		return -1;
	exit_after(50000);
	exit_after(120000);
	if (fork() == 0) {
		close(p[1]);
		struct timespec d = {0, 200000000L};
		nanosleep(&d, NULL);
		long total = sw_read_all(p[0]);
		_exit(write(back[1], &total, sizeof(total)) == sizeof(total) ? 0 : 1);
	}
	close(p[0]);
	close(back[1]);
	struct iovec iov[4];
	sw_vector(buf, iov);
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 4};
	ssize_t w = k == 0   ? write(p[1], buf, SW_N)
	            : k == 1 ? writev(p[1], iov, 4)
	            : k == 2 ? send(p[1], buf, SW_N, MSG_NOSIGNAL)
	                     : sendmsg(p[1], &mh, MSG_NOSIGNAL);
	close(p[1]);
	if (read(back[0], got, sizeof(*got)) != sizeof(*got))
		*got = -1;
	close(back[0]);
	while (wait(NULL) > 0)
		;
	if (!sw_vector_kept(buf, iov, &mh))
		*got = -2;
	return w;
}

/* One MSG_WAITALL receive of kind k (4 recv, 5 recvmsg) into buf from a writer that sends
 * SW_N bytes in 16 parts: what it returned, and in *got the bytes in place (as sw_write). */
static ssize_t sw_recv(int k, unsigned char *buf, long *got)
{
	int p[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) < 0)
		return -1;
	exit_after(50000);
	exit_after(120000);
	if (fork() == 0) {
		close(p[0]);
		unsigned char *out = malloc(SW_N);
		if (!out)
			_exit(1);
		for (long i = 0; i < SW_N; i++)
			out[i] = sw_byte(i);
		struct timespec d = {0, 20000000L};
		for (int i = 0; i < 16; i++) {
			nanosleep(&d, NULL);
			if (write(p[1], out + i * (SW_N / 16), SW_N / 16) != SW_N / 16)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	memset(buf, 0, SW_N);
	struct iovec iov[4];
	sw_vector(buf, iov);
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 4};
	ssize_t r = k == 4 ? recv(p[0], buf, SW_N, MSG_WAITALL) : recvmsg(p[0], &mh, MSG_WAITALL);
	close(p[0]);
	while (wait(NULL) > 0)
		;
	*got = 0;
	while (*got < r && buf[*got] == sw_byte(*got))
		++*got;
	if (*got < r)
		*got = -1;
	if (!sw_vector_kept(buf, iov, &mh))
		*got = -2;
	return r;
}

int cmd_short_write(void)
{
	static const char *const kinds[] = {"write",   "writev", "send",
	                                    "sendmsg", "recv",   "recvmsg"};
	unsigned char *buf = malloc(SW_N);
	if (!buf)
		return 1;
	bool all = true;
	printf("short-write");
	for (int k = 0; k < 6; k++) {
		for (long i = 0; i < SW_N; i++)
			buf[i] = sw_byte(i);
		long got = -1;
		ssize_t n = k < 4 ? sw_write(k, buf, &got) : sw_recv(k, buf, &got);
		printf(" %s %zd", kinds[k], n);
		if (got != n)
			printf(" (in place %ld)", got);
		all &= got == n;
	}
	printf(" %s\n", all ? "all" : "wrong");
	free(buf);
	return 0;
}

/*
 * short-write-end: writes that end short by themselves, with the signal they send themselves
 * ignored, as python ignores SIGPIPE and SIGXFSZ. A blocking 1 MiB write to a pipe whose reader
 * exits at 200 ms without reading (another child exits at 50 ms: its SIGCHLD wakes the write,
 * which the sentry then writes on, as short-write) returns what the pipe held, and the next
 * write EPIPE; a 1 MiB write to a file under a 100000-byte RLIMIT_FSIZE returns 100000, and the
 * next EFBIG. The sentry took the SIGPIPE or SIGXFSZ for an outside signal that had cut the
 * write short and wrote on forever. Prints "short-write-end pipe room EPIPE file 100000 EFBIG".
 */
int cmd_short_write_end(void)
{
	enum { N = 1 << 20 };
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	alarm(30); /* (a write that never returns ends the test, not the run) */
	char *buf = calloc(1, N);
	int p[2];
	if (!buf || pipe(p) < 0)
		return 1;
	int room = fcntl(p[1], F_GETPIPE_SZ);
	exit_after(50000);
	if (fork() == 0) {
		close(p[1]);
		struct timespec d = {0, 200000000L};
		nanosleep(&d, NULL);
		_exit(0);
	}
	close(p[0]);
	ssize_t w = write(p[1], buf, N);
	ssize_t w2 = write(p[1], buf, N);
	int e2 = errno;
	close(p[1]);
	while (wait(NULL) > 0)
		;
	char pipe_res[32];
	if (w == room)
		snprintf(pipe_res, sizeof(pipe_res), "room");
	else
		snprintf(pipe_res, sizeof(pipe_res), "%zd of %d", w, room);

	char path[] = "/tmp/short-write-end.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	unlink(path);
	struct rlimit lim = {100000, RLIM_INFINITY};
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
		return 1;
	ssize_t f = write(fd, buf, N);
	ssize_t f2 = write(fd, buf, N);
	int fe2 = errno;
	close(fd);
	free(buf);
	printf("short-write-end pipe %s %s file %zd %s\n", pipe_res, w2 < 0 ? errname(e2) : "more",
	       f, f2 < 0 ? errname(fe2) : "more");
	return 0;
}
