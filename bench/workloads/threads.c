/*
 * Workload "threads": 64 busy threads (more than the CPUs, so they are
 * preempted and migrate), for argv[1] seconds; built -O2 without frame
 * pointers. Prints the total work done.
 */
#include <pthread.h>
#include <stdio.h>
#include "common.h"

#define NTHREADS 64

static double deadline;

__attribute__((noinline)) static unsigned long long thread_work(unsigned long long x)
{
	return wl_xorshift(x, 50000);
}

static void *worker(void *arg)
{
	unsigned long long *count = arg, x = 88172645463325252ULL + (unsigned long long)(size_t)arg, n = 0;

	while (wl_now() < deadline) {
		x = thread_work(x);
		n++;
	}
	*count = n + (x & 1);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long counts[NTHREADS] = {0}, total = 0;
	pthread_t threads[NTHREADS];
	int i;

	deadline = wl_now() + wl_seconds(argc, argv);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&threads[i], NULL, worker, &counts[i]);
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(threads[i], NULL);
		total += counts[i];
	}
	printf("%llu\n", total);
	return 0;
}
