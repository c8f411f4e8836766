/*
 * Benchmark workload: one busy thread per CPU doing integer arithmetic for
 * argv[1] seconds, then prints the total work done (iterations) so the
 * profiler's slowdown of the workload can be measured. Built without frame
 * pointers, like most of a distribution.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double duration;
static volatile int stop;

static void *spin_thread(void *arg)
{
	unsigned long long *count = arg, x = 88172645463325252ULL, n = 0;

	while (!stop) {
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		n++;
	}
	*count = n + (x & 1);
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long counts[256] = {0}, total = 0;
	pthread_t threads[256];
	struct timespec ts;
	long i;

	duration = argc > 1 ? atof(argv[1]) : 10.0;
	if (ncpu < 1 || ncpu > 256)
		ncpu = 1;
	for (i = 0; i < ncpu; i++)
		pthread_create(&threads[i], NULL, spin_thread, &counts[i]);
	ts.tv_sec = (time_t)duration;
	ts.tv_nsec = (long)((duration - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	stop = 1;
	for (i = 0; i < ncpu; i++) {
		pthread_join(threads[i], NULL);
		total += counts[i];
	}
	printf("%llu\n", total);
	return 0;
}
