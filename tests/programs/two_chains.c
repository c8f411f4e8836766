/*
 * Test workload: burns CPU in two known call chains, about 70% / 30%.
 *   main -> chain_a_outer -> chain_a_inner -> leaf_a   (70% of its CPU time)
 *   main -> chain_b_outer -> leaf_b                     (30%)
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

/* This thread's CPU time: the slices are of CPU time, so that time the
 * thread spends preempted (a busy or stolen CPU) does not shift the 70/30
 * split the tests check against on-CPU samples. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spin for `seconds` of CPU time doing arithmetic (no syscalls in the loop body). */
static void __attribute__((noinline)) spin(double seconds)
{
	double end = cpu_s() + seconds;
	unsigned long x = sink;

	while (cpu_s() < end) {
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

	unsigned long r = 88172645463325252UL;

	while (now_s() < end) {
		/* A cycle of 5-15 ms, A for 70% of it: never a steady multiple
		 * of the sampling period, whose samples would then fall at the
		 * same point of every cycle and see one chain only. */
		double cycle;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		cycle = 0.005 + 0.010 * (double)(r % 1000) / 1000.0;
		chain_a_outer(0.7 * cycle);
		chain_b_outer(0.3 * cycle);
	}
	return 0;
}
