/*
 * Shared by the bench workloads: a deadline in seconds from argv[1], the
 * work they burn (xorshift rounds), and the result line (one integer: units of work done) that bench/run reads.
 */
#ifndef BENCH_WORKLOAD_COMMON_H
#define BENCH_WORKLOAD_COMMON_H
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WL_MAXCPU 256

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU work that the compiler cannot fold away: rounds of xorshift64. */
static inline unsigned long long wl_xorshift(unsigned long long x, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static inline double wl_seconds(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 10.0;

	return s > 0 ? s : 10.0;
}
/* The CPU work at the bottom of the deep workloads' stacks. */
__attribute__((noinline, unused)) static unsigned long long wl_xorshift_work(unsigned long long x)
{
	return wl_xorshift(x, 20000);
}

/* fn on one thread per online CPU, each given its own counter; the counters' sum. */
static inline unsigned long long wl_run_per_cpu(void *(*fn)(void *))
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	unsigned long long counts[WL_MAXCPU] = {0}, total = 0;
	pthread_t threads[WL_MAXCPU];

	if (ncpu < 1 || ncpu > WL_MAXCPU)
		ncpu = 1;
	for (i = 0; i < ncpu; i++)
		pthread_create(&threads[i], NULL, fn, &counts[i]);
	for (i = 0; i < ncpu; i++) {
		pthread_join(threads[i], NULL);
		total += counts[i];
	}
	return total;
}
#endif
