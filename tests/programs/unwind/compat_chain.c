/*
 * A 32-bit (compat) process, built -m32 with frame pointers: main ->
 * c32_level1 -> c32_level2 -> c32_leaf, which spins, or with "sleep" spins
 * a millisecond and sleeps a millisecond in turn (off CPU in nanosleep under
 * the same chain). Its frames are 4 bytes: lowprof's walks read 8-byte words,
 * so its stacks are the kernel's 32-bit walk (bpf/unwind_fp.bpf.h,
 * fp_walk_compat; tests/integration/test_unwind_fp.sh).
 *   usage: compat_chain SECONDS [sleep]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static int sleeping;

static double c32_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void c32_leaf(void)
{
	double until = c32_now() + 0.001;

	while (c32_now() < until)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	if (sleeping) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
}

__attribute__((noinline)) void c32_level2(void)
{
	c32_leaf();
	sink++;
}

__attribute__((noinline)) void c32_level1(void)
{
	c32_level2();
	sink++;
}

int main(int argc, char **argv)
{
	double end = c32_now() + (argc > 1 ? atof(argv[1]) : 10);

	sleeping = argc > 2 && strcmp(argv[2], "sleep") == 0;
	while (c32_now() < end)
		c32_level1();
	return 0;
}
