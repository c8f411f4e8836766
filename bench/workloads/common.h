/*
 * Shared by the bench workloads: a deadline in seconds from argv[1], the
 * work they burn (xorshift rounds), and the result line (one integer: units of work done) that bench/run reads.
 */
#ifndef BENCH_WORKLOAD_COMMON_H
#define BENCH_WORKLOAD_COMMON_H
#include <stdlib.h>
#include <time.h>

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
#endif
