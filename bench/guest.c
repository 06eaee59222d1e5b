/* cbox-bench-guest: the microbenchmarks run natively and inside every sandbox.
 *
 * One static multi-call binary, so that every configuration runs exactly the same code and the
 * sandbox pays no dynamic-loader cost. Each subcommand runs its operation a few times to warm up
 * (page faults, dentry caches, the sentry's own caches), then N times under CLOCK_MONOTONIC, and
 * prints one line "name ns_per_op". Clock reads go through the vDSO, so the timing itself makes
 * no syscall that a sandbox would have to trap.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The file the open/stat benchmarks use: present on every Debian host and in runsc/bwrap/cbox
 * views of the host root. */
#define BENCH_FILE "/etc/hostname"

/* write-read: the file it creates in the current directory (the sandbox's writable working
 * folder), and its unit: one operation writes and reads back one MiB. */
#define WR_FILE  "cbox-bench-write-read.tmp"
#define WR_CHUNK (1024 * 1024)

/* fork-exec: a dynamic program every Debian host has, so the exec goes through the dynamic
 * loader as real programs do. */
#define EXEC_PROG "/bin/true"

struct bench {
	const char *name;
	/* Runs the operation n times; returns 0, or -1 with errno set and a message printed. */
	int (*run)(long n);
	/* One line for --help; pipe-pingpong counts a round trip as one operation. */
	const char *help;
	/* N when none is given, and the largest N accepted (write-read: MiB on the disk). */
	long default_n, max_n;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int run_getppid(long n)
{
	for (long i = 0; i < n; i++) {
		/* The raw syscall: glibc caches nothing for getppid today, but the benchmark must
		 * not depend on that. */
		if (syscall(SYS_getppid) < 0) {
			perror("getppid");
			return -1;
		}
	}
	return 0;
}

static int run_open_close(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = open(BENCH_FILE, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("open " BENCH_FILE);
			return -1;
		}
		if (close(fd) < 0) {
			perror("close");
			return -1;
		}
	}
	return 0;
}

static int run_stat(long n)
{
	struct stat st;

	for (long i = 0; i < n; i++) {
		if (stat(BENCH_FILE, &st) < 0) {
			perror("stat " BENCH_FILE);
			return -1;
		}
	}
	return 0;
}

/* Reads or writes exactly one byte, retrying on EINTR. */
static int xfer_byte(int fd, int do_write)
{
	char c = 'x';
	ssize_t r;

	do
		r = do_write ? write(fd, &c, 1) : read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r == 1)
		return 0;
	if (r == 0)
		errno = EPIPE;
	return -1;
}

static int wait_child(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			return -1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "cbox-bench-guest: %s child failed (status 0x%x)\n", what, status);
		return -1;
	}
	return 0;
}

/* sendmsg of 64 bytes (one iovec, no address) on a datagram socketpair, and the recv that
 * takes it: the filter cannot see inside a msghdr, so every sendmsg is trapped in cbox. */
static int run_sendmsg(long n)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return -1;
	}
	char buf[64] = {0};
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	int rc = 0;
	for (long i = 0; i < n && rc == 0; i++) {
		if (sendmsg(sv[0], &m, 0) != (ssize_t)sizeof(buf) ||
		    recv(sv[1], buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
			perror("sendmsg/recv");
			rc = -1;
		}
	}
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static int run_pipe_pingpong(long n)
{
	int ping[2], pong[2], failed = 0;
	pid_t pid;

	if (pipe2(ping, O_CLOEXEC) < 0 || pipe2(pong, O_CLOEXEC) < 0) {
		perror("pipe2");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		close(ping[1]);
		close(pong[0]);
		for (long i = 0; i < n; i++)
			if (xfer_byte(ping[0], 0) < 0 || xfer_byte(pong[1], 1) < 0)
				_exit(1);
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	for (long i = 0; i < n; i++) {
		if (xfer_byte(ping[1], 1) < 0 || xfer_byte(pong[0], 0) < 0) {
			perror("pipe-pingpong transfer");
			failed = 1;
			break;
		}
	}
	close(ping[1]);
	close(pong[0]);
	if (wait_child(pid, "pipe-pingpong") < 0 || failed)
		return -1;
	return 0;
}

static int run_fork_wait(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return -1;
		}
		if (pid == 0)
			_exit(0);
		if (wait_child(pid, "fork-wait") < 0)
			return -1;
	}
	return 0;
}

/* Checks that the len bytes read at file offset off match the pattern written (pat, repeated every
 * WR_CHUNK bytes). A read may return less than asked, so off need not be chunk-aligned. */
static int check_pattern(const char *got, size_t len, long long off, const char *pat)
{
	while (len > 0) {
		size_t at = (size_t)(off % WR_CHUNK), k = WR_CHUNK - at < len ? WR_CHUNK - at : len;

		if (memcmp(got, pat + at, k) != 0) {
			fprintf(stderr,
			        "cbox-bench-guest: " WR_FILE
			        " reads back wrong data near offset %lld\n",
			        off);
			return -1;
		}
		got += k;
		off += (long long)k;
		len -= k;
	}
	return 0;
}

/* Writes n MiB to WR_FILE in 1 MiB write() calls, closes it, reads it back in 1 MiB read() calls
 * and checks the size and the contents, then unlinks it. No fsync: the benchmark measures the
 * path through the sandbox to the page cache (where cbox, bwrap and native write to the host file
 * system, runsc writes into its own memory overlay), not the disk. */
static int run_write_read(long n)
{
	static char buf[WR_CHUNK], back[WR_CHUNK];
	long long total = 0;
	ssize_t r;
	int fd;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	fd = open(WR_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("open " WR_FILE " for writing (is the current directory writable?)");
		return -1;
	}
	for (long i = 0; i < n; i++) {
		for (size_t off = 0; off < sizeof(buf); off += (size_t)r) {
			r = write(fd, buf + off, sizeof(buf) - off);
			if (r < 0 && errno == EINTR)
				r = 0;
			else if (r <= 0) {
				perror("write " WR_FILE);
				close(fd);
				return -1;
			}
		}
	}
	if (close(fd) < 0) {
		perror("close " WR_FILE);
		return -1;
	}
	fd = open(WR_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("open " WR_FILE " for reading");
		return -1;
	}
	while ((r = read(fd, back, sizeof(back))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("read " WR_FILE);
			close(fd);
			return -1;
		}
		if (check_pattern(back, (size_t)r, total, buf) < 0) {
			close(fd);
			return -1;
		}
		total += r;
	}
	close(fd);
	if (unlink(WR_FILE) < 0) {
		perror("unlink " WR_FILE);
		return -1;
	}
	if (total != (long long)n * WR_CHUNK) {
		fprintf(stderr, "cbox-bench-guest: wrote %lld bytes, read back %lld\n",
		        (long long)n * WR_CHUNK, total);
		return -1;
	}
	return 0;
}

/* fork + execve(path, argv) with an empty environment + wait4, n times (fork-exec, exec). */
static int spawn_n(long n, const char *path, char *const argv[], const char *what)
{
	char *const envp[] = {NULL};

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return -1;
		}
		if (pid == 0) {
			execve(path, argv, envp);
			fprintf(stderr, "cbox-bench-guest: execve %s: %s\n", path, strerror(errno));
			_exit(127);
		}
		if (wait_child(pid, what) < 0)
			return -1;
	}
	return 0;
}

static int run_fork_exec(long n)
{
	char *const argv[] = {"true", NULL};

	return spawn_n(n, EXEC_PROG, argv, "fork-exec");
}

/* exec: the command of "exec N PROGRAM [ARGS...]", run N times with an empty environment (as
 * the programs table's outside runs get a small one): a program's own run in a sandbox that is
 * already up, which the outside rows add the sandbox's start to. */
static char **exec_argv;

static int run_exec(long n)
{
	return spawn_n(n, exec_argv[0], exec_argv, "exec");
}

static int run_true(long n)
{
	(void)n;
	return 0;
}

static const struct bench benches[] = {
    {"getppid", run_getppid, "raw getppid syscall (an emulated syscall under cbox)", 10000,
     LONG_MAX / 2},
    {"open-close", run_open_close, "open(\"" BENCH_FILE "\") + close", 10000, LONG_MAX / 2},
    {"stat", run_stat, "stat(\"" BENCH_FILE "\")", 10000, LONG_MAX / 2},
    {"pipe-pingpong", run_pipe_pingpong, "one byte each way between two processes", 10000,
     LONG_MAX / 2},
    {"sendmsg", run_sendmsg, "sendmsg of 64 bytes on a datagram socketpair + recv", 10000,
     LONG_MAX / 2},
    {"fork-wait", run_fork_wait, "fork + child _exit + wait4", 10000, LONG_MAX / 2},
    {"write-read", run_write_read,
     "write N MiB (default 64, at most 4096) to ./" WR_FILE ", read back (op: 1 MiB)", 64, 4096},
    {"fork-exec", run_fork_exec, "fork + execve " EXEC_PROG " + wait4 (default N 100)", 100,
     LONG_MAX / 2},
    {"exec", run_exec, "fork + execve PROGRAM [ARGS...] + wait4 (default N 20)", 20, LONG_MAX / 2},
    {"true", run_true, "nothing (startup is timed from outside)", 10000, LONG_MAX / 2},
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: cbox-bench-guest BENCH [N]\n"
	    "       cbox-bench-guest exec N PROGRAM [ARGS...]\n"
	    "Runs BENCH N times (default 10000 unless said) after a warm-up of N/10 and prints\n"
	    "\"BENCH ns_per_op\". BENCH is one of:\n");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		fprintf(out, "  %-14s %s\n", benches[i].name, benches[i].help);
}

/* Parses a positive iteration count; returns -1 on anything else. */
static long parse_count(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > LONG_MAX / 2)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	const struct bench *b = NULL;
	long n, warm;
	long long t0, t1;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			b = &benches[i];
	if (b == NULL) {
		fprintf(stderr, "cbox-bench-guest: unknown benchmark '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	if (b->run == run_exec) {
		if (argc < 4) {
			fprintf(stderr, "cbox-bench-guest: exec needs N and a PROGRAM\n");
			return 2;
		}
		exec_argv = &argv[3];
	} else if (argc > 3) {
		usage(stderr);
		return 2;
	}
	n = b->default_n;
	if (argc >= 3 && ((n = parse_count(argv[2])) < 0 || n > b->max_n)) {
		fprintf(stderr,
		        "cbox-bench-guest: N must be a positive integer of at most %ld, got '%s'\n",
		        b->max_n, argv[2]);
		return 2;
	}
	warm = n / 10 > 0 ? n / 10 : 1;
	if (b->run(warm) < 0)
		return 1;
	t0 = now_ns();
	if (b->run(n) < 0)
		return 1;
	t1 = now_ns();
	printf("%s %.1f\n", b->name, (double)(t1 - t0) / (double)n);
	return 0;
}
