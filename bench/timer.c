/* cbox-bench-time: the wall time of one run of a command, and nothing else.
 *
 *   cbox-bench-time SECONDS PROGRAM [ARGS...]
 *
 * Runs PROGRAM (searched in PATH) with ARGS, this process's environment and its stdin, stdout and
 * stderr, and writes the nanoseconds from just before the fork to the end of the wait, as one
 * line, to fd 3 (opened by the caller: `v=$(cbox-bench-time 60 true 3>&1 >/dev/null)`). fd 3 is
 * closed in the command.
 *
 * This is what `hyperfine -N --runs 1` measures, so that a row's figure is the program's own time:
 * timing from the shell around `env -i ... timeout ... PROGRAM` also counted the start of env and
 * timeout, ~6 ms on the nested VM where the programs run in 28 ms natively, which added the same
 * constant to every column and made each ratio to native look smaller than it is. The caller puts
 * env and setpriv before this program, where they are not timed.
 *
 * After SECONDS the command gets SIGTERM and, 10 s later, SIGKILL, as `timeout --kill-after=10`.
 * Exit status: the command's (128+N when killed by signal N), 124 when it timed out, 127 when it
 * could not be run (126 when found but not executable), 2 for bad arguments; no time is written
 * unless the command exited with status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RESULT_FD      3
#define KILL_AFTER_SEC 10

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Waits up to ms (-1: no limit) for the child behind pidfd to end: 1 if it did, 0 if not. */
static int ended_within(int pidfd, int ms)
{
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};
	for (;;) {
		int r = poll(&pf, 1, ms);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return 1; /* cannot watch it: the wait itself decides */
	}
}

static int status_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	char *end;
	long secs = argc >= 3 ? strtol(argv[1], &end, 10) : 0;
	if (argc < 3 || *end != '\0' || secs <= 0 || secs > 86400) {
		fprintf(stderr, "usage: cbox-bench-time SECONDS PROGRAM [ARGS...] 3>RESULT\n"
		                "  SECONDS: a time limit of 1 to 86400\n");
		return 2;
	}
	if (fcntl(RESULT_FD, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "cbox-bench-time: fd 3, where the time goes, is not open\n");
		return 2;
	}
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		perror("cbox-bench-time: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		int e = errno;
		fprintf(stderr, "cbox-bench-time: %s: %s\n", argv[2], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	/* (pidfd_open: Linux 5.3; without it the wait below has no time limit.) */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool timed_out = false;
	if (pidfd >= 0 && !ended_within(pidfd, (int)(secs * 1000))) {
		timed_out = true;
		kill(pid, SIGTERM);
		if (!ended_within(pidfd, KILL_AFTER_SEC * 1000))
			kill(pid, SIGKILL);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			perror("cbox-bench-time: waitpid");
			return 127;
		}
	}
	long long t1 = now_ns();
	if (timed_out) {
		fprintf(stderr, "cbox-bench-time: %s timed out after %ld s\n", argv[2], secs);
		return 124;
	}
	if (status_of(st) != 0)
		return status_of(st);
	char line[32];
	int n = snprintf(line, sizeof(line), "%lld\n", t1 - t0);
	if (write(RESULT_FD, line, (size_t)n) != n) {
		perror("cbox-bench-time: writing the time to fd 3");
		return 2;
	}
	return 0;
}
