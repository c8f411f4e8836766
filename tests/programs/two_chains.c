/*
 * Test workload: burns CPU in two known call chains, about 70% / 30%.
 *   main -> chain_a_outer -> chain_a_inner -> leaf_a   (7 of 10 slices)
 *   main -> chain_b_outer -> leaf_b                     (3 of 10 slices)
 * Built with frame pointers and without sibling-call optimisation so that
 * frame-pointer unwinding sees every frame. Runs for argv[1] seconds (default 10).
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spin for `seconds` of wall time doing arithmetic (no syscalls in the loop body). */
static void __attribute__((noinline)) spin(double seconds)
{
	double end = now_s() + seconds;
	unsigned long x = sink;

	while (now_s() < end) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	sink = x;
}

void __attribute__((noinline)) leaf_a(double s) { spin(s); sink++; }
void __attribute__((noinline)) chain_a_inner(double s) { leaf_a(s); sink++; }
void __attribute__((noinline)) chain_a_outer(double s) { chain_a_inner(s); sink++; }
void __attribute__((noinline)) leaf_b(double s) { spin(s); sink++; }
void __attribute__((noinline)) chain_b_outer(double s) { leaf_b(s); sink++; }

int main(int argc, char **argv)
{
	double duration = argc > 1 ? atof(argv[1]) : 10.0;
	double end = now_s() + duration;

	while (now_s() < end) {
		chain_a_outer(0.007);
		chain_b_outer(0.003);
	}
	return 0;
}
