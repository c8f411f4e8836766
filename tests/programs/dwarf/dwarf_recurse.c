/*
 * Deep recursion for the --max-depth test: dw_recurse calls itself argv[2]
 * (default 200) times, then spins for argv[1] seconds (default 10).
 * Built -O2 -fomit-frame-pointer; the work after each call keeps the
 * recursion from becoming a loop.
 *   dwarf_recurse SECONDS DEPTH THREADS alternate
 * runs THREADS threads (default 1) and, with "alternate", makes dw_recurse
 * and dw_alt call each other instead: the return address then alternates
 * between two call sites, so the walker's one-row cache never hits and
 * every frame costs a row search (the most expensive sample a process can
 * ask for, test_security_guard_share.sh).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

static int dw_alternate;

unsigned long dw_alt(int depth, double seconds);

__attribute__((noinline)) unsigned long dw_recurse(int depth, double seconds)
{
	unsigned long r;

	if (depth <= 1)
		return dw_bottom(seconds);
	r = dw_alternate ? dw_alt(depth - 1, seconds) : dw_recurse(depth - 1, seconds);
	dw_sink += r;
	return r + (unsigned long)depth;
}

/* The second call site of the alternate mode: it only calls back. */
__attribute__((noinline)) unsigned long dw_alt(int depth, double seconds)
{
	unsigned long r = dw_recurse(depth, seconds);

	dw_sink ^= r;
	return r * 3;
}

static double dw_seconds;
static int dw_depth;

static void *dw_thread(void *arg)
{
	(void)arg;
	dw_sink += dw_recurse(dw_depth, dw_seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t t[16];
	int i;

	dw_seconds = argc > 1 ? atof(argv[1]) : 10.0;
	dw_depth = argc > 2 ? atoi(argv[2]) : 200;
	dw_alternate = argc > 4 && strcmp(argv[4], "alternate") == 0;
	if (threads < 1 || threads > 16)
		return 2;
	for (i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, dw_thread, NULL) != 0)
			return 1;
	dw_thread(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
