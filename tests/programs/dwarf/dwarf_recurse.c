/*
 * Deep recursion for the --max-depth test: dw_recurse calls itself argv[2]
 * (default 200) times, then spins for argv[1] seconds (default 10).
 * Built -O2 -fomit-frame-pointer; the work after each call keeps the
 * recursion from becoming a loop.
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long dw_sink;

static double dw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long dw_bottom(double seconds)
{
	double end = dw_now() + seconds;
	unsigned long x = dw_sink;

	while (dw_now() < end) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	return x;
}

__attribute__((noinline)) unsigned long dw_recurse(int depth, double seconds)
{
	unsigned long r;

	if (depth <= 1)
		return dw_bottom(seconds);
	r = dw_recurse(depth - 1, seconds);
	dw_sink += r;
	return r + (unsigned long)depth;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10.0;
	int depth = argc > 2 ? atoi(argv[2]) : 200;

	dw_sink = dw_recurse(depth, seconds);
	return 0;
}
