/* A program for the debuggers' test (test_programs.sh, t_debuggers): a function to break in, a
 * thread, a fork, and, with an argument, a crash. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int counter;

static void *count(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		counter += i;
	return NULL;
}

int add(int a, int b)
{
	return a + b;
}

static int deref(int *p)
{
	return *p;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return deref(NULL);
	pthread_t t;
	pthread_create(&t, NULL, count, NULL);
	pthread_join(t, NULL);
	int sum = 0;
	for (int i = 0; i < 5; i++)
		sum = add(sum, i);
	if (fork() == 0) {
		printf("child\n");
		_exit(0);
	}
	printf("sum %d counter %d\n", sum, counter);
	return 0;
}
