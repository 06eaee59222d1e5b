/* LeakSanitizer's check at exit: a block only another thread's stack points to is not a leak
 * (the check must read that thread's registers and stack, stopped), one lost with "lose" is. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int ready;

static void *keeper(void *arg)
{
	(void)arg;
	char *volatile p = malloc(64);
	p[0] = 1;
	ready = 1;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	pthread_create(&t, NULL, keeper, NULL);
	while (!ready)
		usleep(1000);
	if (argc > 1 && strcmp(argv[1], "lose") == 0) {
		char *volatile q = malloc(32);
		q[0] = 2;
		q = NULL;
	}
	printf("done\n");
	return 0;
}
