/*
 * cbox-test-limits: the guest side of test_limits.sh. Static and free of sanitizers, like
 * cbox-test-guest, so that it runs the same under every tier.
 *   alloc MB   allocate and touch MB mebibytes, one at a time; prints "allocated MB"
 *   forks N    fork N children that wait for a signal; prints "forked X eagain Y other Z",
 *              then kills and reaps them (bounded: never more than N)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmd_alloc(long mb)
{
	for (long i = 0; i < mb; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			printf("malloc failed after %ld MiB\n", i);
			return 1;
		}
		memset(p, (int)i | 1, 1 << 20);
	}
	printf("allocated %ld\n", mb);
	return 0;
}

static int cmd_forks(long n)
{
	pid_t *kids = calloc((size_t)n, sizeof(*kids));
	long ok = 0, eagain = 0, other = 0;
	if (!kids)
		return 1;
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		if (pid > 0)
			kids[ok++] = pid;
		else if (errno == EAGAIN)
			eagain++;
		else
			other++;
	}
	printf("forked %ld eagain %ld other %ld\n", ok, eagain, other);
	fflush(stdout);
	for (long i = 0; i < ok; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < ok; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
	if (n > 0 && n <= 100000 && !strcmp(argv[1], "alloc"))
		return cmd_alloc(n);
	if (n > 0 && n <= 1000 && !strcmp(argv[1], "forks"))
		return cmd_forks(n);
	fprintf(stderr, "usage: cbox-test-limits alloc MB | forks N (N <= 1000)\n");
	return 2;
}
