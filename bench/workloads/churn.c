/*
 * Workload "churn": one spawner thread per online CPU starts argv[2]
 * (churn_child: ~1 ms of work, then exit) with posix_spawn and waits for
 * it, over and over, for argv[1] seconds: several hundred new processes a
 * second. Prints the number of children that ran.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

#define MAXCPU 256

extern char **environ;
static double deadline;
static const char *child;

static void *spawner(void *arg)
{
	unsigned long long *count = arg;
	char *argv[] = {(char *)child, NULL};

	while (wl_now() < deadline) {
		pid_t pid;
		int status;

		if (posix_spawn(&pid, child, NULL, NULL, argv, environ) != 0)
			break;
		waitpid(pid, &status, 0);
		(*count)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	unsigned long long counts[MAXCPU] = {0}, total = 0;
	pthread_t threads[MAXCPU];

	if (argc < 3) {
		fprintf(stderr, "usage: bench_churn SECONDS CHILD\n");
		return 2;
	}
	child = argv[2];
	if (ncpu < 1 || ncpu > MAXCPU)
		ncpu = 1;
	deadline = wl_now() + wl_seconds(argc, argv);
	for (i = 0; i < ncpu; i++)
		pthread_create(&threads[i], NULL, spawner, &counts[i]);
	for (i = 0; i < ncpu; i++) {
		pthread_join(threads[i], NULL);
		total += counts[i];
	}
	printf("%llu\n", total);
	return 0;
}
