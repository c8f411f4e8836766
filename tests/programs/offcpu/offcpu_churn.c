/*
 * Load for the off-CPU throttle: THREADS threads that each block 1.2 ms (over
 * the default --off-cpu-min-us) at the bottom of a 48-deep recursion, again
 * and again for SECONDS: about 800 recorded switch-outs a second per thread,
 * each a deep stack to unwind, and next to no CPU. The test adds these until
 * the controller cuts the off-CPU probability.
 *   usage: offcpu_churn THREADS SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define CHURN_DEPTH 48

static double seconds;

__attribute__((noinline)) static void churn_block(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 1200000};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void churn_down(int depth)
{
	if (depth > 0)
		churn_down(depth - 1);
	else
		churn_block();
	__asm__ volatile("" ::: "memory"); /* not a tail call: every frame stays */
}

static void *churn_thread(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		churn_down(CHURN_DEPTH);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t th[64];

	seconds = argc > 2 ? atof(argv[2]) : 10.0;
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, churn_thread, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
