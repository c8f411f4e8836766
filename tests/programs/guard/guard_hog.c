/*
 * A process whose samples are as expensive as a DWARF walk can be: two
 * functions calling each other argv[2] (default 300) deep, past
 * --max-depth, then spinning for argv[1] seconds (default 10), in argv[3]
 * threads (default 1: more take a larger part of a shared CPU). Built -O2
 * -fomit-frame-pointer: every frame needs a table row, and the return
 * address alternates between two call sites, so the walker's one-row cache
 * never hits and each frame costs a row search.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long hog_sink;

static double hog_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long hog_spin(double seconds)
{
	double end = hog_now() + seconds;
	unsigned long x = hog_sink;

	while (hog_now() < end) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	return x;
}

unsigned long hog_b(int depth, double seconds);

/* The work after each call keeps the calls from becoming jumps. */
__attribute__((noinline)) unsigned long hog_a(int depth, double seconds)
{
	unsigned long r;

	if (depth <= 1)
		return hog_spin(seconds);
	r = hog_b(depth - 1, seconds);
	hog_sink += r;
	return r + (unsigned long)depth;
}

__attribute__((noinline)) unsigned long hog_b(int depth, double seconds)
{
	unsigned long r;

	if (depth <= 1)
		return hog_spin(seconds);
	r = hog_a(depth - 1, seconds);
	hog_sink ^= r;
	return r * 3 + (unsigned long)depth;
}

static double hog_seconds;
static int hog_depth;

static void *hog_thread(void *arg)
{
	(void)arg;
	hog_sink += hog_a(hog_depth, hog_seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t t[16];
	int i;

	hog_seconds = argc > 1 ? atof(argv[1]) : 10.0;
	hog_depth = argc > 2 ? atoi(argv[2]) : 300;
	if (threads < 1 || threads > 16)
		return 2;
	for (i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, hog_thread, NULL) != 0)
			return 1;
	hog_thread(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
