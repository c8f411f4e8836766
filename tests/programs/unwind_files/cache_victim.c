/*
 * A stack across three files besides the executable's text, so that its
 * whole walks need the VMAs earlier samples looked up (the walker finds at
 * most one per sample): main -> qsort (libc) -> cv_compare (the program)
 * -> cv_leaf -> cbrt (libm). Runs argv[1] ms. Built without frame pointers.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

volatile double cv_sink;
static double cv_until;

static double cv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) double cv_leaf(double x)
{
	double s = 0;

	for (int i = 1; i < 4000; i++)
		s += cbrt(x + i);
	return s;
}

__attribute__((noinline)) int cv_compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	cv_sink += cv_leaf(x);
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double v[64];

	cv_until = cv_now() + (argc > 1 ? atof(argv[1]) : 3000.0) / 1000.0;
	while (cv_now() < cv_until) {
		for (int i = 0; i < 64; i++)
			v[i] = (double)((i * 7919) % 64);
		qsort(v, 64, sizeof(v[0]), cv_compare);
	}
	return 0;
}
